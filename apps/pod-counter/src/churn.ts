import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '@kubeloop/builder';
import { type ApiClient, isAlreadyExists, isNotFound, Namespace, Pod } from '@kubeloop/client';

/** Options of {@link startChurn}. */
export interface ChurnOptions {
  readonly namespaces: readonly string[];
  /** Pods created per namespace before the churn starts. @defaultValue 3 */
  readonly initialPerNamespace?: number;
  /** Time between two changes, in ms. @defaultValue 700 */
  readonly intervalMs?: number;
  readonly logger: Logger;
  readonly random?: () => number;
}

function podManifest(namespace: string, name: string) {
  return {
    metadata: { namespace, name, labels: { app: 'pod-counter-demo' } },
    spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
  };
}

/**
 * Fills the embedded API server with pods in a few namespaces, then keeps creating and deleting pods so
 * the count visibly follows. Each step deletes with probability n / (n + initialPerNamespace) for a
 * namespace holding n demo pods, else creates one, so the count wanders around its start instead of climbing.
 * Returns a function that stops the churn (and waits for the last change).
 */
export async function startChurn(client: ApiClient, options: ChurnOptions): Promise<() => Promise<void>> {
  const random = options.random ?? Math.random;
  const log = options.logger;
  const live: string[][] = options.namespaces.map(() => []);
  const perNamespace = options.initialPerNamespace ?? 3;
  let seq = 0;
  for (const ns of options.namespaces) {
    try {
      await client.create(Namespace, { metadata: { name: ns } });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
  }
  for (const [i, ns] of options.namespaces.entries()) {
    for (let k = 0; k < perNamespace; k++) {
      const name = `demo-${++seq}`;
      await client.create(Pod, podManifest(ns, name));
      live[i]!.push(name);
    }
  }
  log.info({ pods: seq, namespaces: options.namespaces.length }, 'demo pods created');
  const ac = new AbortController();
  const loop = (async () => {
    while (!ac.signal.aborted) {
      // Abortable sleep: its listener on the signal goes away with the timer.
      await sleep(options.intervalMs ?? 700, undefined, { signal: ac.signal }).catch(() => undefined);
      if (ac.signal.aborted) break;
      const i = Math.floor(random() * options.namespaces.length);
      const ns = options.namespaces[i]!;
      const names = live[i]!;
      try {
        if (random() < names.length / (names.length + perNamespace)) {
          const [name] = names.splice(Math.floor(random() * names.length), 1);
          await client.delete(Pod, { namespace: ns, name: name! });
          log.info({ namespace: ns, pod: name }, 'demo pod deleted');
        } else {
          const name = `demo-${++seq}`;
          await client.create(Pod, podManifest(ns, name));
          names.push(name);
          log.info({ namespace: ns, pod: name }, 'demo pod created');
        }
      } catch (err) {
        if (!isNotFound(err) && !ac.signal.aborted) {
          log.warn({ err: err instanceof Error ? err.message : String(err) }, 'demo churn step failed');
        }
      }
    }
  })();
  return async () => {
    ac.abort();
    await loop;
  };
}

/** What the settle phase of a chaos run compares: the server's objects, the manager's cache and the probe's observations. */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Manager } from '@kubeloop/builder';
import type { ApiClient, DeepReadonly, KubeObject } from '@kubeloop/client';
import type { ReconcileProbe } from './probe.js';
import type { TrafficGenerator } from './traffic.js';

export async function measure(
  manager: Manager,
  client: ApiClient,
  traffic: TrafficGenerator,
  namespace: string,
  probe: ReconcileProbe,
): Promise<{ lost: string[]; divergent: string[] }> {
  const server = new Map<string, string>();
  for (const o of (await client.list(traffic.kind, { namespace })).items)
    server.set(keyOf(o), o.metadata?.resourceVersion ?? '');
  const cache = await cachedKeys(manager, traffic, namespace);
  const divergent: string[] = [];
  for (const [k, rv] of server) if (cache.get(k) !== rv) divergent.push(k);
  for (const k of cache.keys()) if (!server.has(k)) divergent.push(k);
  const lost: string[] = [];
  for (const [k, rv] of server) if (!probe.observations(k)?.seen.has(rv)) lost.push(k);
  // A deleted object the controller had seen must have been reconciled as gone.
  for (const k of probe.knownKeys()) {
    if (server.has(k)) continue;
    const o = probe.observations(k);
    if (o !== undefined && o.seen.size > 0 && !o.lastWasGone) lost.push(k);
  }
  return { lost, divergent };
}

export async function cachedKeys(
  manager: Manager,
  traffic: TrafficGenerator,
  namespace: string,
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const o of (await manager.getClient().list(traffic.kind, { namespace })).items)
    out.set(keyOf(o), o.metadata?.resourceVersion ?? '');
  return out;
}

function keyOf(o: DeepReadonly<KubeObject>): string {
  return `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
}

export async function waitUntil(cond: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await cond()) return;
    } catch {
      // not ready yet (e.g. the cache is still syncing)
    }
    if (Date.now() > deadline)
      throw new Error(`chaos: the manager's cache did not sync within ${timeoutMs} ms`);
    await sleep(50);
  }
}

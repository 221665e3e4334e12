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

/**
 * Measures every 100 ms until nothing is lost or divergent, at most `settleMs` **milliseconds**. A measurement
 * that fails (a real server still recovering from its last restart, a list of many objects slower than the
 * client's timeout on a loaded box) is tried again within the window rather than ending the run.
 * @returns the last measurement and when it first came out clean (-1: not within the window).
 * @throws the last measurement error when no measurement succeeded within the window.
 */
export async function settle(
  manager: Manager,
  client: ApiClient,
  traffic: TrafficGenerator,
  namespace: string,
  probe: ReconcileProbe,
  settleMs: number,
): Promise<{ check: { lost: string[]; divergent: string[] }; settledAfterMs: number }> {
  const start = Date.now();
  let check: { lost: string[]; divergent: string[] } | undefined;
  let lastError: unknown;
  for (;;) {
    try {
      check = await measure(manager, client, traffic, namespace, probe);
      if (check.lost.length === 0 && check.divergent.length === 0)
        return { check, settledAfterMs: Date.now() - start };
    } catch (err) {
      lastError = err;
    }
    if (Date.now() - start >= settleMs) break;
    await sleep(100);
  }
  if (!check) throw lastError;
  return { check, settledAfterMs: -1 };
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

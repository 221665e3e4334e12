/** What the settle phase of a chaos run compares: the server's objects, the managers' caches and the probe's observations. */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Manager, Sharding } from '@kubeloop/builder';
import type { ApiClient, CacheReader, DeepReadonly, Kind, KubeObject } from '@kubeloop/client';
import { probeKey, type ReconcileProbe } from './probe.js';
import type { TrafficGenerator } from './traffic.js';

/**
 * The lost and divergent keys of one cluster: `caches` are the caches of that cluster (one per replica),
 * `client` reads the server's truth, `cluster` is the probe's key prefix (undefined for a single-cluster run).
 * Keys are the probe's keys (`[cluster/]namespace/name`).
 */
export async function measure(
  caches: readonly CacheReader[],
  client: ApiClient,
  kind: Kind,
  namespace: string,
  probe: ReconcileProbe,
  cluster?: string,
): Promise<{ lost: string[]; divergent: string[] }> {
  const server = new Map<string, string>();
  for (const o of (await client.list(kind, { namespace })).items)
    server.set(keyOf(o, cluster), o.metadata?.resourceVersion ?? '');
  const divergent: string[] = [];
  for (const c of caches) {
    const cache = await cachedKeys(c, kind, namespace, cluster);
    for (const [k, rv] of server) if (cache.get(k) !== rv) divergent.push(k);
    for (const k of cache.keys()) if (!server.has(k)) divergent.push(k);
  }
  const lost: string[] = [];
  for (const [k, rv] of server) if (!probe.observations(k)?.seen.has(rv)) lost.push(k);
  // A deleted object the controller had seen must have been reconciled as gone.
  for (const k of probe.knownKeys()) {
    if (server.has(k) || (cluster ? !k.startsWith(`${cluster}/`) : probeKeyHasCluster(k))) continue;
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
      check = await measure([manager.getClient()], client, traffic.kind, namespace, probe);
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

/** The cached objects of `kind` in `namespace`: probe key → resourceVersion. */
export async function cachedKeys(
  cache: CacheReader,
  kind: Kind,
  namespace: string,
  cluster?: string,
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const o of (await cache.list(kind, { namespace })).items)
    out.set(keyOf(o, cluster), o.metadata?.resourceVersion ?? '');
  return out;
}

function keyOf(o: DeepReadonly<KubeObject>, cluster: string | undefined): string {
  return probeKey({ cluster, namespace: o.metadata?.namespace ?? '', name: o.metadata?.name ?? '' });
}

/** Whether a probe key names a cluster (`cluster/namespace/name` has two slashes). */
function probeKeyHasCluster(k: string): boolean {
  return k.indexOf('/') !== k.lastIndexOf('/');
}

/** Polls `cond` every 50 ms until it holds. @throws Error after `timeoutMs` **milliseconds**. */
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

/**
 * Why a key may be lost, for the failure message: what the probe saw and, with sharding, each replica's
 * view of the key (owner under its view, permitted to start, fenced).
 */
export function explainLost(
  key: string,
  probe: ReconcileProbe,
  replicas: ReadonlyArray<{ readonly replica: number; readonly sharding: Sharding | undefined }>,
): string {
  const [cluster = '', namespace = '', name = ''] = key.split('/');
  const o = probe.observations(key);
  const seen = o
    ? `seen ${o.seen.size} versions, ${o.reconciles} reconciles, last gone ${o.lastWasGone}`
    : 'never reconciled';
  const views = replicas.flatMap((e) => {
    const s = e.sharding;
    if (!s) return [];
    const req = { cluster, namespace, name };
    return [
      `replica-${e.replica}: owns ${s.owns(req)} permitted ${s.state.permitted(s.shardKey(req))} fenced ${s.state.fenced} view ${s.state.view.length}`,
    ];
  });
  return [seen, ...views].join('; ');
}

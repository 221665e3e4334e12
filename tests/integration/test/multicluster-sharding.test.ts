// Sharded multi-cluster: 3 replicas × 4 member clusters, ownership by (cluster, key) over member Leases in the
// management cluster. One replica is stopped, then another is partitioned (every request of it fails, on every
// server): no (cluster, key) is ever reconciled by two replicas at once, and every last change is reconciled.
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ConfigMap,
  type MultiClusterManager,
  newMetricsRegistry,
  newMultiClusterControllerManagedBy,
  newMultiClusterManager,
  newSharding,
  type RestConfig,
  StaticProvider,
} from '@kubeloop/builder';
import { describe, expect, it } from 'vitest';
import { useClusters } from './support/clusters.js';
import { realCluster } from './support/fault-server.js';
import { replicaTokens, tokenOf } from './support/leader-election.js';
import { waitFor } from './support.js';

const MEMBERS = ['m1', 'm2', 'm3', 'm4'] as const;
const PER_CLUSTER = 25;
const REPLICAS = ['a', 'b', 'c'] as const;
const TIMINGS = { leaseDurationMs: 4000, renewDeadlineMs: 3000, retryPeriodMs: 500, drainTimeoutMs: 1000 };
const WAIT_MS = 60_000;

interface Run {
  readonly replica: string;
  readonly key: string;
  readonly start: number;
  end: number | undefined;
}

describe.skipIf(realCluster)('multi-cluster sharding across replicas (fault injection; envtest only)', () => {
  const fleet = useClusters(['mgmt', ...MEMBERS], { tokens: replicaTokens(...REPLICAS) });
  const { clusters } = fleet;

  it('3 replicas × 4 clusters, one stopped then one partitioned: 0 overlapping reconciles of a (cluster, key), every last change reconciled', async () => {
    const ns = 'mc-shard';
    await fleet.namespaceEverywhere(ns);
    const latest = new Map<string, string>();
    const keyOf = (cluster: string, name: string) => `${cluster}/${ns}/${name}`;
    for (const m of MEMBERS) {
      await Promise.all(
        Array.from({ length: PER_CLUSTER }, (_, i) =>
          clusters[m]!.api.create(ConfigMap, {
            metadata: { namespace: ns, name: `k${i}` },
            data: { v: '0' },
          }),
        ),
      );
      for (let i = 0; i < PER_CLUSTER; i++) latest.set(keyOf(m, `k${i}`), '0');
    }
    const configAs = (server: string, replica: string): RestConfig => ({
      ...clusters[server]!.config,
      bearerToken: tokenOf(replica),
      timeoutMs: 5000,
      userAgent: `replica-${replica}`,
    });

    const runs: Run[] = [];
    const seen = new Set<string>();
    const replicas = new Map<
      string,
      { mgr: MultiClusterManager; stop: AbortController; done: Promise<unknown> }
    >();
    for (const id of REPLICAS) {
      const provider = new StaticProvider(Object.fromEntries(MEMBERS.map((m) => [m, configAs(m, id)])), {
        clusterOptions: { cache: { defaultNamespaces: [ns] } },
      });
      const mgr = newMultiClusterManager(configAs('mgmt', id), {
        provider,
        gracefulShutdownTimeoutMs: 5000,
        metrics: { registry: newMetricsRegistry() },
      });
      const sharding = newSharding(mgr, {
        name: 'fleet',
        namespace: ns,
        identity: `replica-${id}`,
        ...TIMINGS,
      });
      newMultiClusterControllerManagedBy(mgr)
        .for(ConfigMap)
        .withSharding(sharding)
        .withOptions({ maxConcurrentReconciles: 4 })
        .complete({
          async reconcile(ctx, req) {
            const key = keyOf(req.cluster ?? '', req.name);
            const run: Run = { replica: id, key, start: performance.now(), end: undefined };
            runs.push(run);
            try {
              const cm = await mgr
                .getCluster(req.cluster)
                .getClient()
                .get(ConfigMap, req, { signal: ctx.signal });
              await sleep(10 + Math.floor(Math.random() * 40), undefined, { signal: ctx.signal }).catch(
                () => {},
              );
              seen.add(`${key}=${cm.data?.v}`);
            } finally {
              run.end = performance.now();
            }
            return { requeueAfterMs: 1500 + Math.floor(Math.random() * 1000) };
          },
        });
      const stop = new AbortController();
      replicas.set(id, { mgr, stop, done: mgr.start(stop.signal).catch((err: unknown) => err) });
    }
    fleet.cleanups.push(async () => {
      for (const r of replicas.values()) r.stop.abort();
      await Promise.all([...replicas.values()].map((r) => r.done));
    });

    let churn = true;
    let n = 0;
    const churner = (async () => {
      while (churn) {
        const m = MEMBERS[n % MEMBERS.length]!;
        const name = `k${Math.floor(Math.random() * PER_CLUSTER)}`;
        const v = String(++n);
        try {
          await clusters[m]!.api.patch(
            ConfigMap,
            { namespace: ns, name },
            { type: 'merge', data: { data: { v } } },
          );
          latest.set(keyOf(m, name), v);
        } catch {
          // a failed write changes nothing
        }
        await sleep(50);
      }
    })();
    const allLatestSeen = () => [...latest].every(([k, v]) => seen.has(`${k}=${v}`));
    // Every key's current value reconciled (churn paused for the check).
    const settle = async (what: string) => {
      churn = false;
      await churner;
      await waitFor(allLatestSeen, what, WAIT_MS);
    };

    const owners = (since: number) => new Set(runs.filter((r) => r.start >= since).map((r) => r.replica));
    // Wait for every replica to have joined and reconciled, not only for every key: on a loaded machine a
    // replica that starts late finds a and b already through every key, and "every key once" holds without it.
    await waitFor(
      () => [...latest.keys()].every((k) => runs.some((r) => r.key === k)) && owners(0).size === 3,
      () =>
        `every key reconciled once and by all three replicas (so far: ${[...owners(0)].sort().join(', ')})`,
      WAIT_MS,
    );
    expect([...owners(0)].sort()).toEqual(['a', 'b', 'c']);

    // Stop c gracefully: its Lease is released, a and b take its keys over.
    const tStop = performance.now();
    replicas.get('c')!.stop.abort();
    await replicas.get('c')!.done;
    const stoppedKeys = new Set(runs.filter((r) => r.replica === 'c').map((r) => r.key));
    await waitFor(
      () =>
        [...stoppedKeys].every((k) => runs.some((r) => r.key === k && r.replica !== 'c' && r.start > tStop)),
      "c's keys taken over",
      WAIT_MS,
    );
    const stopRebalanceMs = performance.now() - tStop;

    // Partition b: every request of it fails on every server, until healed.
    const tPart = performance.now();
    const faults = Object.values(clusters).map((c) =>
      c.server.faults.failRequests({ match: { token: tokenOf('b') }, status: 503 }),
    );
    const bKeys = new Set(runs.filter((r) => r.replica === 'b').map((r) => r.key));
    await waitFor(
      () => [...bKeys].every((k) => runs.some((r) => r.key === k && r.replica === 'a' && r.start > tPart)),
      "b's keys taken over by a",
      WAIT_MS,
    );
    const partitionRebalanceMs = performance.now() - tPart;
    for (const f of faults) f.clear();

    await settle('every last change reconciled');

    // No (cluster, key) reconciled by two replicas at once.
    let overlaps = 0;
    const byKey = new Map<string, Run[]>();
    for (const r of runs) byKey.set(r.key, [...(byKey.get(r.key) ?? []), r]);
    for (const list of byKey.values()) {
      list.sort((x, y) => x.start - y.start);
      for (let i = 1; i < list.length; i++) {
        const prev = list[i - 1]!;
        if (prev.end === undefined || prev.end > list[i]!.start) overlaps++;
      }
    }
    console.log(
      `multi-cluster sharding: ${REPLICAS.length} replicas × ${MEMBERS.length} clusters × ${PER_CLUSTER} keys, ${runs.length} reconciles, ${n} changes; ` +
        `rebalance after stop ${stopRebalanceMs.toFixed(0)} ms, after partition ${partitionRebalanceMs.toFixed(0)} ms ` +
        `(lease ${TIMINGS.leaseDurationMs} ms); overlapping reconciles ${overlaps}`,
    );
    expect(overlaps).toBe(0);
    expect(allLatestSeen()).toBe(true);
  }, 240_000);
});

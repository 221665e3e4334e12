// The chaos suite: a controller over ConfigMaps under random traffic and a seeded fault schedule. The
// `ci` profile runs in `npm test`; `npm run test:chaos -- --seed N [--profile ci|short|long]` replays a seed or runs
// a longer profile; `-- --target real --assets <dir>` runs it against a real kube-apiserver + etcd (CHAOS_TARGET,
// CHAOS_ASSETS) with process and network faults.

import type { Logger, ReconcileContext, Request } from '@kubeloop/builder';
import { newControllerManagedBy, newMultiClusterControllerManagedBy } from '@kubeloop/builder';
import {
  type CachedClient,
  ConfigMap,
  deepCopy,
  isAlreadyExists,
  isNotFound,
  type Kind,
  type KubeObject,
  Secret,
} from '@kubeloop/client';
import { describe, expect, it } from 'vitest';
import {
  type ChaosOptions,
  chaosPassed,
  formatChaosReport,
  type MultiClusterChaosOptions,
  REAL_FAULT_KINDS,
  runChaos,
  runMultiClusterChaos,
} from '../src/index.js';

/**
 * Profiles: `ci` (what `npm test` runs: 10 s of faults, about 25 of them, every few hundred ms), `short` (25 s
 * of faults, about a minute on a 2-core box) and `long` (10,000 objects, 10 minutes of faults); the last two by
 * `npm run test:chaos -- --profile short|long`.
 */
const PROFILES: Record<
  string,
  Pick<ChaosOptions, 'objects' | 'durationMs' | 'faultGapMs' | 'writesPerSecond' | 'settleMs'>
> = {
  ci: { objects: 150, durationMs: 10_000, faultGapMs: 400, writesPerSecond: 40, settleMs: 40_000 },
  short: { objects: 300, durationMs: 25_000, faultGapMs: 700, writesPerSecond: 40, settleMs: 40_000 },
  long: { objects: 10_000, durationMs: 600_000, faultGapMs: 1000, writesPerSecond: 100, settleMs: 40_000 },
  // Read-your-own-writes: only delayed watch events (every ~150 ms, 50-1000 ms each), and a controller that
  // writes (see below); run twice, with the manager cache's readYourWrites off and on.
  ryow: { objects: 100, durationMs: 15_000, faultGapMs: 150, writesPerSecond: 20, settleMs: 40_000 },
  // Multi-cluster (runMultiClusterChaos): the sizes below are per member cluster; see MULTICLUSTER.
  multicluster: { objects: 100, durationMs: 30_000, faultGapMs: 1000, writesPerSecond: 10, settleMs: 40_000 },
};

/**
 * Multi-cluster shapes: the `multicluster` profile (4 member clusters, 3 replicas sharding (cluster, key); its sizes
 * above are per cluster) and the small run `npm test` makes beside the `ci` profile (2 clusters × 40 objects,
 * 2 replicas, 6 s of faults).
 */
const MULTICLUSTER: Record<string, Pick<MultiClusterChaosOptions, 'clusters' | 'replicas'>> = {
  multicluster: { clusters: 4, replicas: 3 },
  ci: { clusters: 2, replicas: 2 },
};
const MULTICLUSTER_CI_SIZES = {
  objects: 40,
  durationMs: 6000,
  faultGapMs: 500,
  writesPerSecond: 15,
  settleMs: 40_000,
};

const profileName = process.env.CHAOS_PROFILE ?? 'ci';
const profile = PROFILES[profileName];
const seed = process.env.CHAOS_SEED !== undefined ? Number(process.env.CHAOS_SEED) : undefined;
// CHAOS_SETTLE_MS lengthens the settle window, to see how long a failing run takes to recover; CHAOS_OBJECTS and
// CHAOS_DURATION_MS size a run to the box.
if (profile && process.env.CHAOS_SETTLE_MS) profile.settleMs = Number(process.env.CHAOS_SETTLE_MS);
if (profile && process.env.CHAOS_OBJECTS) profile.objects = Number(process.env.CHAOS_OBJECTS);
if (profile && process.env.CHAOS_DURATION_MS) profile.durationMs = Number(process.env.CHAOS_DURATION_MS);
const real = process.env.CHAOS_TARGET === 'real';
// A real control plane's faults take seconds each (a restart waits for /healthz): at most one every 2.5 s on average.
if (profile && real) profile.faultGapMs = Math.max(profile.faultGapMs ?? 0, 2500);

describe.skipIf(profileName === 'ryow' || profileName === 'multicluster')('chaos', () => {
  it(`${profileName} profile: no lost change, cache equals server once the reflector's backoff allows (≤ 40 s), no concurrent reconcile of a key, no unhandled rejection`, {
    timeout: (profile?.durationMs ?? 0) + (real ? 900_000 : 120_000),
  }, async () => {
    expect(profile, `unknown CHAOS_PROFILE ${profileName}`).toBeDefined();
    const report = await runChaos({
      ...profile,
      ...(seed !== undefined ? { seed } : {}),
      ...(real
        ? {
            // a loaded box can take minutes to start kube-apiserver (or to bring it back after a restart)
            realControlPlane: { assetsDir: String(process.env.CHAOS_ASSETS), startTimeoutMs: 300_000 },
            faults: REAL_FAULT_KINDS,
          }
        : {}),
      setup(env) {
        const client = env.manager.getClient();
        newControllerManagedBy(env.manager)
          .for(env.traffic.kind)
          .named('chaos-configmaps')
          .withOptions({ maxConcurrentReconciles: 4 })
          .complete(
            env.probe.wrap(env.traffic.kind, client, {
              async reconcile() {
                // A read-only reconciler: what is checked is what it was shown (recorded by the probe).
                return undefined;
              },
            }),
          );
      },
      log: (line) => console.log(line),
      // CHAOS_DEBUG=1 prints the manager's warnings and errors (why a run failed).
      ...(process.env.CHAOS_DEBUG ? { logger: debugLogger() } : {}),
    });
    console.log(formatChaosReport(report));
    expect(chaosPassed(report), formatChaosReport(report)).toBe(true);
    expect(report.lostChanges).toBe(0);
    expect(report.divergentCacheEntries).toBe(0);
    expect(report.concurrentReconciles).toBe(0);
    expect(report.unhandledRejections).toBe(0);
    // The run did exercise the faults and the controller.
    expect(Object.keys(report.faultsApplied).length).toBeGreaterThan(3);
    expect(report.reconciles).toBeGreaterThan(report.objects);
  });
});

describe.skipIf(MULTICLUSTER[profileName] === undefined || real)('chaos: multi-cluster', () => {
  const shape = MULTICLUSTER[profileName];
  const sizes = profileName === 'ci' ? MULTICLUSTER_CI_SIZES : profile;
  it(`${profileName === 'ci' ? 'small multi-cluster run' : 'multicluster profile'}: per-cluster faults, sharded replicas; 0 lost, 0 divergent, 0 concurrent reconciles of a (cluster, key) across all clusters and replicas`, {
    timeout: (sizes?.durationMs ?? 0) + 180_000,
  }, async () => {
    const report = await runMultiClusterChaos({
      ...sizes,
      ...shape,
      ...(seed !== undefined ? { seed } : {}),
      profile: profileName,
      setup(env) {
        const mgr = env.manager;
        const b = newMultiClusterControllerManagedBy(mgr)
          .for(env.kind)
          .named('chaos-fleet')
          .withOptions({ maxConcurrentReconciles: 4 });
        (env.sharding ? b.withSharding(env.sharding) : b).complete(
          env.probe.wrap(env.kind, (c) => mgr.getCluster(c).getClient(), {
            async reconcile() {
              // Read-only, as the single-cluster profile: what is checked is what each reconcile was shown.
              return undefined;
            },
          }),
        );
      },
      log: (line) => console.log(line),
      ...(process.env.CHAOS_DEBUG ? { logger: debugLogger() } : {}),
    });
    console.log(formatChaosReport(report));
    expect(chaosPassed(report), formatChaosReport(report)).toBe(true);
    expect(report.lostChanges).toBe(0);
    expect(report.divergentCacheEntries).toBe(0);
    expect(report.concurrentReconciles).toBe(0);
    // Every cluster was faulted and reconciled.
    for (const c of report.clusters) {
      expect(Object.keys(c.faultsApplied).length, c.name).toBeGreaterThan(0);
      expect(c.reconciles, c.name).toBeGreaterThan(report.objects / 2);
    }
  });
});

function debugLogger(bound: Record<string, unknown> = {}): Logger {
  const at = (level: string) => (fields: Record<string, unknown>, msg: string) => {
    if (level === 'warn' || level === 'error' || process.env.CHAOS_DEBUG === 'all')
      console.log(`${new Date().toISOString()} ${level} ${msg} ${JSON.stringify({ ...bound, ...fields })}`);
  };
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (b) => debugLogger({ ...bound, ...b }),
  };
}

/**
 * What the read-your-own-writes profile counts: reads of an object older than this controller's own last write
 * of it, the writes made on such reads (a stale update conflicts with 409; a stale "child missing" creates a
 * child this controller already created, AlreadyExists). envtest's resourceVersions are integers, so the test
 * (not the code under test) may order them.
 */
interface StaleFigures {
  staleReads: number;
  staleReadWrites: number;
  duplicateCreates: number;
  writes: number;
}

/**
 * A controller that writes, as controllers do: per parent ConfigMap it ensures a child Secret of the same name
 * (owned by the parent, so the child's events reconcile the parent too) and stamps the parent's
 * `observed` annotation with its `data.v`, then checks back 100 ms later. Reads go through the cache.
 */
function writingReconciler(client: CachedClient, figures: StaleFigures) {
  const lastWritten = new Map<string, number>();
  const created = new Set<string>();
  const getOrUndefined = async <T extends KubeObject>(kind: Kind<T>, req: Request) => {
    try {
      return await client.get(kind, req);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };
  return {
    async reconcile(_ctx: ReconcileContext, req: Request) {
      const key = `${req.namespace}/${req.name}`;
      const parent = await getOrUndefined(ConfigMap, req);
      if (!parent) return undefined;
      const rv = Number(parent.metadata?.resourceVersion);
      const stale = rv < (lastWritten.get(key) ?? 0);
      if (stale) figures.staleReads++;
      const child = await getOrUndefined(Secret, req);
      if (!child) {
        figures.writes++;
        try {
          await client.create(Secret, {
            metadata: {
              namespace: req.namespace,
              name: req.name,
              ownerReferences: [
                {
                  apiVersion: 'v1',
                  kind: 'ConfigMap',
                  name: req.name,
                  uid: parent.metadata?.uid ?? '',
                  controller: true,
                },
              ],
            },
            stringData: { of: req.name },
          });
          created.add(key);
        } catch (err) {
          if (isAlreadyExists(err) && created.has(key)) {
            figures.duplicateCreates++;
            figures.staleReadWrites++;
          }
          throw err;
        }
      }
      const want = parent.data?.v ?? '';
      if (parent.metadata?.annotations?.observed === want) return undefined;
      figures.writes++;
      if (stale) figures.staleReadWrites++;
      // A stale base conflicts (409): the controller requeues it with backoff.
      const base = deepCopy(parent);
      const out = await client.update(ConfigMap, {
        ...base,
        metadata: { ...base.metadata, annotations: { ...base.metadata.annotations, observed: want } },
      });
      lastWritten.set(key, Number(out.metadata?.resourceVersion));
      return { requeueAfterMs: 100 };
    },
  };
}

describe.skipIf(profileName !== 'ryow')('chaos: read-your-own-writes', () => {
  // One seed for both runs: the same schedule of delays and the same traffic, off and on.
  const runSeed = seed ?? Math.floor(Math.random() * 2 ** 31);
  for (const on of [false, true]) {
    it(`readYourWrites ${on ? 'on: 0 stale-read writes' : 'off: stale-read writes are counted'}; no lost change, cache equals server`, {
      timeout: (profile?.durationMs ?? 0) + 120_000,
    }, async () => {
      const figures: StaleFigures = { staleReads: 0, staleReadWrites: 0, duplicateCreates: 0, writes: 0 };
      let waits = '';
      const report = await runChaos({
        ...profile,
        seed: runSeed,
        faults: ['delayEvents'],
        manager: on ? { cache: { readYourWrites: { timeoutMs: 5000 } } } : {},
        setup(env) {
          const client = env.manager.getClient();
          newControllerManagedBy(env.manager)
            .for(env.traffic.kind)
            .owns(Secret)
            .named('chaos-ryow')
            .withOptions({ maxConcurrentReconciles: 4 })
            .complete(env.probe.wrap(env.traffic.kind, client, writingReconciler(client, figures)));
        },
        async invariant(env) {
          const text = await env.manager.getMetricsRegistry().metrics();
          waits = text
            .split('\n')
            .filter((l) => l.startsWith('kubeloop_cache_read_your_writes_waits_total{'))
            .join(' ');
          return [];
        },
        log: (line) => console.log(line),
        ...(process.env.CHAOS_DEBUG ? { logger: debugLogger() } : {}),
      });
      console.log(formatChaosReport(report));
      console.log(
        `ryow ${on ? 'on' : 'off'}: controller writes=${figures.writes} stale reads=${figures.staleReads} stale-read writes=${figures.staleReadWrites} (duplicate creates=${figures.duplicateCreates}) ${waits}`,
      );
      expect(chaosPassed(report), formatChaosReport(report)).toBe(true);
      expect(report.faultsApplied.delayEvents ?? 0).toBeGreaterThan(10);
      if (on) {
        expect(figures.staleReads).toBe(0);
        expect(figures.staleReadWrites).toBe(0);
      }
    });
  }
});

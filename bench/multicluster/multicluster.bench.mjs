// multicluster (replay servers): one process watching a fleet — a multi-cluster manager (@kubeloop/builder
// newMultiClusterManager + StaticProvider) with a no-op controller `for(Pod)` over MC_CLUSTERS member clusters of
// MC_OBJECTS pods each, side by side with one cluster holding all of them (MC_CLUSTERS × MC_OBJECTS pods) under a
// plain manager, and under a multi-cluster manager with that one member. Every cluster is its own replay server
// in the runner's parent (pre-encoded pods, so the figures are the client's). Measured per process: time from
// start until every cluster's cache synced and until every initial reconcile ran, each cluster's sync time
// (engage → its controller synced), retained heap after GC, heap used and RSS at the end, and peak RSS.
// Knobs: MC_CLUSTERS (20), MC_OBJECTS (1000), POD (realistic | small).
import {
  cpuMs,
  gc,
  knob,
  metricsOf,
  peakRss,
  quantile,
  ratio,
  retainedNow,
  round,
  SMOKE,
  waiter,
} from '../lib/common.mjs';

const CLUSTERS = knob('MC_CLUSTERS', 20, 2);
const OBJECTS = knob('MC_OBJECTS', 1000, 20);
const SHAPE = process.env.POD === 'small' ? 'small' : 'realistic';
const TOTAL = CLUSTERS * OBJECTS;
const SCENARIO = `${CLUSTERS} clusters × ${OBJECTS} ${SHAPE} pods vs 1 cluster × ${TOTAL}`;
const FLEET = `kubeloop-multicluster-${CLUSTERS}x${OBJECTS}`;
const ONE = `kubeloop-manager-1x${TOTAL}`;
const ONE_MC = `kubeloop-multicluster-1x${TOTAL}`;

/** One replay server per member cluster and one with every pod, all in the runner's parent. */
export async function setup() {
  const { startReplayServer } = await import('../lib/replay-server.mjs');
  const t0 = performance.now();
  const members = [];
  try {
    for (let i = 0; i < CLUSTERS; i++)
      members.push(await startReplayServer({ objects: OBJECTS, shape: SHAPE }));
    members.push(await startReplayServer({ objects: TOTAL, shape: SHAPE }));
  } catch (err) {
    for (const s of members) await s.close();
    throw err;
  }
  const big = members.pop();
  process.stderr.write(
    `multicluster: ${CLUSTERS} replay servers × ${OBJECTS} ${SHAPE} pods and one × ${TOTAL}, ready in ${Math.round(performance.now() - t0)} ms\n`,
  );
  return {
    env: {
      BENCH_MC_MEMBERS: members.map((s) => s.kubeconfigPath).join(','),
      BENCH_MC_BIG: big.kubeconfigPath,
    },
    teardown: async () => {
      for (const s of [...members, big]) await s.close();
    },
  };
}

async function configOf(kubeconfig) {
  const { loadRestConfig } = await import('@kubeloop/config');
  // no client-side limiter: the replay server answers as fast as the socket takes it
  return { ...loadRestConfig({ kubeconfig, env: {}, argv: [] }), qps: -1 };
}

/**
 * Runs `build` (which makes and starts a manager with a counting no-op controller) and measures until every
 * cluster synced and every pod was reconciled once. `syncedAt()` gives each cluster's sync time (ms since start)
 * once known.
 */
async function measureRun(build) {
  gc();
  const before = retainedNow();
  const cpu0 = cpuMs();
  const t0 = performance.now();
  let reconciles = 0;
  const all = waiter(() => reconciles >= TOTAL, 600_000, `${TOTAL} reconciles`);
  const reconciler = {
    async reconcile() {
      reconciles++;
      if (reconciles === TOTAL) all.poke();
    },
  };
  const run = await build(reconciler);
  // Each cluster's sync time, polled every 5 ms (the bench's resolution; the caches do not call back).
  const syncMs = new Map();
  const synced = waiter(() => syncMs.size >= run.clusters, 600_000, 'every cluster to sync');
  const poll = setInterval(() => {
    for (const name of run.syncedNow()) if (!syncMs.has(name)) syncMs.set(name, performance.now() - t0);
    synced.poke();
  }, 5);
  try {
    await synced.done;
  } finally {
    clearInterval(poll);
  }
  const tSynced = performance.now();
  const cpuSynced = cpuMs();
  await all.done;
  const tAll = performance.now();
  const peak = peakRss();
  if (!SMOKE) await new Promise((r) => setTimeout(r, 300));
  gc();
  const retained = retainedNow() - before;
  const mem = process.memoryUsage();
  await run.stop();
  const perCluster = [...syncMs.values()];
  return {
    opsPerSec: Math.round((TOTAL / (tSynced - t0)) * 1000),
    clusters: run.clusters,
    objectsPerCluster: TOTAL / run.clusters,
    timeToAllSyncedMs: round(tSynced - t0),
    timeToAllReconciledMs: round(tAll - t0),
    clusterSyncP50Ms: round(quantile(perCluster, 0.5)),
    clusterSyncMaxMs: round(Math.max(...perCluster)),
    cpuToSyncedMs: round(cpuSynced - cpu0),
    retainedBytes: retained,
    retainedBytesPerObject: Math.round(retained / TOTAL),
    heapUsedBytes: mem.heapUsed,
    rssBytes: mem.rss,
    peakRssBytes: peak,
  };
}

/** A multi-cluster manager over `kubeconfigs` (member-1 … member-N); its own cluster is the first member's server. */
async function multiCluster(kubeconfigs, reconciler) {
  const { Pod } = await import('@kubeloop/client');
  const { newMultiClusterManager, newMultiClusterControllerManagedBy, newMetricsRegistry, StaticProvider } =
    await import('@kubeloop/builder');
  const configs = await Promise.all(kubeconfigs.map(configOf));
  // The replay server keeps watches open: a member's connections are destroyed 0.5 s into the stop (not measured).
  const provider = new StaticProvider(Object.fromEntries(configs.map((c, i) => [`member-${i + 1}`, c])), {
    clusterOptions: { closeTimeoutMs: 500 },
  });
  // The management cluster: nothing is watched there (no controller engages it), only its Lease-free manager.
  const mgr = newMultiClusterManager(configs[0], { provider, metrics: { registry: newMetricsRegistry() } });
  const ctrl = newMultiClusterControllerManagedBy(mgr)
    .for(Pod)
    .named('bench-fleet')
    .withOptions({ maxConcurrentReconciles: 1, needLeaderElection: false })
    .complete(reconciler);
  return started(mgr, configs.length, () => ctrl.status().flatMap((s) => (s.synced ? [s.cluster] : [])));
}

/** Starts `mgr`; what `measureRun` reads of it: how many clusters, which have synced, and how to stop it. */
function started(mgr, clusters, syncedNow) {
  const ac = new AbortController();
  const running = mgr.start(ac.signal);
  running.catch((err) => process.stderr.write(`manager: ${err}\n`));
  return {
    clusters,
    syncedNow,
    stop: async () => {
      ac.abort();
      await running.catch(() => {});
    },
  };
}

export function tasks() {
  const members = () => (process.env.BENCH_MC_MEMBERS ?? '').split(',').filter(Boolean);
  const big = () => process.env.BENCH_MC_BIG ?? '';
  return [
    {
      scenario: SCENARIO,
      impl: FLEET,
      measure: () => measureRun((r) => multiCluster(members(), r)),
    },
    {
      scenario: SCENARIO,
      impl: ONE_MC,
      measure: () => measureRun((r) => multiCluster([big()], r)),
    },
    {
      scenario: SCENARIO,
      impl: ONE,
      measure: () =>
        measureRun(async (reconciler) => {
          const { Pod } = await import('@kubeloop/client');
          const { newManager, newControllerManagedBy, newMetricsRegistry } = await import(
            '@kubeloop/builder'
          );
          const mgr = newManager(await configOf(big()), { metrics: { registry: newMetricsRegistry() } });
          const ctrl = newControllerManagedBy(mgr)
            .for(Pod)
            .named('bench-one')
            .withOptions({ maxConcurrentReconciles: 1, needLeaderElection: false })
            .complete(reconciler);
          return started(mgr, 1, () => (ctrl.hasSynced() ? [''] : []));
        }),
    },
  ];
}

export function summary(results) {
  const fleet = metricsOf(results, SCENARIO, FLEET);
  const one = metricsOf(results, SCENARIO, ONE);
  if (!fleet || !one) return [];
  return [
    {
      scenario: SCENARIO,
      impl: `${FLEET} vs ${ONE}`,
      ratio: ratio(fleet.timeToAllSyncedMs, one.timeToAllSyncedMs),
      ratioOf: 'time until every cache synced ÷ one cluster of the same pods',
      ratios: {
        timeToAllReconciledMs: ratio(fleet.timeToAllReconciledMs, one.timeToAllReconciledMs),
        cpuToSyncedMs: ratio(fleet.cpuToSyncedMs, one.cpuToSyncedMs),
        retainedBytes: ratio(fleet.retainedBytes, one.retainedBytes),
        peakRssBytes: ratio(fleet.peakRssBytes, one.peakRssBytes),
      },
    },
  ];
}

// e2e-reconcile (replay server): a PodCounter-like controller (@kubeloop/builder: manager, cache-backed client,
// one controller for Pods, 2 workers) over N pods; once it is synced and its initial reconciles are done, the
// server sends RATE changes/s for SECONDS s, each stamped with its send time. Latency = reconcile start (the
// reconciler reads the pod from the cache) − the server's send time; p50/p99 against the raw watch's delivery
// latency of the same stream (undici → split lines → JSON.parse; latency taken right after the parse).
// Knobs: E2E_OBJECTS (10000), E2E_RATE (500), E2E_SECONDS (10).
import {
  INFORMERS,
  knob,
  metricsOf,
  nowMs,
  quantile,
  RAW,
  ratio,
  replayEnv,
  replaySetup,
  round,
  SMOKE,
  waiter,
} from '../lib/common.mjs';

const OBJECTS = knob('E2E_OBJECTS', 10_000, 200);
const RATE = knob('E2E_RATE', 500, 200);
const SECONDS = knob('E2E_SECONDS', 10, 1);
// the smoke run sends 40 changes (0.2 s)
const EVENTS = SMOKE ? 40 : RATE * SECONDS;
// the first change comes this long after the watch opens, so the initial reconciles are over by then
const DELAY_MS = SMOKE ? 100 : 4000;
const SCENARIO = `e2e-reconcile ${OBJECTS} pods, ${RATE} changes/s for ${SECONDS} s`;
const STAMP = 'bench/sent-at';

export const setup = () =>
  replaySetup({
    objects: OBJECTS,
    watchEvents: EVENTS,
    watchRate: RATE,
    stampEvents: true,
    watchDelayMs: DELAY_MS,
  });

const latencyMetrics = (lat, seen) => ({
  opsPerSec: Math.max(1, Math.round(seen / SECONDS)),
  events: EVENTS,
  latencySamples: lat.length,
  p50Ms: round(quantile(lat, 0.5), 2),
  p99Ms: round(quantile(lat, 0.99), 2),
  maxMs: round(quantile(lat, 1), 2),
});

function rawTask() {
  return {
    scenario: SCENARIO,
    impl: `${RAW}-watch-delivery`,
    measure: async () => {
      const { kubeconfig } = replayEnv();
      const informer = await INFORMERS[RAW](kubeconfig);
      const lat = [];
      const all = waiter(() => lat.length >= EVENTS, 120_000 + SECONDS * 2000, `${EVENTS} changes`);
      await informer.start(
        () => {},
        (o) => {
          lat.push(nowMs() - Number(o.metadata.annotations[STAMP]));
          if (lat.length === EVENTS) all.poke();
        },
      );
      await all.done;
      await informer.stop();
      return latencyMetrics(lat, lat.length);
    },
  };
}

function kubeloopTask() {
  return {
    scenario: SCENARIO,
    impl: 'kubeloop-controller',
    measure: async () => {
      const { kubeconfig } = replayEnv();
      const { loadRestConfig } = await import('@kubeloop/config');
      const { Pod } = await import('@kubeloop/client');
      const { newManager, newControllerManagedBy } = await import('@kubeloop/builder');
      const config = { ...loadRestConfig({ kubeconfig, env: {}, argv: [] }), qps: -1 };
      const mgr = newManager(config);
      const client = mgr.getClient();
      const lat = [];
      let reconciles = 0;
      const seenRv = new Set();
      const all = waiter(() => lat.length >= EVENTS, 120_000 + SECONDS * 2000, `${EVENTS} reconciles`);
      newControllerManagedBy(mgr)
        .for(Pod)
        .named('bench-pod-counter')
        .withOptions({ maxConcurrentReconciles: 2 })
        .complete({
          async reconcile(_ctx, req) {
            const start = nowMs();
            reconciles++;
            const pod = await client.get(Pod, req);
            const sent = pod.metadata?.annotations?.[STAMP];
            const rv = pod.metadata?.resourceVersion;
            if (sent && !seenRv.has(rv)) {
              seenRv.add(rv);
              lat.push(start - Number(sent));
              if (lat.length === EVENTS) all.poke();
            }
          },
        });
      const ac = new AbortController();
      const running = mgr.start(ac.signal);
      running.catch((err) => process.stderr.write(`manager: ${err}\n`));
      await all.done;
      ac.abort();
      await running.catch(() => {});
      return { ...latencyMetrics(lat, lat.length), reconciles };
    },
  };
}

export const tasks = () => [rawTask(), kubeloopTask()];

export function summary(results) {
  const raw = metricsOf(results, SCENARIO, `${RAW}-watch-delivery`);
  const k = metricsOf(results, SCENARIO, 'kubeloop-controller');
  return [
    {
      scenario: SCENARIO,
      impl: `kubeloop-controller vs ${RAW}-watch-delivery`,
      ratio: ratio(k?.p99Ms, raw?.p99Ms),
      ratioOf: 'p99 write→reconcile start ÷ p99 raw watch delivery (target ≤ 2)',
      ratios: { p50Ms: ratio(k?.p50Ms, raw?.p50Ms) },
    },
  ];
}

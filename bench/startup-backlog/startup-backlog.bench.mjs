// startup-backlog (replay server): a controller (@kubeloop/builder, 1 worker, each reconcile busy for
// RECONCILE_US µs after yielding once to the event loop, like a reconcile waiting for I/O) starts over N pods, so its queue begins with N requests from the initial list; from the
// moment its watch opens the server sends a live change every 10 ms, stamped with its send time. Measured: the
// latency of the live changes (reconcile start − send time), p50/p99, with the priority queue (initial-list
// requests at LOW_PRIORITY, live changes first — controller-runtime's default) vs the plain FIFO queue.
// Knobs: BACKLOG_OBJECTS (10000), LIVE_SECONDS (5), RECONCILE_US (500).
import {
  knob,
  metricsOf,
  nowMs,
  quantile,
  ratio,
  replayEnv,
  replaySetup,
  round,
  SMOKE,
  waiter,
} from '../lib/common.mjs';

const OBJECTS = knob('BACKLOG_OBJECTS', 10_000, 100);
const LIVE_SECONDS = knob('LIVE_SECONDS', 5, 1);
const RECONCILE_US = knob('RECONCILE_US', 500, 1000);
const RATE = 100; // one live change every 10 ms
const LIVE = SMOKE ? 20 : RATE * LIVE_SECONDS;
const SCENARIO = `startup-backlog ${OBJECTS} pods + a live change every 10 ms for ${LIVE_SECONDS} s`;
const STAMP = 'bench/sent-at';

export const setup = () =>
  replaySetup({ objects: OBJECTS, watchEvents: LIVE, watchRate: RATE, stampEvents: true, shape: 'small' });

function busy(us) {
  const end = performance.now() + us / 1000;
  while (performance.now() < end) {
    // a reconcile's CPU work
  }
}

function task(impl, usePriorityQueue) {
  return {
    scenario: SCENARIO,
    impl,
    measure: async () => {
      const { kubeconfig } = replayEnv();
      const { loadRestConfig } = await import('@kubeloop/config');
      const { Pod } = await import('@kubeloop/client');
      const { newManager, newControllerManagedBy } = await import('@kubeloop/builder');
      const mgr = newManager({ ...loadRestConfig({ kubeconfig, env: {}, argv: [] }), qps: -1 });
      const client = mgr.getClient();
      const lat = [];
      const seen = new Set();
      let reconciles = 0;
      let backlogDoneAt = 0;
      const all = waiter(() => lat.length >= LIVE, 300_000, `${LIVE} live changes`);
      newControllerManagedBy(mgr)
        .for(Pod)
        .named('bench-backlog')
        .withOptions({ maxConcurrentReconciles: 1, usePriorityQueue })
        .complete({
          async reconcile(_ctx, req) {
            const start = nowMs();
            reconciles++;
            const pod = await client.get(Pod, req);
            const sent = pod.metadata?.annotations?.[STAMP];
            if (sent && !seen.has(pod.metadata.resourceVersion)) {
              seen.add(pod.metadata.resourceVersion);
              lat.push(start - Number(sent));
              if (lat.length === LIVE) all.poke();
            }
            if (reconciles === OBJECTS) backlogDoneAt = performance.now();
            // a real reconcile waits for I/O at least once: yield to the event loop, so the watch (and the live
            // changes) are read while the backlog drains — without it the worker chain runs as microtasks only
            // and starves the socket until the backlog is gone
            await new Promise((resolve) => setImmediate(resolve));
            busy(RECONCILE_US);
          },
        });
      const ac = new AbortController();
      const t0 = performance.now();
      const running = mgr.start(ac.signal);
      running.catch((err) => process.stderr.write(`manager: ${err}\n`));
      await all.done;
      ac.abort();
      await running.catch(() => {});
      return {
        opsPerSec: Math.max(1, Math.round(reconciles / ((performance.now() - t0) / 1000))),
        usePriorityQueue,
        liveChanges: LIVE,
        reconciles,
        backlogDrainMs: backlogDoneAt ? round(backlogDoneAt - t0) : null,
        liveP50Ms: round(quantile(lat, 0.5), 2),
        liveP99Ms: round(quantile(lat, 0.99), 2),
        smoke: SMOKE,
      };
    },
  };
}

export const tasks = () => [task('kubeloop-plain-queue', false), task('kubeloop-priority-queue', true)];

export function summary(results) {
  const pq = metricsOf(results, SCENARIO, 'kubeloop-priority-queue');
  const plain = metricsOf(results, SCENARIO, 'kubeloop-plain-queue');
  return [
    {
      scenario: SCENARIO,
      impl: 'kubeloop-priority-queue vs kubeloop-plain-queue',
      ratio: ratio(pq?.liveP99Ms, plain?.liveP99Ms),
      ratioOf: 'live-change p99 latency ÷ the plain queue’s (target ≤ 0.1)',
      ratios: { liveP50Ms: ratio(pq?.liveP50Ms, plain?.liveP50Ms) },
    },
  ];
}

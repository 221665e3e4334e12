// failover (replay server): a standby manager (@kubeloop/builder, leader election through an elector the bench
// drives) holds a controller for N pods; once it has settled the bench hands it the lease. Measured: from the
// lease won to the first reconcile, and to the last of the N initial reconciles, with the controller's
// `enableWarmup` off (cold: the informer lists only after the win) and on (warm: the standby listed and watched
// before it, controller-runtime EnableWarmup). A bench, not a test. Knob: FAILOVER_OBJECTS (10000).
import { knob, metricsOf, ratio, replayEnv, replaySetup, round, SMOKE, waiter } from '../lib/common.mjs';

const OBJECTS = knob('FAILOVER_OBJECTS', 10_000, 100);
const SCENARIO = `failover to first reconcile, ${OBJECTS} pods`;

export const setup = () => replaySetup({ objects: OBJECTS, watchEvents: 0, shape: 'small' });

function task(impl, enableWarmup) {
  return {
    scenario: SCENARIO,
    impl,
    measure: async () => {
      const { kubeconfig } = replayEnv();
      const { loadRestConfig } = await import('@kubeloop/config');
      const { Pod } = await import('@kubeloop/client');
      const { newManager, newControllerManagedBy } = await import('@kubeloop/builder');
      let callbacks;
      const elector = {
        run: (signal, cb) => {
          callbacks = cb;
          return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
        },
      };
      const mgr = newManager(
        { ...loadRestConfig({ kubeconfig, env: {}, argv: [] }), qps: -1 },
        { leaderElection: { id: 'bench-failover', elector } },
      );
      let reconciles = 0;
      let firstAt = 0;
      let lastAt = 0;
      const all = waiter(() => reconciles >= OBJECTS, 300_000, `${OBJECTS} reconciles`);
      const ctrl = newControllerManagedBy(mgr)
        .for(Pod)
        .named('bench-failover')
        .withOptions({ maxConcurrentReconciles: 1, enableWarmup })
        .build({
          async reconcile() {
            reconciles++;
            if (reconciles === 1) firstAt = performance.now();
            if (reconciles === OBJECTS) {
              lastAt = performance.now();
              all.poke();
            }
          },
        });
      const ac = new AbortController();
      const running = mgr.start(ac.signal);
      running.catch((err) => process.stderr.write(`manager: ${err}\n`));
      // Settled standby: campaigning, and (warm) every initial key queued.
      const settled = waiter(
        () => callbacks !== undefined && (!enableWarmup || ctrl.queue.len() >= OBJECTS),
        300_000,
        'the standby to settle',
      );
      const poll = setInterval(() => settled.poke(), 5);
      await settled.done;
      clearInterval(poll);
      const wonAt = performance.now();
      callbacks.onStartedLeading();
      await all.done;
      ac.abort();
      await running.catch(() => {});
      return {
        opsPerSec: Math.max(1, Math.round(OBJECTS / ((lastAt - wonAt) / 1000))),
        enableWarmup,
        objects: OBJECTS,
        firstReconcileMs: round(firstAt - wonAt, 2),
        allReconciledMs: round(lastAt - wonAt),
        smoke: SMOKE,
      };
    },
  };
}

export const tasks = () => [task('kubeloop-cold-standby', false), task('kubeloop-warm-standby', true)];

export function summary(results) {
  const warm = metricsOf(results, SCENARIO, 'kubeloop-warm-standby');
  const cold = metricsOf(results, SCENARIO, 'kubeloop-cold-standby');
  return [
    {
      scenario: SCENARIO,
      impl: 'kubeloop-warm-standby vs kubeloop-cold-standby',
      ratio: ratio(warm?.firstReconcileMs, cold?.firstReconcileMs),
      ratioOf: 'failover-to-first-reconcile ÷ the cold standby’s',
      ratios: { allReconciledMs: ratio(warm?.allReconciledMs, cold?.allReconciledMs) },
    },
  ];
}

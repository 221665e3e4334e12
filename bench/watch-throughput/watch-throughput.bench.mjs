// watch-throughput (replay server): an informer synced over N realistic pods, then the replay server pushes E
// MODIFIED events (each a new resourceVersion of one of the pods, pre-encoded, as fast as the socket takes them).
// Timed from the first update the handler sees to the last: events/s and client CPU per event — kubeloop vs
// @kubernetes/client-node's informer vs the raw limit (split lines → JSON.parse → Map.set); kubeloop-unfrozen is
// kubeloop with `freezeObjects: false` (no deep freeze of stored objects).
// Knobs: WATCH_OBJECTS (default "5000,50000", one replay server per size), WATCH_EVENTS (default 100000).
import {
  CLIENT_NODE,
  cpuMs,
  gc,
  INFORMERS,
  KUBELOOP,
  KUBELOOP_UNFROZEN,
  knob,
  metricsOf,
  RAW,
  ratio,
  replayEnv,
  replaySetup,
  round,
  SMOKE,
  threadCpuMs,
  waiter,
} from '../lib/common.mjs';

const SIZES = (process.env.WATCH_OBJECTS ?? (SMOKE ? '10' : '5000,50000'))
  .split(',')
  .map((s) => Number(s.trim()));
const EVENTS = knob('WATCH_EVENTS', 100_000, 30);
const scenarioFor = (n) => `watch-throughput ${EVENTS} events, ${n} realistic pods`;

function task(objects, impl) {
  return {
    scenario: scenarioFor(objects),
    impl,
    measure: async () => {
      const { kubeconfig, watchEvents } = replayEnv();
      const informer = await INFORMERS[impl](kubeconfig);
      let seen = 0;
      let t0 = 0;
      let cpu0 = 0;
      let threads0 = null;
      const all = waiter(() => seen >= watchEvents, 900_000, `${watchEvents} updates`);
      let lastRv = '';
      await informer.start(
        () => {},
        (obj) => {
          if (seen === 0) {
            t0 = performance.now();
            cpu0 = cpuMs();
            threads0 = threadCpuMs();
          }
          seen++;
          if (seen === watchEvents) {
            lastRv = obj?.metadata?.resourceVersion ?? '';
            all.poke();
          }
        },
      );
      // the list's garbage is not the watch's cost — collected only while no event was counted yet: client-node's
      // start() returns once its watch is open, events may be flowing, and a full GC inside its window alone would
      // be charged to it
      if (seen === 0) gc();
      all.poke();
      const tEnd = await all.done;
      const cpu = cpuMs() - cpu0;
      const threads1 = threadCpuMs();
      const wall = tEnd - t0;
      // every contender ends with the same cache: one entry per pod (an event lost or misfiled would show here)
      const cached = informer.count();
      await informer.stop();
      if (cached !== objects) throw new Error(`${impl}: cached ${cached} pods, want ${objects}`);
      // every event carried a new resourceVersion; the last one seen must be the last one sent
      const wantRv = String(1000 + objects + watchEvents);
      if (lastRv !== wantRv) throw new Error(`${impl}: last resourceVersion ${lastRv}, want ${wantRv}`);
      const n = Math.max(1, watchEvents - 1);
      return {
        opsPerSec: Math.round((n / wall) * 1000),
        events: watchEvents,
        objects,
        wallMs: round(wall),
        cpuMs: round(cpu),
        cpuUsPerEvent: round((cpu * 1000) / n, 2),
        // the same CPU split by thread (10 ms ticks): the JavaScript thread vs GC/compiler/libuv helpers
        ...(threads0 && threads1
          ? {
              mainThreadUsPerEvent: round(((threads1.main - threads0.main) * 1000) / n, 2),
              otherThreadsUsPerEvent: round(((threads1.others - threads0.others) * 1000) / n, 2),
            }
          : {}),
        coresBusy: round(cpu / wall, 2),
      };
    },
  };
}

export const variants = () => SIZES.map(String);
export const setup = (v) => replaySetup({ objects: Number(v), watchEvents: EVENTS });
export const tasks = (v) =>
  [RAW, KUBELOOP, KUBELOOP_UNFROZEN, CLIENT_NODE].map((impl) => task(Number(v), impl));

export function summary(results, v) {
  const scenario = scenarioFor(Number(v));
  const raw = metricsOf(results, scenario, RAW);
  const kl = metricsOf(results, scenario, KUBELOOP);
  const cn = metricsOf(results, scenario, CLIENT_NODE);
  const un = metricsOf(results, scenario, KUBELOOP_UNFROZEN);
  return [
    {
      scenario,
      impl: `${KUBELOOP_UNFROZEN} vs ${RAW} and ${CLIENT_NODE}`,
      ratio: ratio(un?.opsPerSec, raw?.opsPerSec),
      ratioOf: 'freezeObjects: false — events/s ÷ raw limit',
      ratios: {
        cpuUsPerEventVsRaw: ratio(un?.cpuUsPerEvent, raw?.cpuUsPerEvent),
        cpuUsPerEventVsClientNode: ratio(un?.cpuUsPerEvent, cn?.cpuUsPerEvent),
        opsPerSecVsClientNode: ratio(un?.opsPerSec, cn?.opsPerSec),
      },
    },
    {
      scenario,
      impl: `${KUBELOOP} vs ${RAW}`,
      ratio: ratio(kl?.opsPerSec, raw?.opsPerSec),
      ratioOf: 'events/s ÷ raw limit (target ≥ 0.9)',
      ratios: {
        opsPerSec: ratio(kl?.opsPerSec, raw?.opsPerSec),
        cpuUsPerEvent: ratio(kl?.cpuUsPerEvent, raw?.cpuUsPerEvent),
      },
    },
    {
      scenario,
      impl: `${KUBELOOP} vs ${CLIENT_NODE}`,
      ratio: ratio(kl?.cpuUsPerEvent, cn?.cpuUsPerEvent),
      ratioOf: 'CPU per event ÷ client-node (target ≤ 0.7; events/s target ≥ 1.4)',
      ratios: {
        opsPerSec: ratio(kl?.opsPerSec, cn?.opsPerSec),
        cpuUsPerEvent: ratio(kl?.cpuUsPerEvent, cn?.cpuUsPerEvent),
      },
    },
    {
      scenario,
      impl: `${CLIENT_NODE} vs ${RAW}`,
      ratio: ratio(cn?.opsPerSec, raw?.opsPerSec),
      ratioOf: 'events/s ÷ raw limit',
      ratios: { cpuUsPerEvent: ratio(cn?.cpuUsPerEvent, raw?.cpuUsPerEvent) },
    },
  ];
}

// watch-throughput (replay server): an informer synced over N realistic pods, then the replay server pushes E
// MODIFIED events (each a new resourceVersion of one of the pods, pre-encoded, as fast as the socket takes them).
// Timed from the first update the handler sees to the last: events/s and client CPU per event — kubeloop vs
// @kubernetes/client-node's informer vs the raw limit (split lines → JSON.parse → Map.set); kubeloop-unfrozen is
// kubeloop with `freezeObjects: false` (no deep freeze of stored objects).
// Knobs: WATCH_OBJECTS (default "5000,50000", one replay server per size), WATCH_EVENTS (default 100000).
//
// With `run.mjs --server real`: a namespace of a real kube-apiserver filled with WATCH_OBJECTS realistic pods
// (default "20000"), and the contenders — raw limit, kubeloop, client-node, client-go — all synced and watching
// at once, each in its own process, while the parent patches WATCH_EVENTS of the pods (default 5000) at the pace
// the server takes them; each contender reports its CPU per event from its first update to its last.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLIENT_GO, clientGoAvailability, runClientGo, warnNoClientGo } from '../lib/client-go.mjs';
import {
  benchTarget,
  CLIENT_NODE,
  clientGoArgs,
  cpuMs,
  gc,
  INFORMERS,
  KUBELOOP,
  KUBELOOP_LAZY,
  KUBELOOP_SEMI_SPACE,
  KUBELOOP_UNFROZEN,
  knob,
  metricsOf,
  NODE_ARGS,
  RAW,
  ratio,
  realSetup,
  replayEnv,
  replaySetup,
  round,
  SMOKE,
  threadCpuMs,
  waiter,
} from '../lib/common.mjs';
import { onRealServer, patchRealPods, realKubeconfig, realNamespace } from '../lib/real-server.mjs';

const REAL = onRealServer();
const SIZES = (process.env.WATCH_OBJECTS ?? (SMOKE ? '10' : REAL ? '20000' : '5000,50000'))
  .split(',')
  .map((s) => Number(s.trim()));
const EVENTS = knob('WATCH_EVENTS', REAL ? 5000 : 100_000, 30);
const scenarioFor = (n) =>
  REAL
    ? `watch-throughput ${EVENTS} patches, ${n} realistic pods (real kube-apiserver, all contenders at once)`
    : `watch-throughput ${EVENTS} events, ${n} realistic pods`;

/** Marks this task process synced (the parent's drive() starts patching once every contender is). */
function markSynced(impl) {
  const dir = process.env.BENCH_SYNC_DIR;
  if (dir) writeFileSync(join(dir, `${impl.replace(/[^\w.-]/g, '_')}.synced`), '');
}

/** A JavaScript contender on the real server: sync, mark, then count EVENTS updates. */
function realTask(objects, impl) {
  return {
    scenario: scenarioFor(objects),
    impl,
    ...(NODE_ARGS[impl] ? { nodeArgs: NODE_ARGS[impl] } : {}),
    measure: async () => {
      const target = benchTarget();
      const informer = await INFORMERS[impl](target.kubeconfig, target.scope);
      let seen = 0;
      let t0 = 0;
      let cpu0 = 0;
      let threads0 = null;
      const all = waiter(() => seen >= EVENTS, 1_800_000, `${EVENTS} updates`);
      // only the first update of each pod carrying this repetition's patch counts: a relist (a watch cut at
      // this load) hands every cached pod to the handler again as an update, which is not an event
      const tag = `${process.env.BENCH_WATCH_TAG ?? ''}r${process.env.BENCH_REP ?? '0'}-`;
      const patched = new Set();
      await informer.start(
        () => {},
        (obj) => {
          const meta = obj?.metadata;
          if (!meta?.annotations?.['bench.kubeloop.dev/seq']?.startsWith(tag) || patched.has(meta.name))
            return;
          patched.add(meta.name);
          if (seen === 0) {
            t0 = performance.now();
            cpu0 = cpuMs();
            threads0 = threadCpuMs();
          }
          seen++;
          if (seen === EVENTS) all.poke();
        },
      );
      if (seen === 0) gc();
      markSynced(impl);
      all.poke();
      const tEnd = await all.done;
      const cpu = cpuMs() - cpu0;
      const threads1 = threadCpuMs();
      const wall = tEnd - t0;
      const cached = informer.count();
      await informer.stop();
      if (cached !== objects) throw new Error(`${impl}: cached ${cached} pods, want ${objects}`);
      const n = Math.max(1, EVENTS - 1);
      return {
        opsPerSec: Math.round((n / wall) * 1000),
        events: EVENTS,
        objects,
        wallMs: round(wall),
        cpuMs: round(cpu),
        cpuUsPerEvent: round((cpu * 1000) / n, 2),
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

/** client-go on the real server: main.go syncs, says so, counts EVENTS updates and reports the same figures. */
function realGoTask(objects) {
  return {
    scenario: scenarioFor(objects),
    impl: CLIENT_GO,
    measure: async () => {
      const target = benchTarget();
      const bin = process.env.BENCH_CLIENT_GO_BIN;
      if (!bin) throw new Error('bench: the client-go contender was not built (setup)');
      const tag = `${process.env.BENCH_WATCH_TAG ?? ''}r${process.env.BENCH_REP ?? '0'}`;
      const args = clientGoArgs(target, ['-watch-events', String(EVENTS), '-watch-tag', tag]);
      const r = await runClientGo(bin, args, (line) => {
        if (line.phase === 'synced') markSynced(CLIENT_GO);
      });
      const { phase, ...figures } = r;
      void phase;
      return figures;
    },
  };
}

/** Whether the client-go contender runs (the same answer in every process of the run). */
function withClientGo() {
  const a = clientGoAvailability(REAL ? realKubeconfig() : undefined);
  if (!a.go) warnNoClientGo(a.reason);
  return Boolean(a.go);
}

/** The patch rate of each repetition (the parent's drive()), for the summary. */
const patchRates = [];

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
/** On the real server every contender watches at once while the parent patches (run.mjs `concurrent`). */
export const concurrent = () => REAL;
export async function setup(v) {
  if (!REAL) return replaySetup({ objects: Number(v), watchEvents: EVENTS });
  const fixture = await realSetup({ objects: Number(v), watchEvents: EVENTS });
  const dir = mkdtempSync(join(tmpdir(), 'bench-watch-'));
  // a tag new to this run: a patch that sets the value a pod already has changes nothing and makes no event
  const runTag = Date.now().toString(36);
  return {
    env: { ...fixture.env, BENCH_SYNC_DIR: dir, BENCH_WATCH_TAG: runTag },
    /**
     * Once every contender still running is synced, patches EVENTS pods; each then sees EVENTS updates.
     * `running()`: how many contender processes have not ended (a failed one ends early).
     */
    async drive(rep, running) {
      const t0 = performance.now();
      for (;;) {
        const synced = readdirSync(dir).filter((f) => f.endsWith('.synced'));
        if (running() === 0) return;
        if (synced.length >= running()) break;
        if (performance.now() - t0 > 900_000) throw new Error('bench: contenders not synced after 15 min');
        await new Promise((r) => setTimeout(r, 200));
      }
      for (const f of readdirSync(dir)) rmSync(join(dir, f));
      const load = (await import('node:os')).loadavg()[0];
      const rate = await patchRealPods(
        realKubeconfig(),
        realNamespace(),
        Number(v),
        EVENTS,
        `${runTag}r${rep}`,
      );
      patchRates.push({ ...rate, load1: load });
      process.stderr.write(
        `real server: ${EVENTS} patches in ${rate.seconds.toFixed(1)} s (${Math.round(rate.perSecond)}/s), load ${load.toFixed(1)}\n`,
      );
    },
    teardown: () => rmSync(dir, { recursive: true, force: true }),
  };
}
export async function tasks(v) {
  const n = Number(v);
  if (!REAL)
    return [RAW, KUBELOOP, KUBELOOP_LAZY, KUBELOOP_UNFROZEN, CLIENT_NODE].map((impl) => task(n, impl));
  const all = [RAW, KUBELOOP, KUBELOOP_LAZY, KUBELOOP_SEMI_SPACE, CLIENT_NODE].map((impl) =>
    realTask(n, impl),
  );
  if (withClientGo()) all.push(realGoTask(n));
  return all;
}

export function summary(results, v) {
  const scenario = scenarioFor(Number(v));
  if (REAL) return realSummary(results, scenario);
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

/** The real server's ratios: CPU per event of each JavaScript contender ÷ client-go's (target ≤ 1.0 for kubeloop). */
function realSummary(results, scenario) {
  const go = metricsOf(results, scenario, CLIENT_GO);
  const out = [];
  for (const impl of [KUBELOOP, KUBELOOP_LAZY, KUBELOOP_SEMI_SPACE, CLIENT_NODE, RAW]) {
    const m = metricsOf(results, scenario, impl);
    if (!m || !go) continue;
    out.push({
      scenario,
      impl: `${impl} vs ${CLIENT_GO}`,
      ratio: ratio(m.cpuUsPerEvent, go.cpuUsPerEvent),
      ratioOf: `CPU per event ÷ client-go${impl === KUBELOOP ? ' (target ≤ 1.0)' : ''}`,
    });
  }
  const kl = metricsOf(results, scenario, KUBELOOP);
  for (const impl of [CLIENT_NODE, RAW]) {
    const m = metricsOf(results, scenario, impl);
    if (kl && m)
      out.push({
        scenario,
        impl: `${KUBELOOP} vs ${impl}`,
        ratio: ratio(kl.cpuUsPerEvent, m.cpuUsPerEvent),
        ratioOf: 'CPU per event',
      });
  }
  if (patchRates.length > 0)
    out.push({
      scenario,
      impl: 'server',
      ratio: null,
      ratioOf: 'patches/s the server took, per repetition (all contenders watching)',
      patchRates: patchRates.map((r) => ({ perSecond: Math.round(r.perSecond), load1: r.load1 })),
    });
  return out;
}

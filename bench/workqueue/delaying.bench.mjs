// A delaying queue holding many timers at once: TIMERS keys added with addAfter (delays spread evenly over
// SPREAD_MS), then handed out by one worker (tryGet, else await get; then done) until all came. Against a bare setTimeout per key
// pushing into an array. Reports wall and CPU time, heap growth while the timers are pending, and how late
// keys are handed out (p50/p99 of hand-out time − due time). Knobs: TIMERS (100000), SPREAD_MS (2000).
import { cpuMs, gc, knob, metricsOf, quantile, ratio, round } from '../lib/common.mjs';

const TIMERS = knob('TIMERS', 100_000, 200);
const SPREAD_MS = knob('SPREAD_MS', 2000, 50);
const SCENARIO = `delaying queue: ${TIMERS} timers over ${SPREAD_MS} ms`;

function delayOf(i) {
  // evenly spread, in an order unrelated to i so the queue's heap really sorts
  return ((i * 7919) % TIMERS) * (SPREAD_MS / TIMERS);
}

async function kubeloop() {
  const { newDelayingQueue } = await import('@kubeloop/workqueue');
  const q = newDelayingQueue();
  const late = new Float64Array(TIMERS);
  const due = new Float64Array(TIMERS);
  gc();
  const heap0 = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  const c0 = cpuMs();
  for (let i = 0; i < TIMERS; i++) {
    due[i] = t0 + delayOf(i);
    q.addAfter(i, delayOf(i));
  }
  const heapPending = process.memoryUsage().heapUsed - heap0;
  // one worker, looping as a controller's does: take what is ready, await get() only when nothing is
  for (let n = 0; n < TIMERS; n++) {
    let item = q.tryGet();
    if (item === undefined) {
      const r = await q.get();
      if (r.shutdown) throw new Error('queue shut down');
      item = r.item;
    }
    late[item] = performance.now() - due[item];
    q.done(item);
  }
  const wall = performance.now() - t0;
  const cpu = cpuMs() - c0;
  q.shutDown?.();
  return { wall, cpu, heapPending, late };
}

async function bare() {
  const late = new Float64Array(TIMERS);
  const due = new Float64Array(TIMERS);
  const out = [];
  gc();
  const heap0 = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  const c0 = cpuMs();
  let left = TIMERS;
  let finish;
  const all = new Promise((r) => {
    finish = r;
  });
  for (let i = 0; i < TIMERS; i++) {
    due[i] = t0 + delayOf(i);
    setTimeout(() => {
      out.push(i);
      late[i] = performance.now() - due[i];
      if (--left === 0) finish();
    }, delayOf(i));
  }
  const heapPending = process.memoryUsage().heapUsed - heap0;
  await all;
  return { wall: performance.now() - t0, cpu: cpuMs() - c0, heapPending, late };
}

function task(impl, fn) {
  return {
    scenario: SCENARIO,
    impl,
    measure: async () => {
      // the queue's timers are unref'd (a queue never keeps a process alive): hold the loop open meanwhile
      const keepAlive = setInterval(() => {}, 1000);
      const { wall, cpu, heapPending, late } = await fn().finally(() => clearInterval(keepAlive));
      return {
        opsPerSec: Math.round((TIMERS / wall) * 1000),
        timers: TIMERS,
        wallMs: round(wall),
        cpuMs: round(cpu),
        heapPendingBytes: heapPending,
        lateP50Ms: round(quantile(late, 0.5), 2),
        lateP99Ms: round(quantile(late, 0.99), 2),
      };
    },
  };
}

export function tasks() {
  return [task('bare-settimeout', bare), task('kubeloop-delaying-queue', kubeloop)];
}

export function summary(results) {
  const k = metricsOf(results, SCENARIO, 'kubeloop-delaying-queue');
  const b = metricsOf(results, SCENARIO, 'bare-settimeout');
  return [
    {
      scenario: SCENARIO,
      impl: 'kubeloop-delaying-queue vs bare-settimeout',
      ratio: ratio(k?.cpuMs, b?.cpuMs),
      ratioOf: 'CPU ms ÷ one setTimeout per key',
      ratios: {
        heapPendingBytes: ratio(k?.heapPendingBytes, b?.heapPendingBytes),
        lateP99Ms: ratio(k?.lateP99Ms, b?.lateP99Ms),
      },
    },
  ];
}

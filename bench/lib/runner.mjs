// Shared benchmark runner: every suite's tasks run through tinybench with the same warm-up and time budget,
// and every result becomes one JSON object per line (see bench/README.md for the line format).
import { Bench } from 'tinybench';

/**
 * @typedef {object} BenchTask
 * @property {string} scenario  what is measured (same scenario ⇒ results comparable side by side)
 * @property {string} impl      which implementation ('kubeloop-…', or the alternative's name)
 * @property {() => unknown | Promise<unknown>} fn  one measured call
 * @property {number} [opsPerCall=1]  logical operations per call (opsPerSec = calls/s × opsPerCall)
 * @property {boolean} [async]  whether fn returns a promise (default: detected by tinybench)
 * @property {() => unknown | Promise<unknown>} [beforeAll]  once before warm-up and run (not timed)
 * @property {() => unknown | Promise<unknown>} [afterAll]   once after (not timed)
 * @property {() => Promise<MacroMetrics>} [measure]  a macro benchmark: instead of tinybench timing `fn`, the
 *   runner calls `measure` once per process (after `beforeAll`, before `afterAll`) and reports what it returns
 */

/**
 * What a macro task's `measure` returns: at least `opsPerSec` (used to pick the median run) and whatever
 * else it measured (times in ms, bytes), all copied onto the result line.
 * @typedef {{ opsPerSec: number } & Record<string, number | string | boolean | null>} MacroMetrics
 */

/**
 * @typedef {object} BenchResult
 * @property {string} suite
 * @property {string} scenario
 * @property {string} impl
 * @property {'cpu' | 'wall'} clock  what the times are measured with
 * @property {number} opsPerSec  mean throughput in logical operations per second
 * @property {number} rmePercent relative margin of error of the mean latency (±%, 95%)
 * @property {number} nsPerOp    mean latency per logical operation, ns
 * @property {number} samples
 * @property {number} heapUsedDeltaBytes  heap used after the run minus after a GC before it (allocation pressure, not retained size)
 * @property {number} heapUsedAfterGcBytes heap used after a forced GC once the task finished (retained)
 */

const gc = typeof globalThis.gc === 'function' ? globalThis.gc : () => {};

/**
 * Clocks a run can be timed with (ms). `cpu` counts only CPU time this process used (user + system, µs
 * resolution, ~1–3 µs per reading), so time the process spends descheduled on a busy machine does not
 * count; `wall` is `performance.now()`.
 */
export const CLOCKS = {
  cpu: () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  },
  wall: () => performance.now(),
};

/**
 * Runs one task and returns its result line.
 * @param {string} suite
 * @param {BenchTask} task
 * @param {{ timeMs: number, warmupMs: number, clock?: 'cpu' | 'wall' }} opts
 * @returns {Promise<BenchResult>}
 */
export async function runTask(suite, task, opts) {
  if (task.measure) return runMacro(suite, task);
  const clock = opts.clock ?? 'cpu';
  const bench = new Bench({ time: opts.timeMs, warmupTime: opts.warmupMs, warmup: true, now: CLOCKS[clock] });
  /** @type {Record<string, unknown>} */
  const addOpts = {};
  if (task.async !== undefined) addOpts.async = task.async;
  if (task.beforeAll) addOpts.beforeAll = task.beforeAll;
  if (task.afterAll) addOpts.afterAll = task.afterAll;
  const name = `${task.scenario} / ${task.impl}`;
  bench.add(name, task.fn, addOpts);
  gc();
  const before = process.memoryUsage().heapUsed;
  await bench.run();
  const after = process.memoryUsage().heapUsed;
  gc();
  const retained = process.memoryUsage().heapUsed;
  const t = bench.tasks[0];
  const r = t?.result;
  if (!r || (r.state !== 'completed' && r.state !== 'aborted-with-statistics')) {
    const msg = r && 'error' in r && r.error instanceof Error ? r.error.message : String(r?.state);
    throw new Error(`benchmark ${suite}: ${name} failed: ${msg}`);
  }
  const per = task.opsPerCall ?? 1;
  return {
    suite,
    scenario: task.scenario,
    impl: task.impl,
    clock,
    // calls/s from the mean latency (the mean of per-sample throughputs overstates it)
    opsPerSec: Math.round((1000 / r.latency.mean) * per),
    rmePercent: Number(r.latency.rme.toFixed(2)),
    nsPerOp: Number(((r.latency.mean * 1e6) / per).toFixed(1)),
    samples: r.latency.samplesCount,
    heapUsedDeltaBytes: after - before,
    heapUsedAfterGcBytes: retained,
  };
}

/**
 * Runs one macro task: `beforeAll`, a forced GC, one `measure` call, `afterAll`. The task times itself (a macro
 * benchmark such as time-to-synced happens once per process: the first run is the one users get) and says
 * which clock in its metrics.
 * @param {string} suite
 * @param {BenchTask} task
 */
async function runMacro(suite, task) {
  const measure = /** @type {() => Promise<MacroMetrics>} */ (task.measure);
  await task.beforeAll?.();
  gc();
  const before = process.memoryUsage().heapUsed;
  let metrics;
  try {
    metrics = await measure();
  } finally {
    await task.afterAll?.();
  }
  const after = process.memoryUsage().heapUsed;
  gc();
  const retained = process.memoryUsage().heapUsed;
  if (!metrics || !(metrics.opsPerSec > 0))
    throw new Error(`benchmark ${suite}: ${task.scenario} / ${task.impl}: measure() returned no opsPerSec`);
  return {
    suite,
    scenario: task.scenario,
    impl: task.impl,
    clock: 'wall',
    macro: true,
    samples: 1,
    heapUsedDeltaBytes: after - before,
    heapUsedAfterGcBytes: retained,
    ...metrics,
  };
}

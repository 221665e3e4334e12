#!/usr/bin/env node
// Usage: node --expose-gc run.mjs [suite ...] [--json] [--time <ms>] [--warmup <ms>] [--repeat <n>]
//        [--clock cpu|wall] [--server replay|real] [--kubeconfig <file>] [--keep-pods]
// A suite is a folder of bench/ holding *.bench.mjs files (see README.md). No suite named ⇒ all suites.
// Every task runs in its own fresh Node process; with --repeat n the tasks of a file run n times,
// round-robin (so slow phases of a busy machine hit every implementation alike), and the median run by
// throughput is reported.
import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs, promisify } from 'node:util';

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    json: { type: 'boolean', default: false },
    time: { type: 'string', default: '1000' },
    warmup: { type: 'string', default: '300' },
    repeat: { type: 'string', default: '3' },
    clock: { type: 'string', default: 'cpu' },
    // the macro suites (informer-sync, watch-throughput) against a real kube-apiserver instead of the replay
    // server: the bench fills a namespace of its own with realistic pods through the API (README "Real server")
    server: { type: 'string', default: 'replay' },
    kubeconfig: { type: 'string' },
    // leave the bench's pods on the real server for a following run (default: delete them at the end)
    'keep-pods': { type: 'boolean', default: false },
  },
});
if (!['replay', 'real'].includes(values.server)) {
  console.error('--server must be replay or real');
  process.exit(2);
}
// the suites (and their task processes, which inherit the environment) read these
process.env.BENCH_SERVER = values.server;
if (values.kubeconfig) process.env.BENCH_KUBECONFIG = values.kubeconfig;
if (values.server === 'real' && !process.env.BENCH_KUBECONFIG && !process.env.KUBECONFIG) {
  console.error('--server real needs --kubeconfig <file> (or KUBECONFIG)');
  process.exit(2);
}
const timeMs = Number(values.time);
const warmupMs = Number(values.warmup);
const repeat = Number(values.repeat);
if (
  !(timeMs > 0) ||
  !(warmupMs >= 0) ||
  !Number.isInteger(repeat) ||
  repeat < 1 ||
  !['cpu', 'wall'].includes(values.clock)
) {
  console.error('--time must be > 0, --warmup >= 0 (ms), --repeat an integer >= 1, --clock cpu or wall');
  process.exit(2);
}

const entries = await readdir(here, { withFileTypes: true });
const allSuites = entries
  .filter(
    (e) =>
      e.isDirectory() &&
      !e.name.startsWith('.') &&
      // client-go/ holds the Go contender's source, not a suite
      !['lib', 'node_modules', 'results', 'test', 'charts', 'profiles', 'client-go'].includes(e.name),
  )
  .map((e) => e.name)
  .sort();
const wanted = positionals.length > 0 ? positionals : allSuites;
for (const s of wanted) {
  if (!allSuites.includes(s)) {
    console.error(`unknown suite "${s}"; known: ${allSuites.join(', ')}`);
    process.exit(2);
  }
}

// extra flags for every task process, e.g. BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=profiles"
const childNodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
const emit = (obj) => {
  if (values.json) process.stdout.write(`${JSON.stringify(obj)}\n`);
  else process.stderr.write('.');
};
const rows = [];
/** Runs that failed (one line each in the output, `failed: true`). */
const failures = [];
const median = (runs) =>
  [...runs].sort((a, b) => a.opsPerSec - b.opsPerSec)[Math.floor((runs.length - 1) / 2)];
/** The median of every numeric field over the runs (lower middle for an even count). */
const medianOfEach = (runs) => {
  /** @type {Record<string, number>} */
  const out = {};
  for (const [k, v] of Object.entries(runs[0] ?? {})) {
    if (typeof v !== 'number') continue;
    const xs = runs.map((x) => x[k]).sort((a, b) => a - b);
    out[k] = xs[Math.floor((xs.length - 1) / 2)];
  }
  return out;
};

try {
  for (const suite of wanted) await runSuite(suite);
} finally {
  if (values.server === 'real' && !values['keep-pods']) {
    // the real server is shared: its bench pods go as soon as the measuring is over
    const { cleanRealPods, realKubeconfig, realNamespace } = await import('./lib/real-server.mjs');
    await cleanRealPods(realKubeconfig(), realNamespace());
  }
}

async function runSuite(suite) {
  const files = (await readdir(join(here, suite))).filter((f) => f.endsWith('.bench.mjs')).sort();
  for (const f of files) {
    const file = join(here, suite, f);
    const mod = await import(pathToFileURL(file).href);
    // A file may run several variants (e.g. sizes): `variants()` names them, and setup/tasks/summary get the
    // variant (the child process gets it as BENCH_VARIANT).
    const variants = mod.variants ? await mod.variants() : [undefined];
    for (const variant of variants) await runFile(suite, file, mod, variant);
  }
}

async function runFile(suite, file, mod, variant) {
  {
    const all = await mod.tasks(variant);
    const count = all.length;
    // BENCH_IMPLS (comma-separated impl names): run only those tasks, e.g. the contenders of one ratio at full size
    const only = (process.env.BENCH_IMPLS ?? '').split(',').filter(Boolean);
    const picked = all.map((_, i) => i).filter((i) => only.length === 0 || only.includes(all[i].impl));
    // Optional per-file fixture shared by every task process (e.g. one API server): `setup()` runs here, in
    // the parent, and its `env` reaches each child's process.env; `teardown()` runs after the file.
    /** @type {{ env?: Record<string, string>, teardown?: () => unknown } | undefined} */
    const fixture = await mod.setup?.(variant);
    const childEnv = {
      ...process.env,
      ...(fixture?.env ?? {}),
      ...(variant === undefined ? {} : { BENCH_VARIANT: String(variant) }),
    };
    /** @type {object[][]} */
    const runs = Array.from({ length: count }, () => []);
    const spawnTask = async (i, rep) => {
      let stdout;
      try {
        ({ stdout } = await run(
          process.execPath,
          [
            '--expose-gc',
            ...childNodeArgs,
            // a task's own V8/Node flags (e.g. a contender that differs from another only in its heap settings)
            ...(all[i]?.nodeArgs ?? []),
            join(here, 'lib', 'child.mjs'),
            file,
            suite,
            String(i),
            String(timeMs),
            String(warmupMs),
            values.clock,
          ],
          { cwd: here, maxBuffer: 1 << 24, env: { ...childEnv, BENCH_REP: String(rep) } },
        ));
      } catch (err) {
        // one failed run of one contender (a client that never syncs against a real server) is reported and the
        // others go on: a long interleaved run is not thrown away for it
        process.stderr.write(
          `bench: ${all[i]?.impl} (repetition ${rep + 1}) failed: ${String(err?.stderr || err).slice(-1500)}\n`,
        );
        failures.push({
          suite,
          scenario: all[i]?.scenario,
          impl: all[i]?.impl,
          repetition: rep + 1,
          failed: true,
        });
        return;
      }
      // the load average as the task ended: every figure of a loaded box is read with it
      const line = { ...JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}'), load1: loadavg()[0] };
      runs[i]?.push(line);
      // each run as it ends (stderr), so a run cut short still leaves its figures
      if (values.json) process.stderr.write(`${JSON.stringify({ run: rep + 1, ...line })}\n`);
    };
    // A file whose `concurrent(variant)` is true runs its picked tasks all at once (one process each) and the
    // fixture's `drive(rep, running)` beside them (`running()`: how many of them have not ended yet) — e.g. every contender watching while the parent makes events.
    const concurrent = (await mod.concurrent?.(variant)) === true;
    try {
      for (let rep = 0; rep < repeat; rep++) {
        if (concurrent) {
          // drive() is told how many contenders are still running, so one that failed is not waited for
          let running = picked.length;
          const settle = (p) => p.finally(() => running--);
          await Promise.all([
            ...picked.map((i) => settle(spawnTask(i, rep))),
            fixture?.drive?.(rep, () => running),
          ]);
        } else for (const i of picked) await spawnTask(i, rep);
      }
    } finally {
      await fixture?.teardown?.();
    }
    const results = runs
      .filter((r) => r.length > 0)
      .map((r) => ({
        ...median(r),
        runs: r.length,
        opsPerSecRuns: r.map((x) => x.opsPerSec),
        // a macro task's metrics each have their own median over the runs (the median run by opsPerSec need
        // not be the median by CPU time or heap)
        ...(r[0]?.macro ? { medians: medianOfEach(r) } : {}),
      }));
    for (const r of [...results, ...failures.splice(0)]) {
      rows.push(r);
      emit(r);
    }
    for (const line of (await mod.summary?.(results, variant)) ?? []) {
      const out = { suite, ...line };
      rows.push(out);
      emit(out);
    }
  }
}

if (!values.json) {
  process.stderr.write('\n');
  console.table(
    rows.map((r) =>
      'opsPerSec' in r
        ? {
            scenario: r.scenario,
            impl: r.impl,
            'ops/s': r.opsPerSec.toLocaleString('en-US'),
            '±%': r.rmePercent ?? '-',
            'ns/op': r.nsPerOp,
            'heap Δ KiB': Math.round(r.heapUsedDeltaBytes / 1024),
          }
        : { scenario: r.scenario, impl: r.impl ?? '', ratio: r.ratio },
    ),
  );
}

#!/usr/bin/env node
// npm run test:soak [-- --runs N] [--seed S]... [--burn K] [--parallel P] [--ref REV] [--keep] [--out DIR] [-- <vitest args>]
//
// Flake hunt: runs the whole vitest suite N times, each time in a fresh clone of this repository (git clone of
// REV, default HEAD: committed work only; npm ci; npm run build:all) with files and tests in a shuffled order
// (--sequence.shuffle, one seed per run), optionally beside K CPU burners (busy loops at this script's
// priority, so under `nice` they compete with the suite, not with other users). P runs at once load each other
// as a second suite would. Prints one line per run (seed, load, wall time, pass/fail, failing tests) and
// a summary; writes each run's log, vitest JSON report and summary.md to DIR (default a temp folder).
// A failing run is replayed with `npm run test:soak -- --runs 1 --seed S`, or one file at a time with
// `npx vitest run --sequence.shuffle --sequence.seed=S <file>` in any checkout. Exit code 1 when a run failed.
// Extra arguments after `--` go to vitest (e.g. `--project @kubeloop/client`, or `--coverage` as npm test does).
// SIGINT/SIGTERM stop the runs in flight, remove their clones unless --keep, and print what finished.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';

const USAGE =
  'usage: npm run test:soak -- [--runs N] [--seed S]... [--burn K] [--parallel P] [--ref REV] [--keep] [--out DIR] [--timeout-min M] [-- <vitest args>]';
let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: {
      runs: { type: 'string' },
      seed: { type: 'string', multiple: true },
      burn: { type: 'string', default: '0' },
      parallel: { type: 'string', default: '1' },
      ref: { type: 'string', default: 'HEAD' },
      keep: { type: 'boolean', default: false },
      out: { type: 'string' },
      'timeout-min': { type: 'string', default: '60' },
      help: { type: 'boolean', short: 'h' },
    },
  });
} catch (err) {
  console.error(`${err.message}\n${USAGE}`);
  process.exit(2);
}
const { values, positionals: vitestArgs } = parsed;
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
/** A non-negative integer option, or exit 2 naming the option. */
function int(name, text, min = 0) {
  if (!/^\d+$/.test(text) || Number(text) < min) {
    console.error(`--${name} must be an integer >= ${min}, not ${JSON.stringify(text)}\n${USAGE}`);
    process.exit(2);
  }
  return Number(text);
}
const seeds = (values.seed ?? []).map((s) => int('seed', s));
const runs = values.runs !== undefined ? int('runs', values.runs, 1) : Math.max(seeds.length, 1);
const burn = int('burn', values.burn);
const parallel = int('parallel', values.parallel, 1);
const timeoutMs = int('timeout-min', values['timeout-min'], 1) * 60_000;
// Seeds given on the command line first (replays), then fresh ones.
while (seeds.length < runs) seeds.push(Math.floor(Math.random() * 2 ** 31));

const repo = execFileSync('git', ['rev-parse', '--show-toplevel'], { encoding: 'utf8' }).trim();
const sha = execFileSync('git', ['-C', repo, 'rev-parse', '--verify', `${values.ref}^{commit}`], {
  encoding: 'utf8',
}).trim();
const out = values.out ?? mkdtempSync(join(tmpdir(), 'kubeloop-soak-'));
mkdirSync(out, { recursive: true });

/** Processes in flight (each the leader of its own process group), stopped together on a signal. */
const live = new Set();
/** Clones to remove on the way out. */
const clones = new Set();
let stopping = false;

/** Runs `cmd args` in `cwd`, output appended to `log`; resolves with its exit code (null when killed). */
function sh(cmd, args, { cwd, log, env, timeout }) {
  return new Promise((resolve) => {
    writeFileSync(log, `\n$ ${cmd} ${args.join(' ')}\n`, { flag: 'a' });
    // Own process group (detached), so a stop reaches vitest's workers and the servers they started.
    const child = spawn(cmd, args, {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    live.add(child);
    const append = (d) => writeFileSync(log, d, { flag: 'a' });
    child.stdout.on('data', append);
    child.stderr.on('data', append);
    const timer = timeout
      ? setTimeout(() => {
          writeFileSync(log, `\n[soak] killed after ${timeout / 60_000} min\n`, { flag: 'a' });
          killGroup(child, 'SIGKILL');
        }, timeout)
      : undefined;
    child.on('error', (err) => append(`\n[soak] ${err.message}\n`));
    child.on('close', (code) => {
      clearTimeout(timer);
      live.delete(child);
      resolve(code);
    });
  });
}

function killGroup(child, sig) {
  try {
    process.kill(-child.pid, sig);
  } catch {
    // already gone
  }
}

/** Failing tests from vitest's JSON report: "file > suite > test", or the file and its error when it failed outside a test. */
function failures(reportPath, cwd) {
  let report;
  try {
    report = JSON.parse(readFileSync(reportPath, 'utf8'));
  } catch {
    return { counts: undefined, failed: [] };
  }
  const failed = [];
  for (const file of report.testResults ?? []) {
    const name = relative(cwd, file.name);
    const bad = (file.assertionResults ?? []).filter((a) => a.status === 'failed');
    for (const a of bad) failed.push(`${name} > ${a.fullName ?? a.title}`);
    if (bad.length === 0 && file.status === 'failed')
      failed.push(
        `${name} (file failed: ${String(file.message ?? '')
          .split('\n')[0]
          .slice(0, 200)})`,
      );
  }
  return {
    counts: { passed: report.numPassedTests, failed: report.numFailedTests, total: report.numTotalTests },
    failed,
  };
}

/**
 * Failing tests named by the verbose reporter's `×` lines in a run's log: what a run killed at the step limit
 * (no JSON report) had failed by then.
 */
function failedInLog(log) {
  let text;
  try {
    text = readFileSync(log, 'utf8');
  } catch {
    return [];
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: strips the reporter's ANSI colours
  const plain = text.replace(/\x1b\[[0-9;]*m/g, '');
  return [...plain.matchAll(/^\s*×\s+(.+?)(?:\s+\d+ms)?$/gm)].map(
    (m) => `${m[1].replace(/\s+/g, ' ')} (from the log)`,
  );
}

/** One soak run: a fresh clone, npm ci, build, then the shuffled suite. */
async function soakRun(index, seed) {
  const tag = `run-${String(index + 1).padStart(2, '0')}-seed-${seed}`;
  const log = join(out, `${tag}.log`);
  const report = join(out, `${tag}.json`);
  const dir = mkdtempSync(join(tmpdir(), `kubeloop-soak-clone-${index + 1}-`));
  clones.add(dir);
  const loads = [loadavg()[0]];
  const sampler = setInterval(() => loads.push(loadavg()[0]), 10_000);
  const started = Date.now();
  let result;
  try {
    const steps = [
      ['git', ['clone', '--quiet', '--no-checkout', repo, dir], repo],
      ['git', ['-c', 'advice.detachedHead=false', 'checkout', '--quiet', sha], dir],
      ['npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline'], dir],
      ['npm', ['run', 'build:all'], dir],
    ];
    for (const [cmd, args, cwd] of steps) {
      if (stopping) break;
      const code = await sh(cmd, args, { cwd, log, timeout: timeoutMs });
      if (code !== 0) {
        result = { ok: false, failed: [`setup: ${cmd} ${args[0]} exited ${code}`] };
        break;
      }
    }
    if (!result && !stopping) {
      const code = await sh(
        process.execPath,
        [
          'node_modules/vitest/vitest.mjs',
          'run',
          '--sequence.shuffle',
          `--sequence.seed=${seed}`,
          // One line per test as it ends, so a run killed at the step limit still names what failed (the JSON
          // report is only written at the end).
          '--reporter=verbose',
          '--reporter=json',
          `--outputFile.json=${report}`,
          ...vitestArgs,
        ],
        { cwd: dir, log, timeout: timeoutMs },
      );
      const { counts, failed } = failures(report, dir);
      if (!counts) failed.push(...failedInLog(log));
      if (code !== 0 && failed.length === 0)
        failed.push(
          `vitest exited ${code ?? 'on a signal'} with no failed test (an error outside tests, or a timeout): see ${log}`,
        );
      result = { ok: code === 0, counts, failed };
    }
  } finally {
    clearInterval(sampler);
    if (!values.keep) {
      // Asynchronous: a clone with its node_modules takes minutes to delete on a loaded box, and a synchronous
      // delete would stall the other run's output and its exit handling meanwhile.
      await rm(dir, { recursive: true, force: true });
      clones.delete(dir);
    }
  }
  loads.push(loadavg()[0]);
  result ??= { ok: false, failed: ['stopped'] };
  return {
    run: index + 1,
    seed,
    burn,
    parallel,
    loadMin: Math.min(...loads),
    loadMax: Math.max(...loads),
    seconds: Math.round((Date.now() - started) / 1000),
    ...result,
    log,
    ...(values.keep ? { clone: dir } : {}),
  };
}

function line(r) {
  const load = `load ${r.loadMin.toFixed(1)}-${r.loadMax.toFixed(1)}`;
  const counts = r.counts ? ` (${r.counts.passed} passed, ${r.counts.failed} failed)` : '';
  const head = `run ${r.run}  seed ${r.seed}  ${load}  burn ${r.burn}  ${r.seconds} s  ${r.ok ? 'PASS' : 'FAIL'}${counts}`;
  return [head, ...r.failed.map((f) => `    ${f}`)].join('\n');
}

const burners = [];
function stopBurners() {
  for (const b of burners.splice(0)) b.kill('SIGKILL');
}
const results = [];
function summary() {
  const failedRuns = results.filter((r) => !r.ok);
  const text = [
    `soak of ${sha.slice(0, 10)}: ${results.length} of ${runs} runs, ${results.length - failedRuns.length} green, ${failedRuns.length} failed; ${parallel} at a time, ${burn} CPU burner(s)`,
    ...results.map(line),
    ...failedRuns.map((r) => `replay: npm run test:soak -- --runs 1 --seed ${r.seed}`),
    `logs and reports: ${out}`,
  ].join('\n');
  writeFileSync(join(out, 'summary.md'), `${text}\n`);
  writeFileSync(join(out, 'summary.json'), `${JSON.stringify(results, null, 2)}\n`);
  return text;
}

for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    if (stopping) process.exit(1);
    stopping = true;
    console.error(`\n[soak] ${sig}: stopping the runs in flight`);
    stopBurners();
    for (const child of live) killGroup(child, 'SIGTERM');
    setTimeout(() => {
      for (const child of live) killGroup(child, 'SIGKILL');
    }, 5_000).unref();
  });
}

console.log(
  `soak: ${runs} run(s) of ${sha.slice(0, 10)} (${values.ref}), seeds ${seeds.join(', ')}, ${parallel} at a time, ${burn} CPU burner(s); logs in ${out}`,
);
for (let i = 0; i < burn; i++) {
  burners.push(spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
}
let next = 0;
async function worker() {
  while (next < runs && !stopping) {
    const i = next++;
    const r = await soakRun(i, seeds[i]);
    results.push(r);
    console.log(line(r));
  }
}
try {
  await Promise.all(Array.from({ length: Math.min(parallel, runs) }, worker));
} finally {
  stopBurners();
  for (const dir of clones) if (!values.keep) rmSync(dir, { recursive: true, force: true });
}
results.sort((a, b) => a.run - b.run);
console.log(`\n${summary()}`);
process.exit(stopping ? 130 : results.every((r) => r.ok) && results.length === runs ? 0 : 1);

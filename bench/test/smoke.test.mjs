// Smoke test (part of `npm test`): every scenario of every suite runs once, in this process, at a tiny size
// (BENCH_SMOKE=1), so a broken scenario — a renamed API, a replay server that no longer answers, a summary that
// throws — fails CI. Nothing about time is asserted. One suite also goes through the real runner (run.mjs →
// child process) so the runner's plumbing is covered too.
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
process.env.BENCH_SMOKE = '1';
// the older informer suite (envtest) has its own knobs
process.env.OBJECTS = '20';
process.env.UPDATES = '10';

const suites = readdirSync(root, { withFileTypes: true })
  .filter(
    (e) =>
      e.isDirectory() && !['lib', 'node_modules', 'results', 'test', 'profiles', 'charts'].includes(e.name),
  )
  .map((e) => e.name)
  .sort();
const files = suites.flatMap((suite) =>
  readdirSync(join(root, suite))
    .filter((f) => f.endsWith('.bench.mjs'))
    .map((f) => ({ suite, file: join(root, suite, f), name: `${suite}/${f}` })),
);

describe('bench smoke (tiny sizes, no timing asserted)', () => {
  it('finds the scenarios issue 11 lists', () => {
    for (const s of [
      'informer-sync',
      'watch-throughput',
      'cache-read',
      'workqueue',
      'limiter',
      'e2e-reconcile',
      'startup-backlog',
      'h2-watches',
    ])
      expect(suites).toContain(s);
  });

  describe.each(files)('$name', ({ file }) => {
    let mod;
    beforeAll(async () => {
      mod = await import(pathToFileURL(file).href);
    });

    it('runs every task once and summarises', async () => {
      const variants = mod.variants ? await mod.variants() : [undefined];
      for (const variant of variants) {
        const fixture = await mod.setup?.(variant);
        const saved = { ...process.env };
        Object.assign(process.env, fixture?.env ?? {});
        if (variant !== undefined) process.env.BENCH_VARIANT = String(variant);
        const results = [];
        try {
          for (const task of await mod.tasks(variant)) {
            await task.beforeAll?.();
            try {
              if (task.measure) {
                const m = await task.measure();
                expect(m.opsPerSec, `${task.scenario} / ${task.impl}`).toBeGreaterThan(0);
                results.push({ scenario: task.scenario, impl: task.impl, macro: true, ...m, medians: m });
              } else {
                await task.fn();
                results.push({ scenario: task.scenario, impl: task.impl, opsPerSec: 1, nsPerOp: 1 });
              }
            } finally {
              await task.afterAll?.();
            }
          }
        } finally {
          process.env = saved;
          await fixture?.teardown?.();
        }
        const lines = (await mod.summary?.(results, variant)) ?? [];
        for (const line of lines) expect(typeof line.scenario).toBe('string');
      }
    });
  });
});

describe('bench runner', () => {
  let prev;
  beforeAll(() => {
    prev = process.exitCode;
  });
  afterAll(() => {
    process.exitCode = prev;
  });
  it('run.mjs runs a suite in child processes and prints one JSON line per result plus its ratio line', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--expose-gc', join(root, 'run.mjs'), 'limiter', '--json', '--repeat', '1'],
      { cwd: root, env: { ...process.env, BENCH_SMOKE: '1' }, timeout: 60_000 },
    );
    const lines = stdout
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l));
    expect(lines.some((l) => l.impl === 'kubeloop-client' && l.requestsInWindow > 0)).toBe(true);
    expect(lines.some((l) => 'ratio' in l)).toBe(true);
  });
});

// The smoke run of the bench suites (part of `npm test`): every scenario of a suite runs once, in the test's
// process, at a tiny size (BENCH_SMOKE=1), so a broken scenario — a renamed API, a replay server that no longer
// answers, a summary that throws — fails CI. Nothing about time is asserted. smoke.test.mjs calls smokeSuite for
// every suite in one process (a fixture's env is set for its tasks and restored after them).
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));
export const root = join(here, '..');
process.env.BENCH_SMOKE = '1';
// the older informer suite (envtest) has its own knobs
process.env.OBJECTS = '20';
process.env.UPDATES = '10';

/** Every suite folder of bench/. */
export const suites = readdirSync(root, { withFileTypes: true })
  .filter(
    (e) =>
      e.isDirectory() &&
      !e.name.startsWith('.') &&
      !['lib', 'node_modules', 'results', 'test', 'profiles', 'charts', 'client-go'].includes(e.name),
  )
  .map((e) => e.name)
  .sort();

/** The `*.bench.mjs` files of one suite. */
export const filesOf = (suite) =>
  readdirSync(join(root, suite))
    .filter((f) => f.endsWith('.bench.mjs'))
    .map((f) => ({ suite, file: join(root, suite, f), name: `${suite}/${f}` }));

/**
 * Sets `vars` in process.env and returns a function that puts back each one's earlier value — only where the
 * variable still holds what this call set. A test that vitest has timed out goes on running; when it finally
 * ends it must not undo the variables of the test that runs after it (replacing process.env wholesale did that,
 * and the next suite then failed with "run through run.mjs").
 */
function setEnv(vars) {
  const before = Object.entries(vars).map(([k, v]) => [k, process.env[k], String(v)]);
  for (const [k, , v] of before) process.env[k] = v;
  return () => {
    for (const [k, old, v] of before) {
      if (process.env[k] !== v) continue;
      if (old === undefined) delete process.env[k];
      else process.env[k] = old;
    }
  };
}

/** Registers one test per file of `suite`: every task once (each variant, with its fixture), then summary(). */
export function smokeSuite(suite) {
  describe.each(filesOf(suite))('bench smoke $name (tiny sizes, no timing asserted)', ({ file }) => {
    let mod;
    beforeAll(async () => {
      mod = await import(pathToFileURL(file).href);
    });

    it('runs every task once and summarises', async () => {
      const variants = mod.variants ? await mod.variants() : [undefined];
      for (const variant of variants) {
        const fixture = await mod.setup?.(variant);
        const restore = setEnv({
          ...(fixture?.env ?? {}),
          ...(variant !== undefined ? { BENCH_VARIANT: String(variant) } : {}),
        });
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
          restore();
          await fixture?.teardown?.();
        }
        const lines = (await mod.summary?.(results, variant)) ?? [];
        for (const line of lines) expect(typeof line.scenario).toBe('string');
      }
    });
  });
}

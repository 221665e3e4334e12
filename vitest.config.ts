import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import LongestFirstSequencer from './scripts/vitest/sequencer.ts';

/**
 * Coverage floors per package (percent), enforced by `npm test` (`vitest run --coverage`). Set from a measured
 * run and only ever raised: a change that lowers a package below its floor fails the run.
 */
const floors: Record<string, { statements: number; branches: number; functions: number; lines: number }> = {
  // Measured 2026-11-30 (statements / branches / functions / lines), floors about 2 points below.
  'apps/pod-counter': { statements: 43, branches: 22, functions: 40, lines: 44 }, // 45.6 / 24.3 / 42.0 / 46.0 (the CLI runs in subprocesses)
  'packages/builder': { statements: 89, branches: 81, functions: 88, lines: 92 }, // 91.7 / 83.4 / 90.9 / 94.5
  'packages/cache': { statements: 91, branches: 85, functions: 88, lines: 93 }, // 93.7 / 87.2 / 90.3 / 95.6
  'packages/core': { statements: 96, branches: 93, functions: 95, lines: 96 }, // 98.7 / 95.3 / 97.9 / 98.6 (2026-12-01)
  'packages/client': { statements: 91, branches: 83, functions: 91, lines: 94 }, // 93.5 / 85.8 / 93.2 / 96.2
  // Measured 2026-12-01 at its first landing: 79.7 / 74.5 / 84.7 / 83.7.
  'packages/crd': { statements: 77, branches: 72, functions: 82, lines: 81 },
  'packages/config': { statements: 90, branches: 84, functions: 92, lines: 91 }, // 92.3 / 86.5 / 94.5 / 93.3
  'packages/envtest': { statements: 84, branches: 75, functions: 84, lines: 87 }, // 86.1 / 77.6 / 86.3 / 89.4
  // Lowered 2026-12-02 to 86 / 74 / 87 / 88 while the chaos harness's real control-plane paths (chaos/run.ts,
  // chaos/schedule.ts) ran only with binaries; raised again once test/real-target.test.ts drove them over a
  // stand-in on envtest: measured 93.9 / 82.2 / 91.0 / 95.9 (2026-12-02, chaos/real/control-plane.ts excluded below).
  'packages/testing': { statements: 92, branches: 80, functions: 89, lines: 94 },
  'packages/webhook': { statements: 88, branches: 80, functions: 89, lines: 92 }, // 90.8 / 82.0 / 91.8 / 94.5 (2026-12-01)
  'packages/workqueue': { statements: 95, branches: 91, functions: 92, lines: 96 }, // 97.1 / 93.4 / 94.4 / 98.4
};

/**
 * Every npm workspace with a `vitest.config.ts`, as a project that extends the workspace's own `vitest.config.ts` (name, include,
 * timeouts stay there) with what the whole run shares: the MaxListeners guard, and how files are scheduled.
 *
 * Scheduling (measured on the 2-core CI box, see .ci/run): vitest's default is `cores - 1` workers, i.e. ONE on
 * 2 cores, so the ~200 files ran one after another although most of the suite waits on sockets and timers of
 * in-process API servers (a newcomer's `npm test` took 12-14 min that way). The run uses 3 workers with `CI` set
 * (as `.ci/run` does), else 3 or `cores - 1`, whichever is more; `VITEST_MAX_WORKERS=N` chooses any number. The
 * slow files start first, longest first, across projects (scripts/vitest/sequencer.ts), so the longest file does not
 * start last.
 */
const workspaces = (
  JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')).workspaces as string[]
).filter((dir) => existsSync(new URL(`./${dir}/vitest.config.ts`, import.meta.url)));

const guard = new URL('./scripts/vitest/fail-on-max-listeners.ts', import.meta.url).pathname;
const waitDefaults = new URL('./scripts/vitest/wait-for-defaults.ts', import.meta.url).pathname;

const projects: TestProjectInlineConfiguration[] = workspaces.map((dir) => ({
  extends: `./${dir}/vitest.config.ts`,
  root: `./${dir}`,
  test: { setupFiles: [guard, waitDefaults] },
}));

function maxWorkers(): number | undefined {
  const n = process.env.VITEST_MAX_WORKERS;
  if (n !== undefined && n !== '') {
    if (!/^[1-9]\d*$/.test(n))
      throw new Error(`VITEST_MAX_WORKERS must be a positive integer, not ${JSON.stringify(n)}`);
    return Number(n);
  }
  return process.env.CI ? 3 : Math.max(3, availableParallelism() - 1);
}

export default defineConfig({
  test: {
    projects,
    maxWorkers: maxWorkers(),
    sequence: { sequencer: LongestFirstSequencer },
    reporters: ['default', './scripts/summary-reporter.ts'],
    coverage: {
      provider: 'v8',
      include: ['packages/*/src/**/*.ts', 'apps/*/src/**/*.ts'],
      // Starts kube-apiserver and etcd from a folder of binaries: runs only where they exist (not in CI).
      exclude: ['packages/testing/src/chaos/real/control-plane.ts'],
      reporter: ['text-summary', 'json-summary'],
      reportsDirectory: 'coverage',
      thresholds: Object.fromEntries(Object.entries(floors).map(([dir, t]) => [`${dir}/src/**`, t])),
    },
  },
});

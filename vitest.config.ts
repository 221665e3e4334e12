import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: ['packages/*', 'apps/*', 'tests/*', 'bench'],
    reporters: ['default', './scripts/summary-reporter.ts'],
  },
});

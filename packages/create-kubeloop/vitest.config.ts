import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['@kubeloop/source'] },
  ssr: { resolve: { conditions: ['@kubeloop/source'] } },
  test: {
    name: 'create-kubeloop',
    include: ['test/**/*.test.ts'],
    // The template tests compile rendered projects and run them in subprocesses (tsc, npm, node, kubectl):
    // budgets a loaded 2-core box meets.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    isolate: false,
  },
});

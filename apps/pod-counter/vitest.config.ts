import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['@kubeloop/source'] },
  ssr: { resolve: { conditions: ['@kubeloop/source'] } },
  test: {
    name: '@kubeloop/pod-counter',
    include: ['test/**/*.test.ts'],
    // Budgets a loaded 2-core box meets (vitest's defaults, 5 s per test and 10 s per hook, are wall-clock limits
    // that tests spawning processes or starting servers missed at load 40: the soak, CONTRIBUTING.md).
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // One worker process and module graph for all files of a worker instead of a new process per file. No test
    // mocks modules or leaves global state; checked with 3 shuffled runs.
    isolate: false,
  },
});

import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['@kubeloop/source'] },
  ssr: { resolve: { conditions: ['@kubeloop/source'] } },
  test: {
    name: '@kubeloop/workqueue',
    include: ['test/**/*.test.ts'],
    // Budgets a loaded 2-core box meets (vitest's defaults, 5 s per test and 10 s per hook, are wall-clock limits
    // that tests spawning processes or starting servers missed at load 40: the soak, CONTRIBUTING.md).
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // One module graph for all files of a worker (no per-file re-import of the sources). No test
    // mocks modules or leaves global state; checked with the project run twice in order and twice --sequence.shuffle.
    isolate: false,
  },
});

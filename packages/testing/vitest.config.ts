import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['@kubeloop/source'] },
  ssr: { resolve: { conditions: ['@kubeloop/source'] } },
  test: {
    name: '@kubeloop/testing',
    include: ['test/**/*.test.ts'],
    // The chaos profile runs about a minute against a real in-process API server.
    testTimeout: 180_000,
    hookTimeout: 60_000,
    // One worker process and module graph for all files of a worker instead of a new process per file. No test
    // mocks modules or leaves global state; checked with 3 shuffled runs.
    isolate: false,
  },
});

import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['@kubeloop/source'] },
  ssr: { resolve: { conditions: ['@kubeloop/source'] } },
  test: {
    name: '@kubeloop/core',
    include: ['test/**/*.test.ts'],
    // One module graph for all files of a worker (no per-file re-import of the sources). No test mocks modules
    // or leaves global state behind.
    isolate: false,
  },
});

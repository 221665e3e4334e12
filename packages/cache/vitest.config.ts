import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['@kubeloop/source'] },
  ssr: { resolve: { conditions: ['@kubeloop/source'] } },
  test: {
    name: '@kubeloop/cache',
    include: ['test/**/*.test.ts'],
    // One module graph for all files of a worker (no per-file re-import of the sources; issue 16 CI time). No test
    // mocks modules or leaves global state; checked with the project run twice in order and twice --sequence.shuffle.
    isolate: false,
  },
});

import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['@kubeloop/source'] },
  ssr: { resolve: { conditions: ['@kubeloop/source'] } },
  test: {
    name: '@kubeloop/bench',
    include: ['test/**/*.test.mjs'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});

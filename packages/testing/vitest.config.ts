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
  },
});

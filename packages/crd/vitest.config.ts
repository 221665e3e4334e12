import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['@kubeloop/source'] },
  ssr: { resolve: { conditions: ['@kubeloop/source'] } },
  test: {
    name: '@kubeloop/crd',
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    isolate: false,
  },
});

import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['@kubeloop/source'] },
  ssr: { resolve: { conditions: ['@kubeloop/source'] } },
  test: {
    name: '@kubeloop/cache',
    include: ['test/**/*.test.ts'],
  },
});

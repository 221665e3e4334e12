import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['@kubeloop/source'] },
  ssr: { resolve: { conditions: ['@kubeloop/source'] } },
  test: {
    name: '@kubeloop/integration-tests',
    include: ['test/**/*.test.ts'],
    // One API server for the whole run (or the current cluster with USE_EXISTING_CLUSTER=true).
    globalSetup: ['./test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});

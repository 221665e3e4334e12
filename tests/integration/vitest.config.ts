import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['@kubeloop/source'] },
  ssr: { resolve: { conditions: ['@kubeloop/source'] } },
  test: {
    name: '@kubeloop/integration-tests',
    include: ['test/**/*.test.ts'],
    // One API server for the whole run (or the current cluster with USE_EXISTING_CLUSTER=true).
    globalSetup: ['./test/global-setup.ts'],
    // One module graph per worker instead of one per file. No module state, env var or process listener is
    // shared between files (audited: no leftover handles or listeners after any file); the failures seen while
    // switching were wall-clock budgets and short leases under load, fixed in the tests.
    isolate: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});

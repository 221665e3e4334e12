import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['@kubeloop/source'] },
  ssr: { resolve: { conditions: ['@kubeloop/source'] } },
  test: {
    name: '@kubeloop/examples',
    include: ['test/**/*.test.ts'],
    // One module graph per worker instead of one per file (the files import builder, cache, client and envtest
    // sources each): CI CPU 16.9 user-s isolated -> 11.6-14.0 user-s; no module state shared between files.
    isolate: false,
    testTimeout: 60_000,
    hookTimeout: 30_000,
  },
});

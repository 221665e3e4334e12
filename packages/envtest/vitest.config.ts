import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['@kubeloop/source'] },
  ssr: { resolve: { conditions: ['@kubeloop/source'] } },
  test: {
    name: '@kubeloop/envtest',
    include: ['test/**/*.test.ts'],
    // the kubectl conformance cases spawn several kubectl processes each (1–2 s apiece on a loaded 2-core CI box)
    testTimeout: 20_000,
  },
});

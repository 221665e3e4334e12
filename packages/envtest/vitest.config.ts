import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['@kubeloop/source'] },
  ssr: { resolve: { conditions: ['@kubeloop/source'] } },
  test: {
    name: '@kubeloop/envtest',
    include: ['test/**/*.test.ts'],
    // the kubectl conformance cases spawn several kubectl processes each (1–2 s apiece on a loaded 2-core CI box;
    // 20 s per test was missed by 13 of them at load 40, and a node start-up alone took 21 s there)
    testTimeout: 60_000,
    // vitest's 10 s per hook: servers started in beforeAll missed it at load 40 (the soak, CONTRIBUTING.md)
    hookTimeout: 30_000,
    // One module graph for all files of a worker (no per-file re-import of the sources). No test
    // mocks modules or leaves global state; checked with the project run twice in order and twice with shuffled file
    // order (--sequence.shuffle.files; the tests inside several files build on each other, so not shuffled).
    isolate: false,
  },
});

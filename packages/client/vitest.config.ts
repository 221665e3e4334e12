import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['@kubeloop/source'] },
  ssr: { resolve: { conditions: ['@kubeloop/source'] } },
  test: {
    name: '@kubeloop/client',
    include: ['test/**/*.test.ts'],
    // test/transport/hardening.test.ts calls global.gc() to show the request deadline survives a collection.
    execArgv: ['--expose-gc'],
  },
});

import { randomBytes } from 'node:crypto';
import { type ApiClient, Namespace, newClient } from '@kubeloop/client';
import { Environment } from '@kubeloop/envtest';
import { startTestTarget, type TestTarget, testTargetName } from '@kubeloop/testing';
import { afterAll, beforeAll } from 'vitest';

/**
 * Where the target-aware tests run: `KUBELOOP_TEST_TARGET=fake|envtest|cluster` (default envtest;
 * `USE_EXISTING_CLUSTER=true` means cluster). Read once, so `it.skipIf(target === 'fake')` can use it.
 */
export const target = testTargetName();

/** One target per test file (`startTestTarget`): its client, config (not on the fake), faults (not on a cluster). */
export function useTestTarget(): () => TestTarget {
  let t: TestTarget | undefined;
  beforeAll(async () => {
    t = await startTestTarget({ target, namespacePrefix: 'ex' });
  });
  afterAll(async () => {
    await t?.stop();
  });
  return () => t as TestTarget;
}

/** One envtest API server per test file, a client on it and a fresh namespace per call of `namespace()`. */
export function useEnvtest(): {
  env: () => Environment;
  client: () => ApiClient;
  namespace: () => Promise<string>;
} {
  let env: Environment | undefined;
  let client: ApiClient | undefined;
  let n = 0;
  beforeAll(async () => {
    env = new Environment();
    await env.start();
    client = newClient(env.config);
  });
  afterAll(async () => {
    await client?.close();
    await env?.stop();
  });
  return {
    env: () => env as Environment,
    client: () => client as ApiClient,
    namespace: async () => {
      // Random as well: on a shared cluster (USE_EXISTING_CLUSTER=true) a deleted namespace of an earlier run
      // can stay Terminating (no namespace controller), and process ids repeat between runs.
      const name = `ex-${process.pid}-${++n}-${randomBytes(3).toString('hex')}`;
      await (client as ApiClient).create(Namespace, { metadata: { name } });
      return name;
    },
  };
}

/** A minimal valid pod spec (envtest schedules nothing: the pod stays as written). */
export const podSpec = { containers: [{ name: 'c', image: 'registry.example/app:1' }] };

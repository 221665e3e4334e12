/**
 * One test, three targets: the same test file runs against the fake client, an in-process envtest API server
 * over HTTPS, or a real cluster, chosen by an environment variable — so a suite is fast by default and can be
 * pointed at the real thing without a line changed.
 */
import { type Client, type KubeObject, Namespace, newClient } from '@kubeloop/client';
import type { RestConfig } from '@kubeloop/config';
import { Environment, type FaultInjector } from '@kubeloop/envtest';
import { newFakeClient } from '../fake/fake-client.js';

/** Where a test runs. */
export type TestTargetName = 'fake' | 'envtest' | 'cluster';

/** The target names, in order of speed. */
export const TEST_TARGETS: readonly TestTargetName[] = ['fake', 'envtest', 'cluster'];

/**
 * The target the environment asks for: `KUBELOOP_TEST_TARGET` (`fake`, `envtest` or `cluster`), else
 * `cluster` when `USE_EXISTING_CLUSTER=true` (controller-runtime envtest's switch), else `envtest`.
 * @throws TypeError naming `KUBELOOP_TEST_TARGET` and the allowed values when it holds anything else.
 */
export function testTargetName(env: NodeJS.ProcessEnv = process.env): TestTargetName {
  const v = env.KUBELOOP_TEST_TARGET;
  if (v !== undefined && v !== '') {
    if (!(TEST_TARGETS as readonly string[]).includes(v))
      throw new TypeError(`KUBELOOP_TEST_TARGET must be one of ${TEST_TARGETS.join(', ')}; got "${v}"`);
    return v as TestTargetName;
  }
  return env.USE_EXISTING_CLUSTER === 'true' ? 'cluster' : 'envtest';
}

/** Options of {@link startTestTarget}. */
export interface TestTargetOptions {
  /** @defaultValue {@link testTargetName}() */
  readonly target?: TestTargetName;
  /** CustomResourceDefinitions to install (and wait for) before the tests. */
  readonly crds?: readonly KubeObject[];
  /** Prefix of the namespaces {@link TestTarget.namespace} makes. @defaultValue `'test'` */
  readonly namespacePrefix?: string;
}

/** A running target: a client on it, and what the target offers beyond the client. */
export interface TestTarget {
  readonly name: TestTargetName;
  /** The client: the fake on `fake`, the live client (`newClient`) on `envtest` and `cluster`. */
  readonly client: Client;
  /**
   * The `RestConfig` for a manager or another client; `undefined` on `fake`, which has no listener — a test
   * that needs a manager skips there (or uses `testReconciler`, which runs on every target).
   */
  readonly config: RestConfig | undefined;
  /** envtest's fault rules; `undefined` on `cluster` (fault tests skip there). */
  readonly faults: FaultInjector | undefined;
  /**
   * A new namespace with a unique name (prefix, process id, counter, random suffix: a terminating namespace
   * of an earlier run on a shared cluster cannot collide). On `cluster` it is deleted by {@link TestTarget.stop}.
   */
  namespace(): Promise<string>;
  /** Deletes the namespaces made on a cluster, closes the client, stops the server. */
  stop(): Promise<void>;
}

let counter = 0;

/**
 * Starts the target `options.target` (default from the environment, {@link testTargetName}): `fake` makes a
 * `newFakeClient` (envtest's semantics in process, no sockets), `envtest` starts an in-process envtest
 * `Environment` and a live client over HTTPS, `cluster` uses the cluster of the kubeconfig (`KUBECONFIG`, as
 * envtest's `USE_EXISTING_CLUSTER=true`). CRDs in `options.crds` are installed on each.
 * @throws TypeError for a bad `KUBELOOP_TEST_TARGET`; what `Environment.start` throws (no kubeconfig, CRD not
 *   established in time).
 */
export async function startTestTarget(options: TestTargetOptions = {}): Promise<TestTarget> {
  const name = options.target ?? testTargetName();
  const prefix = options.namespacePrefix ?? 'test';
  if (name === 'fake') {
    const fake = await newFakeClient({ objects: options.crds ?? [] });
    return target(name, fake, undefined, fake.faults, prefix, () => fake.close(), false);
  }
  const env = new Environment({
    useExistingCluster: name === 'cluster',
    // the target alone decides the mode (envtest: the in-process server, never a KUBEBUILDER_ASSETS control
    // plane); a cluster is found through KUBECONFIG
    env: name === 'cluster' ? process.env : {},
    ...(options.crds ? { crds: options.crds as never } : {}),
  });
  const config = await env.start();
  const client = newClient(config);
  return target(
    name,
    client,
    config,
    env.server?.faults,
    prefix,
    async () => {
      await client.close();
      await env.stop();
    },
    name === 'cluster',
  );
}

function target(
  name: TestTargetName,
  client: Client,
  config: RestConfig | undefined,
  faults: FaultInjector | undefined,
  prefix: string,
  close: () => Promise<void>,
  cleanUp: boolean,
): TestTarget {
  const made: string[] = [];
  return {
    name,
    client,
    config,
    faults,
    async namespace() {
      const ns = `${prefix}-${process.pid}-${++counter}-${Math.random().toString(36).slice(2, 7)}`;
      await client.create(Namespace, { metadata: { name: ns } });
      made.push(ns);
      return ns;
    },
    async stop() {
      try {
        if (cleanUp) await Promise.allSettled(made.map((ns) => client.delete(Namespace, { name: ns })));
      } finally {
        await close();
      }
    },
  };
}

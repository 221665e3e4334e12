import { randomBytes } from 'node:crypto';
import type { Logger } from '@kubeloop/builder';
import { type ApiClient, isNotFound, Namespace, newClient } from '@kubeloop/client';
import { getConfig, type RestConfig } from '@kubeloop/config';
import { afterEach, inject, vi } from 'vitest';

/** The RestConfig of the run's API server (envtest, or the current cluster). */
export function testConfig(): RestConfig {
  return getConfig({ kubeconfig: inject('kubeconfigPath'), argv: [], appName: 'kubeloop-integration' });
}

/** A fresh namespace name, unique per test. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

/** Creates a namespace and returns a cleanup that deletes it (ignoring NotFound). */
export async function withNamespace(client: ApiClient, name: string): Promise<() => Promise<void>> {
  await client.create(Namespace, { metadata: { name } });
  return async () => {
    try {
      await client.delete(Namespace, { name });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  };
}

export function liveClient(): ApiClient {
  return newClient(testConfig());
}

/** What {@link useLiveCluster} gives a test file. */
export interface LiveCluster {
  /** Run after each test, last in first out. */
  readonly cleanups: Array<() => Promise<void>>;
  /** A client of the run's API server, closed after the test. */
  client(): ApiClient;
  /** A client and a fresh namespace named after `prefix`, both removed after the test. */
  namespace(prefix: string): Promise<{ api: ApiClient; ns: string }>;
}

/**
 * The shared-cluster setup of a test file (call it inside the `describe` block): per-test cleanups, live
 * clients and fresh namespaces on the run's API server (envtest, or the current cluster).
 */
export function useLiveCluster(): LiveCluster {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });
  const client = () => {
    const api = liveClient();
    cleanups.push(() => api.close());
    return api;
  };
  return {
    cleanups,
    client,
    async namespace(prefix) {
      const api = client();
      const ns = uniqueName(prefix);
      cleanups.push(await withNamespace(api, ns));
      return { api, ns };
    },
  };
}

/**
 * Waits until `cond` is true, on vitest's `vi.waitFor` (polled every 20 ms); fails with `what` when the wait ends.
 * The wait lasts until the test's own timeout is nearly up, or `deadlineMs` if that is longer
 * (scripts/vitest/wait-for-defaults.ts): a short timer of its own failed conditions that were about to hold on a
 * loaded box. A thin shape over vi.waitFor for conditions that return a boolean; never a fixed sleep.
 */
export async function waitFor(
  cond: () => boolean | Promise<boolean>,
  what: string | (() => string),
  deadlineMs?: number,
): Promise<void> {
  const started = Date.now();
  await vi.waitFor(
    async () => {
      if (!(await cond()))
        throw new Error(
          `timed out after ${Date.now() - started} ms waiting for ${typeof what === 'string' ? what : what()}`,
        );
    },
    { ...(deadlineMs === undefined ? {} : { timeout: deadlineMs }), interval: 20 },
  );
}

/** One captured log record: bound fields, record fields, `level` and `msg`. */
export type LogRecord = Record<string, unknown> & { level: string; msg: string };

/** A Logger that keeps every record in `records` (children share it). */
export function captureLogger(records: LogRecord[], bound: Record<string, unknown> = {}): Logger {
  const at = (level: string) => (fields: Record<string, unknown>, msg: string) => {
    records.push({ ...bound, ...fields, level, msg });
  };
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (b) => captureLogger(records, { ...bound, ...b }),
  };
}

export function podManifest(namespace: string, name: string, labels: Record<string, string> = {}) {
  return {
    metadata: { namespace, name, labels },
    spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
  };
}

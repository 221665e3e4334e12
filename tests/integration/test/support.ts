import { randomBytes } from 'node:crypto';
import type { Logger } from '@kubeloop/builder';
import { type ApiClient, isNotFound, Namespace, newClient } from '@kubeloop/client';
import { getConfig, type RestConfig } from '@kubeloop/config';
import { inject } from 'vitest';

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

/** Polls `cond` until it is true; fails with `what` after `deadlineMs`. Never a fixed sleep. */
export async function waitFor(
  cond: () => boolean | Promise<boolean>,
  what: string | (() => string),
  deadlineMs = 20_000,
): Promise<void> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    if (await cond()) return;
    if (Date.now() > until)
      throw new Error(
        `timed out after ${deadlineMs} ms waiting for ${typeof what === 'string' ? what : what()}`,
      );
    await new Promise((r) => setTimeout(r, 20));
  }
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

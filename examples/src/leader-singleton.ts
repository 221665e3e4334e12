/**
 * A leader-elected singleton without a manager (`@kubeloop/builder/leaderelection`): several replicas run
 * the same program, one Lease (coordination.k8s.io/v1) decides which one does the work, as client-go's
 * `leaderelection.RunOrDie` with a `resourcelock.LeaseLock`. The work gets a signal that aborts the moment
 * leadership is lost (at the latest `renewDeadlineMs` after the last renew was sent, before another replica
 * can acquire); with `releaseOnCancel` a replica that stops clears the holder, so a standby takes over at
 * once instead of after `leaseDurationMs`. Run two copies:
 * `node --experimental-strip-types examples/src/leader-singleton.ts replica-a` (and `replica-b`).
 */

import { LeaderElector, LeaseLock } from '@kubeloop/builder/leaderelection';
import type { ApiClient } from '@kubeloop/client';
import { newClient } from '@kubeloop/client';
import { getConfig } from '@kubeloop/config';

/** Options of {@link runSingleton}; times in milliseconds. */
export interface SingletonOptions {
  readonly client: ApiClient;
  readonly namespace: string;
  readonly leaseName: string;
  /** This replica's identity, written to the Lease's holderIdentity (e.g. the pod name). */
  readonly identity: string;
  /** The leader-only work: runs while this replica leads, must stop when `signal` aborts. */
  readonly work: (signal: AbortSignal) => Promise<void>;
  /** @defaultValue 15000, 10000, 2000 (client-go's defaults) */
  readonly leaseDurationMs?: number;
  readonly renewDeadlineMs?: number;
  readonly retryPeriodMs?: number;
}

/** Campaigns for the Lease until `signal` aborts; runs `work` while leading. Resolves when stopped. */
export async function runSingleton(options: SingletonOptions, signal: AbortSignal): Promise<void> {
  const lock = new LeaseLock({
    client: options.client,
    namespace: options.namespace,
    name: options.leaseName,
    identity: options.identity,
  });
  const elector = new LeaderElector({
    lock,
    releaseOnCancel: true,
    ...(options.leaseDurationMs !== undefined ? { leaseDurationMs: options.leaseDurationMs } : {}),
    ...(options.renewDeadlineMs !== undefined ? { renewDeadlineMs: options.renewDeadlineMs } : {}),
    ...(options.retryPeriodMs !== undefined ? { retryPeriodMs: options.retryPeriodMs } : {}),
  });
  let working: Promise<void> = Promise.resolve();
  await elector.run(signal, {
    onStartedLeading: (leading) => {
      working = options.work(leading).catch(() => undefined);
    },
  });
  await working;
}

async function main(): Promise<void> {
  const identity = process.argv[2] ?? `replica-${process.pid}`;
  const client = newClient(getConfig());
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  process.once('SIGTERM', () => stop.abort());
  await runSingleton(
    {
      client,
      namespace: 'default',
      leaseName: 'example-singleton',
      identity,
      work: async (leading) => {
        console.log(identity, 'leads');
        await new Promise<void>((resolve) =>
          leading.addEventListener('abort', () => resolve(), { once: true }),
        );
        console.log(identity, 'stopped leading');
      },
    },
    stop.signal,
  );
  await client.close();
}

if (process.argv[1] === new URL(import.meta.url).pathname) await main();

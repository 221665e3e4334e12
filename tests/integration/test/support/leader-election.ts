import { setTimeout as sleep } from 'node:timers/promises';
import {
  type LeaderElectorHook,
  type Logger,
  type Manager,
  newManager,
  newMetricsRegistry,
} from '@kubeloop/builder';
import { LeaseKind, type LeaseObject } from '@kubeloop/builder/leaderelection';
import { type ApiClient, ConfigMap, isAlreadyExists } from '@kubeloop/client';
import type { RestConfig } from '@kubeloop/config';
import type { ApiServer } from '@kubeloop/envtest';
import { afterEach } from 'vitest';
import { type FaultServerContext, useFaultServer } from './fault-server.js';

/**
 * Short lease timings for tests (ms): lease 4 s, renew deadline 3 s, retry 0.5 s. Not shorter: replicas on the
 * real clock share the test worker's event loop, and on the loaded CI box (load 12-17) a leader with a 1.5 s
 * renew deadline lost its lease in the middle of tests that are not about losing it (C23 "A stamping on").
 */
export const FAST = { leaseDurationMs: 4000, renewDeadlineMs: 3000, retryPeriodMs: 500 } as const;

/** A Lease's timings, in ms (leader election's LeaseDuration, RenewDeadline, RetryPeriod). */
export interface LeaseTimings {
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
}

/** One manager replica with a leader-only runnable that writes `stamp-<identity>` every 100 ms. */
export interface Replica {
  readonly identity: string;
  readonly token: string;
  readonly mgr: Manager;
  readonly registry: ReturnType<typeof newMetricsRegistry>;
  /** Wall-clock intervals (ms since the epoch) during which the leader-only work ran. */
  readonly led: Array<{ from: number; to?: number }>;
  /** Number of stamps written. */
  stamps: number;
  /** For each stamp written, the time its request was sent, on the replica's `now` (default the wall clock). */
  readonly stampTimes: number[];
  /** Errors of the stamping loop (not counting aborts), for failure messages. */
  readonly errors: string[];
  readonly stop: AbortController;
  /** `mgr.start`'s outcome: undefined when it resolved, else the error. */
  readonly done: Promise<unknown>;
}

/** The bearer token of replica `identity` (registered with the server via {@link replicaTokens}). */
export function tokenOf(identity: string): string {
  return `token-${identity}`;
}

export function replicaTokens(...identities: string[]): string[] {
  return identities.map(tokenOf);
}

/** Config of the in-process server for a replica's own token (so faults can target one replica). */
export function replicaConfig(server: ApiServer, identity: string): RestConfig {
  return {
    host: server.url,
    tlsClientConfig: { caData: server.caPem },
    bearerToken: tokenOf(identity),
    qps: -1,
    burst: 0,
    timeoutMs: 0,
    userAgent: `replica-${identity}`,
  };
}

/**
 * Starts a replica: leader election on `lease` in `namespace`, plus the stamping leader-only runnable. `target`
 * is the in-process server (the replica then uses its own token, {@link replicaConfig}) or a RestConfig (the
 * run's API server, real cluster included).
 */
export function startReplica(
  target: ApiServer | RestConfig,
  identity: string,
  namespace: string,
  lease: string,
  extra: {
    releaseOnCancel?: boolean;
    logger?: Logger;
    gracefulShutdownTimeoutMs?: number;
    /** The manager's leader elector (e.g. one on a fake clock); default the one the options build. */
    leaderElector?: LeaderElectorHook;
    /** The clock of {@link Replica.stampTimes} (the fake clock of a fake-clock elector). @defaultValue Date.now */
    now?: () => number;
    timings?: LeaseTimings;
  } = {},
): Replica {
  const registry = newMetricsRegistry();
  const config = 'faults' in target ? replicaConfig(target, identity) : target;
  const mgr = newManager(config, {
    logger: extra.logger,
    cache: { defaultNamespaces: [namespace] },
    metrics: { registry },
    leaderElection: {
      id: lease,
      namespace,
      identity,
      releaseOnCancel: extra.releaseOnCancel ?? false,
      ...(extra.timings ?? FAST),
      elector: extra.leaderElector,
    },
    gracefulShutdownTimeoutMs: extra.gracefulShutdownTimeoutMs ?? 5000,
  });
  const stop = new AbortController();
  const replica: Replica = {
    identity,
    token: tokenOf(identity),
    mgr,
    registry,
    led: [],
    stamps: 0,
    stampTimes: [],
    errors: [],
    stop,
    done: Promise.resolve(undefined),
  };
  const client = mgr.getClient();
  mgr.add({
    async start(signal) {
      const interval = { from: Date.now() } as { from: number; to?: number };
      replica.led.push(interval);
      try {
        let created = false;
        while (!signal.aborted) {
          try {
            if (!created) {
              await client
                .create(
                  ConfigMap,
                  { metadata: { namespace, name: `stamp-${identity}` }, data: { n: '0' } },
                  { signal },
                )
                .catch((e: unknown) => {
                  if (!isAlreadyExists(e)) throw e;
                });
              created = true;
            }
            const sentAt = (extra.now ?? Date.now)();
            await client.patch(
              ConfigMap,
              { namespace, name: `stamp-${identity}` },
              { type: 'merge', data: { data: { n: String(replica.stamps + 1) } } },
              { signal },
            );
            replica.stamps += 1;
            replica.stampTimes.push(sentAt);
          } catch (e) {
            // aborted or failed (the loop condition decides); a failed create is tried again
            if (!signal.aborted) replica.errors.push(String(e));
          }
          // Abortable sleep whose abort listener goes away with the timer (one per loop piled up before).
          await sleep(100, undefined, { signal }).catch(() => undefined);
        }
      } finally {
        interval.to = Date.now();
      }
    },
  });
  (replica as { done: Promise<unknown> }).done = mgr.start(stop.signal).then(
    () => undefined,
    (err: unknown) => err,
  );
  return replica;
}

/** Whether any two recorded leadership intervals overlap (an open interval runs until `now`). */
export function overlaps(replicas: readonly Replica[], now = Date.now()): string | undefined {
  const all = replicas.flatMap((r) => r.led.map((i) => ({ id: r.identity, from: i.from, to: i.to ?? now })));
  for (let i = 0; i < all.length; i++) {
    for (let j = i + 1; j < all.length; j++) {
      const a = all[i]!;
      const b = all[j]!;
      if (a.id !== b.id && a.from < b.to && b.from < a.to) {
        return `${a.id} [${a.from}, ${a.to}] overlaps ${b.id} [${b.from}, ${b.to}]`;
      }
    }
  }
  return undefined;
}

/** One write of the Lease as a watcher saw it. */
export interface LeaseWrite {
  /** Wall clock when the watch delivered it (ms since the epoch). */
  readonly time: number;
  readonly type: string;
  readonly holder: string;
  readonly leaseDurationSeconds: number | undefined;
  readonly leaseTransitions: number | undefined;
}

/**
 * Records every write of the Leases in `namespace` through a watch (the Lease's write history). Returns the
 * list it fills, why each watch ended before `stop` (`ends`), and a stop function. A watch that ends or fails is
 * opened again from the last resourceVersion it delivered, so no write is missed: a real kube-apiserver on a
 * loaded box ended the one watch of a C22 test before B's acquire, which the history then never showed.
 */
export function watchLeases(
  api: ApiClient,
  namespace: string,
): { writes: LeaseWrite[]; ends: string[]; stop: () => void } {
  const writes: LeaseWrite[] = [];
  const ends: string[] = [];
  const ac = new AbortController();
  void (async () => {
    let resourceVersion: string | undefined;
    while (!ac.signal.aborted) {
      try {
        for await (const ev of api.watch(LeaseKind, {
          namespace,
          signal: ac.signal,
          ...(resourceVersion ? { resourceVersion } : {}),
        })) {
          if (ev.type !== 'ADDED' && ev.type !== 'MODIFIED') continue;
          const lease = ev.object as LeaseObject;
          resourceVersion = lease.metadata?.resourceVersion ?? resourceVersion;
          const spec = lease.spec;
          writes.push({
            time: Date.now(),
            type: ev.type,
            holder: spec?.holderIdentity ?? '',
            leaseDurationSeconds: spec?.leaseDurationSeconds,
            leaseTransitions: spec?.leaseTransitions,
          });
        }
        if (!ac.signal.aborted) ends.push('the watch ended');
      } catch (err) {
        if (!ac.signal.aborted) ends.push(String(err));
      }
      if (!ac.signal.aborted) await sleep(100, undefined, { signal: ac.signal }).catch(() => undefined);
    }
  })();
  return { writes, ends, stop: () => ac.abort() };
}

/** What {@link useReplicaServer} gives a test file: the fault server (its `api` is the admin client) and replicas. */
export interface ReplicaServerContext extends FaultServerContext {
  /** The replicas a test started (push them here): stopped and awaited after each test. */
  readonly replicas: Replica[];
}

/**
 * The shared setup of the leader-election files (call it inside the `describe` block): one in-process server
 * that accepts the bearer tokens of `identities` ({@link useFaultServer}), and replicas stopped after each test.
 */
export function useReplicaServer(userAgent: string, ...identities: string[]): ReplicaServerContext {
  const replicas: Replica[] = [];
  // Registered before the server's hooks, so it runs after them (vitest runs after-hooks as a stack): the fault
  // rules are reset before the replicas stop, so that their last writes (a release) reach the server.
  afterEach(async () => {
    for (const r of replicas.splice(0)) {
      r.stop.abort();
      await r.done;
    }
  });
  return Object.assign(useFaultServer(userAgent, { tokens: replicaTokens(...identities) }), { replicas });
}

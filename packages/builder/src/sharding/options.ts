import type { Clock } from '@kubeloop/core';
import type { Registry } from 'prom-client';
import type { Logger } from '../logger.js';
import type { Request } from '../reconcile.js';
import { ShardingConfigError } from './errors.js';

/** Options of {@link newSharding}. */
export interface ShardingOptions {
  /** Name of the sharding group; member Leases are `<name>-shard-<identity>`, labelled `shard.kubeloop.dev/name=<name>`. */
  readonly name: string;
  /** Namespace of the member Leases. */
  readonly namespace: string;
  /**
   * This replica's identity: lower-case letters, digits, `-` and `.` (it is part of a Lease name).
   * @defaultValue `<hostname>-<8 random hex digits>`, sanitised
   */
  readonly identity?: string;
  /** The key a request is sharded by. @defaultValue `namespace/name` (e.g. `(r) => r.namespace` keeps a namespace together) */
  readonly shardKey?: (req: Request) => string;
  /** A member Lease is live this long after it was last seen changing, in ms. @defaultValue 15000 */
  readonly leaseDurationMs?: number;
  /** A replica that could not renew for this long stops all reconciles, in ms; < leaseDurationMs. @defaultValue 10000 */
  readonly renewDeadlineMs?: number;
  /** Period of renewing and reading the member Leases, in ms. @defaultValue 2000 */
  readonly retryPeriodMs?: number;
  /**
   * How long a reconcile of a key that moved away may run on before its `ctx.signal` is aborted, in ms.
   * The hand-over waits for it to return either way. @defaultValue 10000
   */
  readonly drainTimeoutMs?: number;
  /**
   * At most this many passed-over requests are remembered per sharded controller (per cluster for a
   * multi-cluster one): events of keys this replica did not own or got while fenced, and reconciles the
   * hand-over gate refused. They are enqueued at the first refresh that permits their key — what makes a
   * deletion seen meanwhile reconciled (its object is gone from the cache, so no re-list finds it). The
   * oldest go first (metric `kubeloop_shard_dropped_requests_evicted_total`). @defaultValue 10000
   */
  readonly maxDroppedRequests?: number;
  /** Clock of liveness, deadlines and the loop (tests). @defaultValue the real clock */
  readonly clock?: Clock;
  /** @defaultValue the manager's logger */
  readonly logger?: Logger;
  /** Where the `kubeloop_shard_*` metrics go. @defaultValue the manager's registry */
  readonly metricsRegistry?: Registry;
}

const IDENTITY = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

function defaultShardIdentity(): string {
  const host = (process.env.HOSTNAME ?? 'replica')
    .toLowerCase()
    .replace(/[^-a-z0-9.]/g, '-')
    .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, '')
    .slice(0, 40);
  const rnd = Math.floor(Math.random() * 0x1_0000_0000)
    .toString(16)
    .padStart(8, '0');
  return `${host || 'replica'}-${rnd}`;
}

/**
 * The identity and timings of `options`, checked and defaulted.
 * @throws ShardingConfigError for an empty name or namespace, a bad identity, or timings not ordered
 *   `leaseDurationMs > renewDeadlineMs > retryPeriodMs > 0`.
 * @internal
 */
export function resolveShardingOptions(options: ShardingOptions): {
  readonly identity: string;
  readonly leaseMs: number;
  readonly renewMs: number;
  readonly retryMs: number;
} {
  if (!options.name) throw new ShardingConfigError('sharding: name is empty');
  if (!options.namespace) throw new ShardingConfigError('sharding: namespace is empty');
  const identity = options.identity ?? defaultShardIdentity();
  if (!IDENTITY.test(identity) || identity.length > 63) {
    throw new ShardingConfigError(
      `sharding: identity ${JSON.stringify(identity)} must be at most 63 lower-case letters, digits, '-' or '.', starting and ending with a letter or digit`,
    );
  }
  const leaseMs = options.leaseDurationMs ?? 15_000;
  const renewMs = options.renewDeadlineMs ?? 10_000;
  const retryMs = options.retryPeriodMs ?? 2_000;
  if (!(leaseMs > renewMs) || !(renewMs > retryMs) || !(retryMs > 0)) {
    throw new ShardingConfigError(
      `sharding: need leaseDurationMs > renewDeadlineMs > retryPeriodMs > 0, got ${leaseMs} / ${renewMs} / ${retryMs}`,
    );
  }
  return { identity, leaseMs, renewMs, retryMs };
}

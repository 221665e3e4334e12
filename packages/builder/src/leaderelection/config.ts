import type { Clock } from '@kubeloop/core';
import type { Logger } from '../logger.js';
import type { ResourceLock } from './resource-lock.js';

/** client-go's `JitterFactor`: the acquire loop waits `retryPeriod × (1 + 1.2 × random)`. */
export const JITTER_FACTOR = 1.2;

export {
  DEFAULT_LEASE_DURATION_MS,
  DEFAULT_RENEW_DEADLINE_MS,
  DEFAULT_RETRY_PERIOD_MS,
} from './defaults.js';

/** What a leader elector tells its user (client-go `LeaderCallbacks`); every member is optional. */
export interface LeaderCallbacks {
  /**
   * This replica won. `signal` aborts the moment leadership ends — on a lost lease at the latest
   * `renewDeadlineMs` after the last successful renew was sent, before any other replica can acquire.
   * Work guarded by the lease must stop when it aborts.
   */
  onStartedLeading?(signal: AbortSignal): void;
  /** Leadership ended (lost, or `run`'s signal aborted) — called once, only after `onStartedLeading`. */
  onStoppedLeading?(info: { readonly lost: boolean }): void;
  /** Another (or this) identity was seen holding the lock; `''` when nobody holds it. */
  onNewLeader?(identity: string): void;
  /**
   * Asked before a release-on-cancel: `false` keeps the lease (others wait for it to expire) — e.g.
   * because guarded work did not stop in time. @defaultValue always `true`
   */
  mayRelease?(): boolean;
}

/** Where a leader elector reports (controller-runtime's `leader_election_master_status` and slow-path counter). */
export interface LeaderElectionMetrics {
  /** This replica leads the lock `name` (gauge to 1). */
  leaderOn(name: string): void;
  /** This replica does not lead `name` (gauge to 0); also called once at construction. */
  leaderOff(name: string): void;
  /** A renew had to re-read the lock after the optimistic update failed. */
  slowpathExercised?(name: string): void;
}

/** Configuration of a {@link LeaderElector} (client-go `LeaderElectionConfig`). All durations in ms. */
export interface LeaderElectionConfig {
  readonly lock: ResourceLock;
  /**
   * How long others wait, after last seeing the record change on **their own** clock, before they may take
   * the lock. Written to the Lease rounded **up** to whole seconds. @defaultValue 15000
   */
  readonly leaseDurationMs?: number;
  /**
   * A leader stops leading when it has not renewed for this long (measured from when the last successful
   * renew was sent). Must be < `leaseDurationMs`. @defaultValue 10000
   */
  readonly renewDeadlineMs?: number;
  /** Pause between attempts; must satisfy `renewDeadlineMs > 1.2 × retryPeriodMs`. @defaultValue 2000 */
  readonly retryPeriodMs?: number;
  /** On `run`'s signal, clear the holder so others need not wait for expiry. @defaultValue false */
  readonly releaseOnCancel?: boolean;
  /** Name for logs and metrics. @defaultValue the lock's `describe()` (`namespace/name`) */
  readonly name?: string;
  readonly callbacks?: LeaderCallbacks;
  readonly metrics?: LeaderElectionMetrics;
  readonly logger?: Logger;
  /** Clock for every protocol timer (retry, expiry, renew deadline); tests inject a fake. */
  readonly clock?: Clock;
  /** Wall-clock time written to the Lease (only informative). @defaultValue `() => new Date()` */
  readonly wallClock?: () => Date;
  /** Random source in [0, 1) for the acquire jitter. @defaultValue Math.random */
  readonly random?: () => number;
}

import { isNotFound } from '@kubeloop/client';
import { type Clock, onAbort, realClock } from '@kubeloop/core';
import { signalWithTimeout } from '../internal-signals.js';
import { discardLogger, type Logger } from '../logger.js';
import {
  DEFAULT_LEASE_DURATION_MS,
  DEFAULT_RENEW_DEADLINE_MS,
  DEFAULT_RETRY_PERIOD_MS,
  JITTER_FACTOR,
  type LeaderCallbacks,
  type LeaderElectionConfig,
  type LeaderElectionMetrics,
} from './config.js';
import { LeaderElectionConfigError } from './errors.js';
import type { LeaderElectionRecord } from './record.js';
import { type ResourceLock, rawOf } from './resource-lock.js';

/**
 * A leader elector on one {@link ResourceLock} (client-go `tools/leaderelection.LeaderElector`).
 *
 * - `run` tries to acquire every `retryPeriodMs × (1 + 1.2 × random)`; a lock is free when its holder is
 *   empty, or when the record has not changed for its `leaseDurationSeconds` **as measured on this
 *   process's clock since it last saw the record change** — the times written in the Lease are never
 *   compared with the local clock, so clock skew between replicas does no harm.
 * - Once leading it renews every `retryPeriodMs`. If no renew succeeded within `renewDeadlineMs` of the
 *   last successful one being sent — or a read shows another holder — it stops leading at once (the leader
 *   signal aborts) and `run` resolves. Since others wait `leaseDuration` (> `renewDeadline`) from after
 *   that renew reached the server, no other replica can have acquired by then.
 * - Each Lease request is bounded by the lock's client timeout and by the leader signal.
 * - With `releaseOnCancel`, aborting `run`'s signal while leading writes the record once more with an empty
 *   holder, `leaseDurationSeconds: 1` (the API server refuses 0) and the same transition count, using a
 *   fresh signal bounded by `renewDeadlineMs` (the caller's is already aborted). A failed release (e.g. 409
 *   because someone else wrote) is logged once; others then wait for expiry. A replica that never led, or
 *   that lost the lease, writes nothing on the way out.
 */
export class LeaderElector {
  readonly #lock: ResourceLock;
  readonly #leaseDurationMs: number;
  readonly #renewDeadlineMs: number;
  readonly #retryPeriodMs: number;
  readonly #releaseOnCancel: boolean;
  readonly #name: string;
  readonly #callbacks: LeaderCallbacks;
  readonly #metrics: LeaderElectionMetrics | undefined;
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #wall: () => Date;
  readonly #random: () => number;
  #observed: LeaderElectionRecord | undefined;
  #observedRaw = '';
  #observedTime = 0;
  #reportedLeader: string | undefined;
  #running = false;
  #runCallbacks: LeaderCallbacks[] = [];

  /** @throws LeaderElectionConfigError when the durations break `leaseDuration > renewDeadline > 1.2 × retryPeriod > 0`. */
  constructor(config: LeaderElectionConfig) {
    const lease = config.leaseDurationMs ?? DEFAULT_LEASE_DURATION_MS;
    const renew = config.renewDeadlineMs ?? DEFAULT_RENEW_DEADLINE_MS;
    const retry = config.retryPeriodMs ?? DEFAULT_RETRY_PERIOD_MS;
    for (const [n, v] of [
      ['leaseDurationMs', lease],
      ['renewDeadlineMs', renew],
      ['retryPeriodMs', retry],
    ] as const) {
      if (!Number.isFinite(v) || v <= 0) {
        throw new LeaderElectionConfigError(`${n} must be a positive number of ms, got ${v}`);
      }
    }
    if (lease <= renew) {
      throw new LeaderElectionConfigError(
        `leaseDurationMs (${lease}) must be greater than renewDeadlineMs (${renew})`,
      );
    }
    if (renew <= JITTER_FACTOR * retry) {
      throw new LeaderElectionConfigError(
        `renewDeadlineMs (${renew}) must be greater than retryPeriodMs × ${JITTER_FACTOR} (${JITTER_FACTOR * retry})`,
      );
    }
    if (!config.lock) throw new LeaderElectionConfigError('a lock is required');
    if (!config.lock.identity()) throw new LeaderElectionConfigError('the lock identity is empty');
    this.#lock = config.lock;
    this.#leaseDurationMs = lease;
    this.#renewDeadlineMs = renew;
    this.#retryPeriodMs = retry;
    this.#releaseOnCancel = config.releaseOnCancel ?? false;
    this.#name = config.name ?? config.lock.describe();
    this.#callbacks = config.callbacks ?? {};
    this.#metrics = config.metrics;
    this.#clock = config.clock ?? realClock;
    this.#wall = config.wallClock ?? (() => new Date());
    this.#random = config.random ?? Math.random;
    this.#log = (config.logger ?? discardLogger).child({ lease: config.lock.describe() });
    this.#metrics?.leaderOff(this.#name);
  }

  /** This candidate's identity. */
  identity(): string {
    return this.#lock.identity();
  }

  /** Whether the last record this replica saw or wrote names it as holder. */
  isLeader(): boolean {
    return this.#observed?.holderIdentity === this.#lock.identity();
  }

  /** The holder in the last record seen (`''` when none or not read yet). */
  getLeader(): string {
    return this.#observed?.holderIdentity ?? '';
  }

  /**
   * Campaigns until `signal` aborts or leadership, once won, is lost; see the class doc. `callbacks` are
   * called after the config's own. A `run` may be called once per elector.
   * @returns resolves when done (never rejects for API errors: they are retried and logged).
   * @throws LeaderElectionConfigError when called twice.
   */
  async run(signal: AbortSignal, callbacks: LeaderCallbacks = {}): Promise<void> {
    if (this.#running) throw new LeaderElectionConfigError('LeaderElector.run may be called only once');
    this.#running = true;
    const cbs = [this.#callbacks, callbacks];
    this.#runCallbacks = cbs;
    try {
      this.#log.info({ identity: this.identity() }, 'attempting to acquire leader lease');
      const acquiredAt = await this.#acquire(signal);
      if (acquiredAt === undefined) return;
      this.#log.info({ identity: this.identity() }, 'successfully acquired lease');
      this.#metrics?.leaderOn(this.#name);
      const leader = new AbortController();
      let stopped = false;
      const stopLeading = (lost: boolean) => {
        if (stopped) return;
        stopped = true;
        for (const c of cbs) safely(this.#log, 'onStoppedLeading', () => c.onStoppedLeading?.({ lost }));
      };
      for (const c of cbs) safely(this.#log, 'onStartedLeading', () => c.onStartedLeading?.(leader.signal));
      const lost = await this.#renew(signal, leader, acquiredAt, () => stopLeading(true));
      leader.abort();
      this.#metrics?.leaderOff(this.#name);
      if (!lost && this.#releaseOnCancel && cbs.every((c) => c.mayRelease?.() ?? true)) {
        await this.#release();
      }
      stopLeading(lost);
    } finally {
      await this.#lock.close?.().catch(() => undefined);
    }
  }

  /** Tries until it holds the lock; resolves with the clock time the winning request was sent, or undefined on abort. */
  async #acquire(signal: AbortSignal): Promise<number | undefined> {
    for (;;) {
      if (signal.aborted) return undefined;
      const sentAt = this.#clock.now();
      const ok = await this.#tryAcquireOrRenew(signal);
      this.#maybeReportTransition();
      if (ok) return sentAt;
      if (signal.aborted) return undefined;
      this.#log.debug(
        { holder: this.getLeader() },
        'lease is held by another candidate or could not be read',
      );
      const wait = this.#retryPeriodMs * (1 + JITTER_FACTOR * this.#random());
      if (!(await sleepOn(this.#clock, wait, signal))) return undefined;
    }
  }

  /**
   * Renews every retry period until `signal` aborts (resolves false) or leadership is lost (resolves
   * true; `leader` is aborted at that very moment by the deadline timer or the failed check).
   */
  async #renew(
    signal: AbortSignal,
    leader: AbortController,
    acquiredAt: number,
    onLost: () => void,
  ): Promise<boolean> {
    let lost = false;
    // Renew requests are cut only by a loss (or their own timeout), not by a normal stop: a renew that
    // reached the server but whose answer was thrown away would leave the lock holding a stale
    // resourceVersion, and the release-on-cancel after it would fail with a 409.
    const attempts = new AbortController();
    const offCancel = onAbort(signal, () => leader.abort(signal.reason));
    let deadline: { cancel(): void } | undefined;
    const lose = (why: string) => {
      if (lost || leader.signal.aborted) return;
      lost = true;
      this.#metrics?.leaderOff(this.#name);
      this.#log.info({ reason: why }, 'failed to renew lease, stopped leading');
      leader.abort(new Error(`leader election lost: ${why}`));
      attempts.abort();
      onLost();
    };
    const arm = (sentAt: number) => {
      deadline?.cancel();
      const due = sentAt + this.#renewDeadlineMs - this.#clock.now();
      deadline = this.#clock.setTimer(() => lose(`not renewed within ${this.#renewDeadlineMs} ms`), due);
    };
    arm(acquiredAt);
    try {
      while (!leader.signal.aborted) {
        if (!(await sleepOn(this.#clock, this.#retryPeriodMs, leader.signal))) break;
        const sentAt = this.#clock.now();
        const ok = await this.#tryAcquireOrRenew(attempts.signal);
        this.#maybeReportTransition();
        if (ok && !lost) arm(sentAt);
        if (leader.signal.aborted) break;
        if (!ok && this.getLeader() && !this.isLeader()) lose(`the lease is held by ${this.getLeader()}`);
      }
    } finally {
      deadline?.cancel();
      offCancel();
    }
    return lost;
  }

  /** One attempt (client-go `tryAcquireOrRenew`): the optimistic update when leading, else read, judge, write. */
  async #tryAcquireOrRenew(parent: AbortSignal): Promise<boolean> {
    const now = this.#clock.now();
    const wall = this.#wall();
    const desired: LeaderElectionRecord = {
      holderIdentity: this.identity(),
      leaseDurationSeconds: Math.ceil(this.#leaseDurationMs / 1000),
      acquireTime: wall,
      renewTime: wall,
      leaderTransitions: 0,
    };
    const observed = this.#observed;
    if (this.isLeader() && observed && this.#isLeaseValid(now)) {
      const renewed = {
        ...desired,
        acquireTime: observed.acquireTime,
        leaderTransitions: observed.leaderTransitions,
      };
      try {
        await this.#lock.update(renewed, parent);
        this.#setObserved(renewed);
        return true;
      } catch (err) {
        if (parent.aborted) return false;
        this.#log.info({ err }, 'failed to update lock optimistically, falling back to slow path');
      }
    }
    let got: Awaited<ReturnType<ResourceLock['get']>>;
    try {
      got = await this.#lock.get(parent);
    } catch (err) {
      if (parent.aborted) return false;
      if (!isNotFound(err)) {
        this.#log.error({ err }, 'error retrieving resource lock');
        return false;
      }
      try {
        await this.#lock.create(desired, parent);
      } catch (createErr) {
        if (!parent.aborted) this.#log.error({ err: createErr }, 'error initially creating lease lock');
        return false;
      }
      this.#setObserved(desired);
      return true;
    }
    if (got.raw !== this.#observedRaw) {
      this.#setObserved(got.record);
      this.#observedRaw = got.raw;
    }
    if (got.record.holderIdentity && this.#isLeaseValid(now) && !this.isLeader()) return false;
    let next: LeaderElectionRecord;
    if (this.isLeader()) {
      next = {
        ...desired,
        acquireTime: got.record.acquireTime,
        leaderTransitions: got.record.leaderTransitions,
      };
      this.#metrics?.slowpathExercised?.(this.#name);
    } else {
      next = { ...desired, leaderTransitions: got.record.leaderTransitions + 1 };
    }
    try {
      await this.#lock.update(next, parent);
    } catch (err) {
      if (!parent.aborted) this.#log.info({ err }, 'failed to update lock');
      return false;
    }
    this.#setObserved(next);
    return true;
  }

  #isLeaseValid(now: number): boolean {
    const seconds = this.#observed?.leaseDurationSeconds ?? 0;
    return this.#observedTime + seconds * 1000 > now;
  }

  #setObserved(r: LeaderElectionRecord): void {
    this.#observed = r;
    this.#observedTime = this.#clock.now();
  }

  #maybeReportTransition(): void {
    const holder = this.getLeader();
    if (this.#observed === undefined || holder === this.#reportedLeader) return;
    this.#reportedLeader = holder;
    if (holder) this.#log.info({ leader: holder }, 'new leader observed');
    for (const c of this.#runCallbacks) safely(this.#log, 'onNewLeader', () => c.onNewLeader?.(holder));
  }

  /** client-go `release`: clear the holder with a fresh, bounded signal. */
  async #release(): Promise<void> {
    if (!this.isLeader() || !this.#observed) return;
    const now = this.#wall();
    const released: LeaderElectionRecord = {
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTime: now,
      renewTime: now,
      leaderTransitions: this.#observed.leaderTransitions,
    };
    const fresh = signalWithTimeout(new AbortController().signal, this.#renewDeadlineMs);
    try {
      await this.#lock.update(released, fresh.signal);
      this.#setObserved(released);
      this.#observedRaw = rawOf(released);
      this.#log.info({}, 'released the lease');
    } catch (err) {
      this.#log.error({ err }, 'failed to release the lease; others will wait for it to expire');
    } finally {
      fresh.clear();
    }
  }
}

/** Sleeps `ms` on `clock`; false when `signal` aborted first. */
function sleepOn(clock: Clock, ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise<boolean>((resolve) => {
    let timer: { cancel(): void } | undefined;
    const off = onAbort(signal, () => {
      timer?.cancel();
      resolve(false);
    });
    timer = clock.setTimer(() => {
      off();
      resolve(true);
    }, ms);
  });
}

function safely(log: Logger, what: string, fn: () => void): void {
  try {
    fn();
  } catch (err) {
    log.error({ err, callback: what }, 'leader election callback threw');
  }
}

import { type Clock, realClock } from '@kubeloop/core';
import { InvalidArgumentError } from './errors.js';

/**
 * Decides how long an item waits before it is retried (client-go `workqueue.TypedRateLimiter`).
 * Items are identified by the queue's key (see `QueueOptions.keyFn`). Delays are in **milliseconds**.
 */
export interface RateLimiter<K = unknown> {
  /** Records a failure of `item` and returns how long (ms) it should wait before the next try. */
  when(item: K): number;
  /** Drops `item`'s failure history (call it when the item succeeded or was given up on). */
  forget(item: K): void;
  /** How many failures of `item` are on record. */
  numRequeues(item: K): number;
  /** Number of items with history on record (for leak checks). */
  size?(): number;
}

function checkMs(what: string, v: number): void {
  if (!Number.isFinite(v) || v < 0)
    throw new InvalidArgumentError(`${what} must be a finite number of ms >= 0`);
}

/**
 * The failure count per item that the per-item limiters keep (client-go keeps the same `failures` map in
 * `ItemExponentialFailureRateLimiter` and `ItemFastSlowRateLimiter`): `forget`, `numRequeues` and `size`.
 */
abstract class PerItemFailures<K> {
  private readonly failures = new Map<K, number>();

  /** Records one more failure of `item`; returns the failures on record before it. */
  protected recordFailure(item: K): number {
    const before = this.failures.get(item) ?? 0;
    this.failures.set(item, before + 1);
    return before;
  }

  /** Drops `item`'s failure history. */
  forget(item: K): void {
    // the usual call (a success with no failure on record, and none at all) costs no hash look-up
    if (this.failures.size !== 0) this.failures.delete(item);
  }

  /** How many failures of `item` are on record. */
  numRequeues(item: K): number {
    return this.failures.get(item) ?? 0;
  }

  /** Number of items with history on record. */
  size(): number {
    return this.failures.size;
  }
}

/**
 * Per-item exponential backoff (client-go `ItemExponentialFailureRateLimiter`): the n-th failure of an item
 * (counting from 0) waits `baseDelayMs · 2^n`, capped at `maxDelayMs` (overflow-safe). History is kept
 * per item until {@link RateLimiter.forget}.
 */
export class ItemExponentialFailureRateLimiter<K = unknown>
  extends PerItemFailures<K>
  implements RateLimiter<K>
{
  /**
   * @param baseDelayMs - delay of the first failure, ms (≥ 0).
   * @param maxDelayMs - cap, ms (≥ 0).
   * @throws InvalidArgumentError on a negative or non-finite value.
   */
  constructor(
    readonly baseDelayMs: number,
    readonly maxDelayMs: number,
  ) {
    super();
    checkMs('baseDelayMs', baseDelayMs);
    checkMs('maxDelayMs', maxDelayMs);
  }

  when(item: K): number {
    const exp = this.recordFailure(item);
    const backoff = this.baseDelayMs * 2 ** exp;
    return backoff > this.maxDelayMs || !Number.isFinite(backoff) ? this.maxDelayMs : backoff;
  }
}

/**
 * One token bucket shared by all items (client-go `BucketRateLimiter` over `golang.org/x/time/rate`):
 * the bucket holds up to `burst` tokens and refills at `qps` per second; each {@link RateLimiter.when}
 * reserves one token and returns how long until that token is available. It keeps no per-item history.
 */
export class BucketRateLimiter<K = unknown> implements RateLimiter<K> {
  private tokens: number;
  private last: number;
  private readonly clock: Clock;

  /**
   * @param qps - refill rate, tokens per **second** (> 0).
   * @param burst - bucket size (integer ≥ 1).
   * @param clock - time source (default the real clock).
   * @throws InvalidArgumentError if `qps` ≤ 0 or `burst` < 1.
   */
  constructor(
    readonly qps: number,
    readonly burst: number,
    clock: Clock = realClock,
  ) {
    if (!(qps > 0) || !Number.isFinite(qps))
      throw new InvalidArgumentError('qps must be a finite number > 0');
    if (!Number.isInteger(burst) || burst < 1)
      throw new InvalidArgumentError('burst must be an integer >= 1');
    this.clock = clock;
    this.tokens = burst;
    this.last = clock.now();
  }

  when(_item: K): number {
    const now = this.clock.now();
    if (now > this.last) {
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.qps) / 1000);
      this.last = now;
    }
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens * 1000) / this.qps;
  }

  forget(_item: K): void {}

  numRequeues(_item: K): number {
    return 0;
  }

  size(): number {
    return 0;
  }
}

/**
 * Fast, then slow (client-go `ItemFastSlowRateLimiter`): the first `maxFastAttempts` failures of an item
 * wait `fastDelayMs`, later ones `slowDelayMs`.
 */
export class ItemFastSlowRateLimiter<K = unknown> extends PerItemFailures<K> implements RateLimiter<K> {
  /** @throws InvalidArgumentError on a negative delay or a negative / non-integer `maxFastAttempts`. */
  constructor(
    readonly fastDelayMs: number,
    readonly slowDelayMs: number,
    readonly maxFastAttempts: number,
  ) {
    super();
    checkMs('fastDelayMs', fastDelayMs);
    checkMs('slowDelayMs', slowDelayMs);
    if (!Number.isInteger(maxFastAttempts) || maxFastAttempts < 0) {
      throw new InvalidArgumentError('maxFastAttempts must be an integer >= 0');
    }
  }

  when(item: K): number {
    const n = this.recordFailure(item) + 1;
    return n <= this.maxFastAttempts ? this.fastDelayMs : this.slowDelayMs;
  }
}

/**
 * The worst of several limiters (client-go `MaxOfRateLimiter`): `when` asks every limiter (so each records
 * the failure) and returns the longest delay; `numRequeues` is the maximum; `forget` reaches all.
 */
export class MaxOfRateLimiter<K = unknown> implements RateLimiter<K> {
  readonly limiters: readonly RateLimiter<K>[];

  /** @throws InvalidArgumentError if no limiter is given. */
  constructor(...limiters: RateLimiter<K>[]) {
    if (limiters.length === 0) throw new InvalidArgumentError('MaxOfRateLimiter needs at least one limiter');
    this.limiters = limiters;
  }

  when(item: K): number {
    let max = 0;
    for (const l of this.limiters) {
      const d = l.when(item);
      if (d > max) max = d;
    }
    return max;
  }

  forget(item: K): void {
    for (const l of this.limiters) l.forget(item);
  }

  numRequeues(item: K): number {
    let max = 0;
    for (const l of this.limiters) {
      const n = l.numRequeues(item);
      if (n > max) max = n;
    }
    return max;
  }

  size(): number {
    let total = 0;
    for (const l of this.limiters) total += l.size?.() ?? 0;
    return total;
  }
}

/** Caps another limiter's delay at `maxDelayMs` (client-go `WithMaxWaitRateLimiter`). */
export class WithMaxWaitRateLimiter<K = unknown> implements RateLimiter<K> {
  /** @throws InvalidArgumentError if `maxDelayMs` is negative or not finite. */
  constructor(
    readonly limiter: RateLimiter<K>,
    readonly maxDelayMs: number,
  ) {
    checkMs('maxDelayMs', maxDelayMs);
  }

  when(item: K): number {
    return Math.min(this.limiter.when(item), this.maxDelayMs);
  }

  forget(item: K): void {
    this.limiter.forget(item);
  }

  numRequeues(item: K): number {
    return this.limiter.numRequeues(item);
  }

  size(): number {
    return this.limiter.size?.() ?? 0;
  }
}

/**
 * controller-runtime's / client-go's `DefaultControllerRateLimiter`: the max of per-item exponential backoff
 * 5 ms → 1000 s and an overall token bucket of 10 qps with burst 100.
 * @param clock - time source for the bucket (default the real clock).
 */
export function defaultControllerRateLimiter<K = unknown>(clock: Clock = realClock): RateLimiter<K> {
  return new MaxOfRateLimiter<K>(
    new ItemExponentialFailureRateLimiter<K>(5, 1_000_000),
    new BucketRateLimiter<K>(10, 100, clock),
  );
}

/** client-go's `DefaultItemBasedRateLimiter`: per-item exponential backoff 1 ms → 1000 s. */
export function defaultItemBasedRateLimiter<K = unknown>(): RateLimiter<K> {
  return new ItemExponentialFailureRateLimiter<K>(1, 1_000_000);
}

/**
 * The default limiter of controller-runtime's priority queue (v0.23+): per-item exponential backoff
 * 5 ms → 1000 s only, without the overall bucket.
 */
export function defaultPriorityQueueRateLimiter<K = unknown>(): RateLimiter<K> {
  return new ItemExponentialFailureRateLimiter<K>(5, 1_000_000);
}

import { type Clock, realClock, sleep } from '@kubeloop/core';

/** A client-side rate limiter (client-go `flowcontrol.RateLimiter`). */
export interface RateLimiter {
  /** Wait for a token. Rejects with the signal's reason if it aborts first (the token is given back). */
  wait(signal?: AbortSignal): Promise<void>;
  /** Take a token if one is available now, without waiting. */
  tryAccept(): boolean;
}

/**
 * Token bucket (client-go `flowcontrol.NewTokenBucketRateLimiter`, on `golang.org/x/time/rate`): starts
 * full with `burst` tokens and refills at `qps` tokens per second. Waiters reserve tokens in arrival order
 * (a reservation may drive the bucket negative and waits until it is paid back), so callers are served
 * first come, first served.
 */
export class TokenBucketRateLimiter implements RateLimiter {
  private tokens: number;
  private last: number;

  /**
   * @param qps tokens per second, > 0.
   * @param burst bucket size, ≥ 1.
   * @throws {RangeError} on a non-positive qps or a burst below 1.
   */
  constructor(
    readonly qps: number,
    readonly burst: number,
    private readonly clock: Clock = realClock,
  ) {
    if (!(qps > 0) || !Number.isFinite(qps))
      throw new RangeError(`qps must be a positive number, got ${qps}`);
    if (!(burst >= 1)) throw new RangeError(`burst must be at least 1, got ${burst}`);
    this.tokens = burst;
    this.last = clock.now();
  }

  private advance(): void {
    const now = this.clock.now();
    const elapsed = Math.max(0, now - this.last);
    this.last = now;
    this.tokens = Math.min(this.burst, this.tokens + (elapsed * this.qps) / 1000);
  }

  tryAccept(): boolean {
    this.advance();
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    return false;
  }

  async wait(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    this.advance();
    this.tokens -= 1;
    if (this.tokens >= 0) return;
    const delayMs = (-this.tokens * 1000) / this.qps;
    try {
      await sleep(delayMs, signal, this.clock);
    } catch (e) {
      this.advance();
      this.tokens = Math.min(this.burst, this.tokens + 1);
      throw e;
    }
  }
}

/** A bucket of the spam filter: tokens left and when they were last counted (clock ms). */
interface Bucket {
  tokens: number;
  at: number;
}

/**
 * client-go's `EventSourceObjectSpamFilter`: a token bucket per key (regarding object and reporting
 * controller) holding `burst` tokens, refilled one per `refillMs`; buckets are kept in least-recently-used
 * order and bounded by `maxKeys` (the least recently used goes first).
 */
export class SpamFilter {
  readonly #buckets = new Map<string, Bucket>();

  constructor(
    private readonly burst: number,
    private readonly refillMs: number,
    private readonly maxKeys: number,
  ) {}

  /** Takes one token of `key`'s bucket at clock time `now`; false when it is empty. */
  take(key: string, now: number): boolean {
    let b = this.#buckets.get(key);
    if (b === undefined) {
      b = { tokens: this.burst, at: now };
      this.#buckets.set(key, b);
      if (this.#buckets.size > this.maxKeys)
        this.#buckets.delete(this.#buckets.keys().next().value as string);
    } else {
      const refill = Math.floor((now - b.at) / this.refillMs);
      if (refill > 0) {
        b.tokens = Math.min(this.burst, b.tokens + refill);
        b.at = b.tokens === this.burst ? now : b.at + refill * this.refillMs;
      }
      this.#buckets.delete(key);
      this.#buckets.set(key, b);
    }
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }
}

import { BasicDelayingQueue, type DelayingQueue } from './delaying-queue.js';
import type { QueueDebugSizes, QueueInspection, QueueOptions } from './queue.js';
import { defaultControllerRateLimiter, type RateLimiter } from './rate-limiters.js';

/** A {@link DelayingQueue} with per-item retry backoff (client-go `workqueue.TypedRateLimitingInterface`). */
export interface RateLimitingQueue<T> extends DelayingQueue<T> {
  /** Adds `item` after the delay its rate limiter decides (`addAfter(item, limiter.when(key))`). */
  addRateLimited(item: T): void;
  /**
   * Drops `item`'s retry history in the limiter. Call it when the item was processed successfully (or given
   * up on); it does not remove the item from the queue.
   */
  forget(item: T): void;
  /** How many times `item` has been rate-limited since it was last forgotten. */
  numRequeues(item: T): number;
}

/** Options of {@link newRateLimitingQueue}. */
export interface RateLimitingQueueOptions<T> extends QueueOptions<T> {
  /** The limiter, called with each item's key (default {@link defaultControllerRateLimiter}). */
  rateLimiter?: RateLimiter<unknown>;
}

/**
 * Implementation of {@link RateLimitingQueue} (client-go `util/workqueue/rate_limiting_queue.go`).
 * @internal use {@link newRateLimitingQueue}.
 */
export class BasicRateLimitingQueue<T> extends BasicDelayingQueue<T> implements RateLimitingQueue<T> {
  readonly rateLimiter: RateLimiter<unknown>;

  constructor(options: RateLimitingQueueOptions<T> = {}) {
    super(options);
    this.rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter(this.clock);
  }

  addRateLimited(item: T): void {
    const key = this.keyFn === undefined ? item : this.keyFn(item);
    this.addAfter(item, this.rateLimiter.when(key));
  }

  forget(item: T): void {
    this.rateLimiter.forget(this.keyFn === undefined ? item : this.keyFn(item));
  }

  numRequeues(item: T): number {
    return this.rateLimiter.numRequeues(this.keyFn === undefined ? item : this.keyFn(item));
  }

  override debugSizes(): QueueDebugSizes {
    const s = super.debugSizes();
    s.rateLimiter = this.rateLimiter.size?.() ?? 0;
    return s;
  }
}

/**
 * Creates a rate-limiting queue (client-go `workqueue.NewTypedRateLimitingQueueWithConfig`), the queue a
 * classic controller's workers read from. Default limiter: {@link defaultControllerRateLimiter}.
 *
 * @example
 * ```ts
 * const q = newRateLimitingQueue<string>({ name: 'pods' });
 * q.add('default/web');
 * const r = await q.get();
 * if (!r.shutdown) {
 *   try { await reconcile(r.item); q.forget(r.item); }
 *   catch { q.addRateLimited(r.item); }
 *   finally { q.done(r.item); }
 * }
 * ```
 */
export function newRateLimitingQueue<T>(
  options: RateLimitingQueueOptions<T> = {},
): RateLimitingQueue<T> & QueueInspection {
  return new BasicRateLimitingQueue<T>(options);
}

/** The priority queue's public shape: its interface, options, add options and results. */
import type { QueueOptions } from './queue.js';
import type { RateLimiter } from './rate-limiters.js';
import type { RateLimitingQueue } from './rate-limiting-queue.js';

/** Default of {@link PriorityQueueOptions.fairnessWindow}. */
export const DEFAULT_FAIRNESS_WINDOW = 8;

/**
 * Priority given to events that are not real changes: an informer's initial list and periodic resyncs
 * (controller-runtime `handler.LowPriority`). Higher numbers are handed out first; the default is 0.
 */
export const LOW_PRIORITY = -100;

/** Options of {@link PriorityQueue.add} (controller-runtime `priorityqueue.AddOpts`). */
export interface AddOptions {
  /**
   * Delay before the item becomes ready, ms (default 0 = ready now; ≤ 0 = now). Must be a finite number: a
   * string, NaN or Infinity throws InvalidArgumentError.
   */
  after?: number;
  /**
   * Also ask the rate limiter for a delay; the smaller of it and a non-zero `after` is used. Counts a
   * failure in the limiter, like `addRateLimited`.
   */
  rateLimited?: boolean;
  /** Priority; higher is handed out first (default 0). Must be a finite number (InvalidArgumentError). */
  priority?: number;
}

/** What {@link PriorityQueue.getWithPriority} resolves to. */
export type GetWithPriorityResult<T> =
  | { item: T; priority: number; shutdown: false }
  | { item: undefined; priority: 0; shutdown: true };

/**
 * controller-runtime's priority queue (`pkg/controller/priorityqueue`), the default queue of its
 * controllers since v0.23: a rate-limiting queue whose items carry a priority.
 *
 * - Dedup: adding a key that is already queued keeps the **highest** priority and the **earliest** ready
 *   time of the two adds.
 * - Order: ready items are handed out by priority (highest first), FIFO within a priority by the time they
 *   became ready; raising a queued item's priority puts it at the end of its new priority level.
 * - Fair share (not in controller-runtime, whose strict order lets a few keys that requeue themselves starve
 *   an initial list, a starvation controller-runtime users have reported): after `fairnessWindow − 1` handouts in a row from the
 *   highest priority while lower-priority items wait, the next handout is the item that has been ready the
 *   longest, whatever its priority. Bound: an item is handed out within `fairnessWindow × (N + 1)` handouts
 *   after it became ready, N being the number of items ready at that moment — whatever is added after it,
 *   at any priority. With W workers whose reconciles take at most d, that is at most
 *   `fairnessWindow × (N + 1) × d / W` of waiting (plus the time a handout waits for a free worker).
 * - As in every queue here, a key is never handed to two workers at once: a key added while being
 *   processed waits (keeping its place) until `done`.
 * - `get` after `shutDown` resolves `shutdown: true` at once (no draining of queued items).
 */
export interface PriorityQueue<T> extends RateLimitingQueue<T> {
  /** Adds `item` with options (a plain `add(item)` is ready now at priority 0). */
  add(item: T, options?: AddOptions): void;
  /** Adds several items with the same options (controller-runtime `AddWithOpts`). */
  addWithOpts(options: AddOptions, ...items: T[]): void;
  /** Like {@link Queue.get}, also telling the item's priority. */
  getWithPriority(): Promise<GetWithPriorityResult<T>>;
  /**
   * Synchronous, non-waiting {@link PriorityQueue.getWithPriority}: the next ready item and its priority (the
   * item is now being processed: pass it to `done`), or `undefined` when none is ready or the queue is shut
   * down. A worker calls it first and awaits `getWithPriority()` only when it returns `undefined`, so a
   * backlog is worked off without a promise per item (see {@link Queue.tryGet}).
   */
  tryGetWithPriority(): ReadyItem<T> | undefined;
  /** Number of ready items (including ready items whose key is being processed); delayed items excluded. */
  len(): number;
}

/** Options of {@link newPriorityQueue}. */
export interface PriorityQueueOptions<T> extends QueueOptions<T> {
  /** Limiter for `addRateLimited` / `rateLimited: true` (default exponential 5 ms → 1000 s, no bucket). */
  rateLimiter?: RateLimiter<unknown>;
  /**
   * Fair share: at least one handout in every `fairnessWindow` goes to the item ready the longest when
   * lower-priority items wait (see {@link PriorityQueue}); an integer >= 2, or `Infinity` for controller-runtime's
   * strict priority order (lower priorities can then starve). Anything else throws InvalidArgumentError.
   * @defaultValue 8 ({@link DEFAULT_FAIRNESS_WINDOW})
   */
  fairnessWindow?: number;
}

/** What {@link PriorityQueue.tryGetWithPriority} returns: a ready item, now being processed, and its priority. */
export interface ReadyItem<T> {
  /** The item, now being processed: pass it to `done` when finished. */
  item: T;
  /** Its priority (higher was handed out first); pass it back when re-adding to keep it. */
  priority: number;
}

import { checkDelayMs, InvalidArgumentError } from './errors.js';
import { DelayHeap } from './internal/delay-heap.js';
import { KeepAlive } from './internal/keep-alive.js';
import { type Entry, EntryPool, State } from './internal/priority-entry.js';
import { PriorityLevels } from './internal/priority-levels.js';
import { QueueBase } from './internal/queue-base.js';
import {
  type AddOptions,
  DEFAULT_FAIRNESS_WINDOW,
  type GetWithPriorityResult,
  type PriorityQueue,
  type PriorityQueueOptions,
  type ReadyItem,
} from './priority-queue-types.js';
import type { GetResult, QueueDebugSizes, QueueInspection } from './queue.js';
import { defaultPriorityQueueRateLimiter, type RateLimiter } from './rate-limiters.js';

const SHUTDOWN: GetWithPriorityResult<never> = Object.freeze({
  item: undefined,
  priority: 0,
  shutdown: true,
}) as GetWithPriorityResult<never>;

const GET_SHUTDOWN: GetResult<never> = Object.freeze({ item: undefined, shutdown: true }) as GetResult<never>;

/**
 * Implementation of {@link PriorityQueue}. Instead of controller-runtime's B-tree, ready items sit in one
 * FIFO per priority (levels sorted by priority, highest first), so add / get / done are O(1) for the usual
 * handful of priorities; delayed items wait in a min-heap by ready time.
 */
class PriorityQueueImpl<T>
  extends QueueBase<T, (e: Entry<T> | undefined) => void>
  implements PriorityQueue<T>, QueueInspection
{
  readonly rateLimiter: RateLimiter<unknown>;
  /** key → its entry, for every key that is queued (any state) or being processed. */
  private readonly entries = new Map<unknown, Entry<T>>();
  /** Ready entries by priority (a replaced entry is marked Dead and skipped), with the fair share. */
  private readonly ready: PriorityLevels<Entry<T>>;
  private parkedCount = 0;
  /** Entries waiting for their ready time. */
  private readonly waiting: DelayHeap<Entry<T>>;
  private readonly keepAlive: KeepAlive;
  /**
   * The entry handed out last, until its `done` (always a processing entry of `entries`, or undefined): a
   * worker's `done` right after its own get skips the map look-up.
   */
  private lastTaken: Entry<T> | undefined;
  private readonly pool = new EntryPool<T>();

  constructor(options: PriorityQueueOptions<T>) {
    super(options, true);
    this.ready = new PriorityLevels<Entry<T>>(
      (e) => e.state === State.Ready,
      checkFairnessWindow(options.fairnessWindow),
    );
    this.keepAlive = new KeepAlive(this.clock);
    this.waiting = new DelayHeap<Entry<T>>(
      this.clock,
      (e) => this.becomeReady(e),
      () => this.dispatch(),
      () => this.syncKeepAlive(),
    );
    this.rateLimiter = options.rateLimiter ?? defaultPriorityQueueRateLimiter();
  }

  add(item: T, options?: AddOptions): void {
    if (this.shutdownFlag) return;
    this.addOne(item, options);
    // with no get() waiting there is nobody to hand to, and no keep-alive hold to release
    if (this.waiters.length > 0) this.dispatch();
  }

  addWithOpts(options: AddOptions, ...items: T[]): void {
    if (this.shutdownFlag) return;
    for (const item of items) this.addOne(item, options);
    this.dispatch();
  }

  addAfter(item: T, delayMs: number): void {
    this.add(item, { after: delayMs });
  }

  addRateLimited(item: T): void {
    this.add(item, { rateLimited: true });
  }

  forget(item: T): void {
    this.rateLimiter.forget(this.keyOf(item));
  }

  numRequeues(item: T): number {
    return this.rateLimiter.numRequeues(this.keyOf(item));
  }

  len(): number {
    return this.ready.size + this.parkedCount;
  }

  get(): Promise<GetResult<T>> {
    if (this.shutdownFlag) return Promise.resolve(GET_SHUTDOWN);
    const e = this.ready.pop();
    if (e !== undefined) return Promise.resolve({ item: this.take(e), shutdown: false });
    const waiting = new Promise<GetResult<T>>((resolve) =>
      this.waiters.push((w) =>
        resolve(w === undefined ? GET_SHUTDOWN : { item: this.take(w), shutdown: false }),
      ),
    );
    this.syncKeepAlive();
    return waiting;
  }

  getWithPriority(): Promise<GetWithPriorityResult<T>> {
    if (this.shutdownFlag) return Promise.resolve(SHUTDOWN);
    const e = this.ready.pop();
    if (e !== undefined)
      return Promise.resolve({ item: this.take(e), priority: e.priority, shutdown: false });
    const waiting = new Promise<GetWithPriorityResult<T>>((resolve) =>
      this.waiters.push((w) =>
        resolve(w === undefined ? SHUTDOWN : { item: this.take(w), priority: w.priority, shutdown: false }),
      ),
    );
    this.syncKeepAlive();
    return waiting;
  }

  tryGet(): T | undefined {
    if (this.shutdownFlag) return undefined;
    const e = this.ready.pop();
    return e === undefined ? undefined : this.take(e);
  }

  tryGetWithPriority(): ReadyItem<T> | undefined {
    if (this.shutdownFlag) return undefined;
    const e = this.ready.pop();
    return e === undefined ? undefined : { item: this.take(e), priority: e.priority };
  }

  done(item: T): void {
    const key = this.keyOf(item);
    let e = this.lastTaken;
    if (e === undefined || e.key !== key) e = this.entries.get(key);
    if (e === undefined || !e.processing) return;
    if (e === this.lastTaken) this.lastTaken = undefined;
    e.processing = false;
    this.processingCount--;
    this.metrics?.done(key);
    if (e.state === State.Idle) {
      this.entries.delete(key);
      this.pool.recycle(e);
    } else if (e.state === State.Parked) {
      this.parkedCount--;
      this.pushReady(e);
      this.dispatch();
    }
    this.released();
  }

  protected stop(): void {
    this.waiting.clear();
    this.ready.clear();
    this.parkedCount = 0;
    // keep only the bookkeeping of keys still being processed, so `done` and draining still work
    for (const [key, e] of this.entries) {
      if (e.processing) e.state = State.Idle;
      else this.entries.delete(key);
    }
    while (this.waiters.length > 0) this.waiters.shift()?.(undefined);
    this.keepAlive.set(false);
  }

  debugSizes(): QueueDebugSizes {
    return {
      queue: this.ready.slots,
      keys: this.entries.size + this.ready.levelCount,
      dirty: this.ready.size + this.parkedCount + this.waiting.size,
      processing: this.processingCount,
      waiters: this.waiters.length,
      waiting: this.waiting.size,
      waitingByKey: 0,
      parked: this.parkedCount,
      rateLimiter: this.rateLimiter.size?.() ?? 0,
      metrics: this.metrics ? this.metrics.addTimes.size + this.metrics.processingStartTimes.size : 0,
    };
  }

  private addOne(item: T, options: AddOptions | undefined): void {
    const key = this.keyOf(item);
    let after = 0;
    let priority = 0;
    if (options !== undefined) {
      // Only `undefined` means "not given": null, a string, NaN or Infinity is refused below.
      after = options.after === undefined ? 0 : options.after;
      priority = options.priority === undefined ? 0 : options.priority;
      checkDelayMs('add: options.after', after);
      if (typeof priority !== 'number' || !Number.isFinite(priority))
        throw new InvalidArgumentError(
          `add: options.priority must be a finite number, got ${String(priority)}`,
        );
      if (options.rateLimited) {
        const rl = this.rateLimiter.when(key);
        checkDelayMs('the rate limiter delay (when)', rl);
        if (!(after > 0) || rl < after) after = rl;
      }
    }
    const delayed = after > 0;
    if (delayed) this.metrics?.retry();
    const e = this.entries.get(key);
    if (e === undefined || e.state === State.Idle) {
      let entry = e;
      if (entry === undefined) {
        entry = this.pool.get(key, item, priority, false);
        this.entries.set(key, entry);
      } else {
        entry.item = item;
        entry.priority = priority;
      }
      if (delayed) this.pushWaiting(entry, this.clock.now() + after);
      else this.becomeReady(entry);
      return;
    }
    if (e.state === State.Waiting) {
      if (priority > e.priority) e.priority = priority;
      if (!delayed) {
        this.waiting.remove(e);
        this.becomeReady(e);
      } else this.waiting.advance(e, this.clock.now() + after);
      return;
    }
    // Ready or parked: only a higher priority changes anything; it moves to the end of its new level.
    if (priority <= e.priority) return;
    this.metrics?.depthMove(e.priority, priority);
    if (e.state === State.Parked) {
      e.priority = priority;
      return;
    }
    // replace the entry: the old object stays in its level's FIFO, dead
    e.state = State.Dead;
    this.ready.unlink(e.priority);
    const moved = this.pool.get(key, e.item, priority, e.processing);
    this.entries.set(key, moved);
    this.pushReady(moved);
  }

  private pushWaiting(e: Entry<T>, readyAt: number): void {
    e.state = State.Waiting;
    this.waiting.push(e, readyAt);
  }

  /** A queued entry is ready now: into its level, or parked while its key is being processed. */
  private becomeReady(e: Entry<T>): void {
    this.metrics?.add(e.key, e.priority);
    if (e.processing) {
      e.state = State.Parked;
      this.parkedCount++;
    } else {
      this.pushReady(e);
    }
  }

  private pushReady(e: Entry<T>): void {
    e.state = State.Ready;
    this.ready.push(e);
  }

  /** Marks a popped entry's key as being processed and returns its item. */
  private take(e: Entry<T>): T {
    e.state = State.Idle;
    e.processing = true;
    this.lastTaken = e;
    this.processingCount++;
    this.metrics?.get(e.key, e.priority);
    return e.item;
  }

  private dispatch(): void {
    while (this.waiters.length > 0 && this.ready.size > 0) {
      const e = this.ready.pop() as Entry<T>;
      this.waiters.shift()?.(e);
    }
    this.syncKeepAlive();
  }

  /** See {@link KeepAlive}: hold the process open while a `get()` waits and a delayed item will be ready. */
  private syncKeepAlive(): void {
    this.keepAlive.set(this.waiters.length > 0 && this.waiting.size > 0);
  }
}

function checkFairnessWindow(w: number | undefined): number {
  if (w === undefined) return DEFAULT_FAIRNESS_WINDOW;
  if (w === Number.POSITIVE_INFINITY || (Number.isInteger(w) && w >= 2)) return w;
  throw new InvalidArgumentError(
    `newPriorityQueue: options.fairnessWindow must be an integer >= 2 or Infinity, got ${String(w)}`,
  );
}

/**
 * Creates controller-runtime's priority queue (`priorityqueue.New`). Default limiter: per-item exponential
 * 5 ms → 1000 s ({@link defaultPriorityQueueRateLimiter}).
 *
 * @example
 * ```ts
 * const q = newPriorityQueue<string>({ name: 'pods' });
 * q.add('default/old', { priority: LOW_PRIORITY }); // from the initial list
 * q.add('default/new');                              // a real change: handed out first
 * const r = await q.getWithPriority();               // { item: 'default/new', priority: 0, shutdown: false }
 * ```
 */
export function newPriorityQueue<T>(
  options: PriorityQueueOptions<T> = {},
): PriorityQueue<T> & QueueInspection {
  return new PriorityQueueImpl<T>(options);
}

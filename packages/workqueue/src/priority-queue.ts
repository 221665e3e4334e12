import { type Clock, type ClockTimer, realClock } from './clock.js';
import { type HeapEntry, IndexedHeap } from './internal/heap.js';
import { QueueMetrics } from './internal/queue-metrics.js';
import { Ring } from './internal/ring.js';
import type { GetResult, KeyFn, QueueDebugSizes, QueueInspection, QueueOptions } from './queue.js';
import { defaultPriorityQueueRateLimiter, type RateLimiter } from './rate-limiters.js';
import type { RateLimitingQueue } from './rate-limiting-queue.js';

/**
 * Priority given to events that are not real changes: an informer's initial list and periodic resyncs
 * (controller-runtime `handler.LowPriority`). Higher numbers are handed out first; the default is 0.
 */
export const LOW_PRIORITY = -100;

/** Options of {@link PriorityQueue.add} (controller-runtime `priorityqueue.AddOpts`). */
export interface AddOptions {
  /** Delay before the item becomes ready, ms (default 0 = ready now). */
  after?: number;
  /**
   * Also ask the rate limiter for a delay; the smaller of it and a non-zero `after` is used. Counts a
   * failure in the limiter, like `addRateLimited`.
   */
  rateLimited?: boolean;
  /** Priority; higher is handed out first (default 0). */
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
  /** Number of ready items (including ready items whose key is being processed); delayed items excluded. */
  len(): number;
}

/** Options of {@link newPriorityQueue}. */
export interface PriorityQueueOptions<T> extends QueueOptions<T> {
  /** Limiter for `addRateLimited` / `rateLimited: true` (default exponential 5 ms → 1000 s, no bucket). */
  rateLimiter?: RateLimiter<unknown>;
}

enum State {
  Waiting = 0,
  Ready = 1,
  /** Ready, but its key is being processed: held outside the heaps until `done`. */
  Parked = 2,
}

interface Entry<T> extends HeapEntry {
  key: unknown;
  item: T;
  priority: number;
  readyAt: number;
  /** FIFO order within a priority: taken from a counter when the entry became ready. */
  seq: number;
  state: State;
}

type Waiter<T> = (r: GetWithPriorityResult<T>) => void;

const SHUTDOWN: GetWithPriorityResult<never> = Object.freeze({
  item: undefined,
  priority: 0,
  shutdown: true,
}) as GetWithPriorityResult<never>;

class PriorityQueueImpl<T> implements PriorityQueue<T>, QueueInspection {
  private readonly clock: Clock;
  private readonly keyFn: KeyFn<T> | undefined;
  private readonly metrics: QueueMetrics<unknown> | undefined;
  readonly rateLimiter: RateLimiter<unknown>;
  private readonly entries = new Map<unknown, Entry<T>>();
  private readonly ready = new IndexedHeap<Entry<T>>(
    (a, b) => a.priority > b.priority || (a.priority === b.priority && a.seq < b.seq),
  );
  private readonly waiting = new IndexedHeap<Entry<T>>(
    (a, b) => a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.seq < b.seq),
  );
  private parked = 0;
  private readonly locked = new Set<unknown>();
  private readonly waiters = new Ring<Waiter<T>>();
  private seq = 0;
  private timer: ClockTimer | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  private shutdownFlag = false;
  private drainWaiters: (() => void)[] = [];

  constructor(options: PriorityQueueOptions<T>) {
    this.clock = options.clock ?? realClock;
    this.keyFn = options.keyFn;
    this.rateLimiter = options.rateLimiter ?? defaultPriorityQueueRateLimiter();
    if (options.name && options.metricsProvider) {
      this.metrics = new QueueMetrics(options.metricsProvider, options.name, this.clock, true);
    }
  }

  add(item: T, options?: AddOptions): void {
    if (this.shutdownFlag) return;
    this.addOne(item, options);
    this.dispatch();
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
    return this.ready.size + this.parked;
  }

  async get(): Promise<GetResult<T>> {
    const r = await this.getWithPriority();
    return r.shutdown ? { item: undefined, shutdown: true } : { item: r.item, shutdown: false };
  }

  getWithPriority(): Promise<GetWithPriorityResult<T>> {
    if (this.shutdownFlag) return Promise.resolve(SHUTDOWN);
    const top = this.ready.pop();
    if (top !== undefined) return Promise.resolve(this.take(top));
    return new Promise<GetWithPriorityResult<T>>((resolve) => this.waiters.push(resolve));
  }

  done(item: T): void {
    const key = this.keyOf(item);
    if (!this.locked.delete(key)) return;
    this.metrics?.done(key);
    const e = this.entries.get(key);
    if (e !== undefined && e.state === State.Parked) {
      this.parked--;
      e.state = State.Ready;
      this.ready.push(e);
      this.dispatch();
    }
    if (this.locked.size === 0 && this.drainWaiters.length > 0) {
      const ws = this.drainWaiters;
      this.drainWaiters = [];
      for (const w of ws) w();
    }
  }

  shutDown(): void {
    if (this.shutdownFlag) return;
    this.shutdownFlag = true;
    this.metrics?.stop();
    this.timer?.cancel();
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    this.ready.clear();
    this.waiting.clear();
    this.entries.clear();
    this.parked = 0;
    while (this.waiters.length > 0) (this.waiters.shift() as Waiter<T>)(SHUTDOWN);
  }

  /**
   * {@link PriorityQueue.shutDown}, then resolves once every handed-out item is `done` (controller-runtime's
   * priority queue does not wait; waiting costs nothing when nothing is in flight).
   */
  shutDownWithDrain(): Promise<void> {
    this.shutDown();
    if (this.locked.size === 0) return Promise.resolve();
    return new Promise<void>((resolve) => this.drainWaiters.push(resolve));
  }

  shuttingDown(): boolean {
    return this.shutdownFlag;
  }

  debugSizes(): QueueDebugSizes {
    return {
      queue: this.ready.size,
      dirty: this.entries.size,
      processing: this.locked.size,
      waiters: this.waiters.length,
      waiting: this.waiting.size,
      waitingByKey: this.parked,
      rateLimiter: this.rateLimiter.size?.() ?? 0,
      metrics: this.metrics ? this.metrics.addTimes.size + this.metrics.processingStartTimes.size : 0,
    };
  }

  private keyOf(item: T): unknown {
    return this.keyFn === undefined ? item : this.keyFn(item);
  }

  private addOne(item: T, options: AddOptions | undefined): void {
    const key = this.keyOf(item);
    let after = options?.after ?? 0;
    if (options?.rateLimited) {
      const rl = this.rateLimiter.when(key);
      if (!(after > 0) || rl < after) after = rl;
    }
    const priority = options?.priority ?? 0;
    let readyAt = Number.NEGATIVE_INFINITY;
    if (after > 0) {
      readyAt = this.clock.now() + after;
      this.metrics?.retry();
    }
    const e = this.entries.get(key);
    if (e === undefined) {
      const entry: Entry<T> = { key, item, priority, readyAt, seq: 0, state: State.Waiting, index: -1 };
      this.entries.set(key, entry);
      if (readyAt === Number.NEGATIVE_INFINITY) this.becomeReady(entry);
      else {
        entry.seq = this.seq++;
        this.waiting.push(entry);
        this.arm();
      }
      return;
    }
    if (e.state === State.Waiting) {
      if (priority > e.priority) e.priority = priority;
      if (readyAt < e.readyAt) {
        if (readyAt === Number.NEGATIVE_INFINITY) {
          this.waiting.remove(e);
          this.becomeReady(e);
        } else {
          e.readyAt = readyAt;
          this.waiting.fix(e.index);
          this.arm();
        }
      }
      return;
    }
    // Ready or parked: only a higher priority changes anything; it moves to the end of its new level.
    if (priority > e.priority) {
      this.metrics?.depthMove(e.priority, priority);
      e.priority = priority;
      e.seq = this.seq++;
      if (e.state === State.Ready) this.ready.fix(e.index);
    }
  }

  private becomeReady(e: Entry<T>): void {
    e.seq = this.seq++;
    e.readyAt = Number.NEGATIVE_INFINITY;
    this.metrics?.add(e.key, e.priority);
    if (this.locked.has(e.key)) {
      e.state = State.Parked;
      this.parked++;
    } else {
      e.state = State.Ready;
      this.ready.push(e);
    }
  }

  private take(e: Entry<T>): GetWithPriorityResult<T> {
    this.entries.delete(e.key);
    this.locked.add(e.key);
    this.metrics?.get(e.key, e.priority);
    return { item: e.item, priority: e.priority, shutdown: false };
  }

  private dispatch(): void {
    while (this.waiters.length > 0) {
      const top = this.ready.pop();
      if (top === undefined) return;
      (this.waiters.shift() as Waiter<T>)(this.take(top));
    }
  }

  private fire = (): void => {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = this.clock.now();
    for (;;) {
      const top = this.waiting.peek();
      if (top === undefined || top.readyAt > now) break;
      this.waiting.pop();
      this.becomeReady(top);
    }
    this.dispatch();
    this.arm();
  };

  private arm(): void {
    const top = this.waiting.peek();
    if (top === undefined || top.readyAt >= this.timerAt) return;
    this.timer?.cancel();
    this.timerAt = top.readyAt;
    this.timer = this.clock.setTimer(this.fire, top.readyAt - this.clock.now());
  }
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

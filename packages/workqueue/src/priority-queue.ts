import { type Clock, type ClockTimer, realClock } from './clock.js';
import { type HeapEntry, IndexedHeap } from './internal/heap.js';
import { KeepAlive } from './internal/keep-alive.js';
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

/** Where an entry is. */
enum State {
  /** In the waiting heap until its ready time. */
  Waiting = 0,
  /** In its priority level's FIFO. */
  Ready = 1,
  /** Ready, but its key is being processed: held outside the levels until `done`. */
  Parked = 2,
  /** Not queued: only marks that the key is being processed. */
  Idle = 3,
  /** Replaced (priority raised) or dropped; skipped where it is still referenced. */
  Dead = 4,
}

interface Entry<T> extends HeapEntry {
  readonly key: unknown;
  item: T;
  priority: number;
  /** Ready time, ms on the queue clock (Waiting entries only). */
  readyAt: number;
  /** Tie-break of the waiting heap (insertion order). */
  seq: number;
  state: State;
  /** Whether the key is handed out and not yet `done`. */
  processing: boolean;
}

/** The FIFO of one priority; entries are removed lazily (a replaced entry is marked Dead). */
interface Level<T> {
  readonly priority: number;
  readonly fifo: Ring<Entry<T>>;
  /** Entries of the FIFO in state Ready. */
  live: number;
}

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
class PriorityQueueImpl<T> implements PriorityQueue<T>, QueueInspection {
  private readonly clock: Clock;
  private readonly keyFn: KeyFn<T> | undefined;
  private readonly metrics: QueueMetrics<unknown> | undefined;
  readonly rateLimiter: RateLimiter<unknown>;
  /** key → its entry, for every key that is queued (any state) or being processed. */
  private readonly entries = new Map<unknown, Entry<T>>();
  /** Non-empty levels, highest priority first. */
  private levels: Level<T>[] = [];
  private readonly levelByPriority = new Map<number, Level<T>>();
  private readyCount = 0;
  private parkedCount = 0;
  private processingCount = 0;
  private readonly waiting = new IndexedHeap<Entry<T>>(
    (a, b) => a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.seq < b.seq),
  );
  private readonly waiters = new Ring<(e: Entry<T> | undefined) => void>();
  private seq = 0;
  private timer: ClockTimer | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  private shutdownFlag = false;
  private drainWaiters: (() => void)[] = [];
  private readonly keepAlive: KeepAlive;

  constructor(options: PriorityQueueOptions<T>) {
    this.clock = options.clock ?? realClock;
    this.keepAlive = new KeepAlive(this.clock === realClock);
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
    return this.readyCount + this.parkedCount;
  }

  get(): Promise<GetResult<T>> {
    if (this.shutdownFlag) return Promise.resolve(GET_SHUTDOWN);
    const e = this.popReady();
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
    const e = this.popReady();
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
    const e = this.popReady();
    return e === undefined ? undefined : this.take(e);
  }

  done(item: T): void {
    const key = this.keyOf(item);
    const e = this.entries.get(key);
    if (e === undefined || !e.processing) return;
    e.processing = false;
    this.processingCount--;
    this.metrics?.done(key);
    if (e.state === State.Idle) {
      this.entries.delete(key);
    } else if (e.state === State.Parked) {
      this.parkedCount--;
      this.pushReady(e);
      this.dispatch();
    }
    if (this.processingCount === 0 && this.drainWaiters.length > 0) {
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
    this.waiting.clear();
    this.levels = [];
    this.levelByPriority.clear();
    this.readyCount = 0;
    this.parkedCount = 0;
    // keep only the bookkeeping of keys still being processed, so `done` and draining still work
    for (const [key, e] of this.entries) {
      if (e.processing) e.state = State.Idle;
      else this.entries.delete(key);
    }
    while (this.waiters.length > 0) this.waiters.shift()?.(undefined);
    this.keepAlive.set(false);
  }

  /**
   * {@link PriorityQueue.shutDown}, then resolves once every handed-out item is `done` (controller-runtime's
   * priority queue does not wait; waiting costs nothing when nothing is in flight).
   */
  shutDownWithDrain(): Promise<void> {
    this.shutDown();
    if (this.processingCount === 0) return Promise.resolve();
    return new Promise<void>((resolve) => this.drainWaiters.push(resolve));
  }

  shuttingDown(): boolean {
    return this.shutdownFlag;
  }

  debugSizes(): QueueDebugSizes {
    let levelSlots = 0;
    for (const l of this.levels) levelSlots += l.fifo.length;
    return {
      queue: levelSlots,
      keys: this.entries.size + this.levelByPriority.size,
      dirty: this.readyCount + this.parkedCount + this.waiting.size,
      processing: this.processingCount,
      waiters: this.waiters.length,
      waiting: this.waiting.size,
      waitingByKey: 0,
      parked: this.parkedCount,
      rateLimiter: this.rateLimiter.size?.() ?? 0,
      metrics: this.metrics ? this.metrics.addTimes.size + this.metrics.processingStartTimes.size : 0,
    };
  }

  private keyOf(item: T): unknown {
    return this.keyFn === undefined ? item : this.keyFn(item);
  }

  private addOne(item: T, options: AddOptions | undefined): void {
    const key = this.keyOf(item);
    let after = 0;
    let priority = 0;
    if (options !== undefined) {
      after = options.after ?? 0;
      priority = options.priority ?? 0;
      if (options.rateLimited) {
        const rl = this.rateLimiter.when(key);
        if (!(after > 0) || rl < after) after = rl;
      }
    }
    const delayed = after > 0;
    if (delayed) this.metrics?.retry();
    const e = this.entries.get(key);
    if (e === undefined || e.state === State.Idle) {
      let entry = e;
      if (entry === undefined) {
        entry = { key, item, priority, readyAt: 0, seq: 0, state: State.Idle, index: -1, processing: false };
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
      } else {
        const readyAt = this.clock.now() + after;
        if (readyAt < e.readyAt) {
          e.readyAt = readyAt;
          this.waiting.fix(e.index);
          this.arm();
        }
      }
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
    this.readyCount--;
    const old = this.levelByPriority.get(e.priority) as Level<T>;
    old.live--;
    const moved: Entry<T> = {
      key,
      item: e.item,
      priority,
      readyAt: 0,
      seq: 0,
      state: State.Idle,
      index: -1,
      processing: e.processing,
    };
    this.entries.set(key, moved);
    this.pushReady(moved);
  }

  private pushWaiting(e: Entry<T>, readyAt: number): void {
    e.state = State.Waiting;
    e.readyAt = readyAt;
    e.seq = this.seq++;
    this.waiting.push(e);
    this.arm();
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
    this.readyCount++;
    let level = this.levelByPriority.get(e.priority);
    if (level === undefined) {
      level = { priority: e.priority, fifo: new Ring<Entry<T>>(), live: 0 };
      this.levelByPriority.set(e.priority, level);
      const levels = this.levels;
      let i = levels.length;
      while (i > 0 && (levels[i - 1] as Level<T>).priority < e.priority) i--;
      levels.splice(i, 0, level);
    }
    level.live++;
    level.fifo.push(e);
  }

  /** Removes and returns the first live entry of the highest level, dropping levels that run empty. */
  private popReady(): Entry<T> | undefined {
    if (this.readyCount === 0) return undefined;
    for (;;) {
      const level = this.levels[0] as Level<T>;
      if (level.live > 0) {
        for (;;) {
          const e = level.fifo.shift() as Entry<T>;
          if (e.state !== State.Ready) continue;
          level.live--;
          this.readyCount--;
          if (this.readyCount === 0) {
            // every level left holds only replaced entries
            this.levels = [];
            this.levelByPriority.clear();
          } else if (level.live === 0) this.dropLevel(level);
          return e;
        }
      }
      this.dropLevel(level);
    }
  }

  private dropLevel(level: Level<T>): void {
    this.levels.shift();
    this.levelByPriority.delete(level.priority);
  }

  /** Marks a popped entry's key as being processed and returns its item. */
  private take(e: Entry<T>): T {
    e.state = State.Idle;
    e.processing = true;
    this.processingCount++;
    this.metrics?.get(e.key, e.priority);
    return e.item;
  }

  private dispatch(): void {
    while (this.waiters.length > 0 && this.readyCount > 0) {
      const e = this.popReady() as Entry<T>;
      this.waiters.shift()?.(e);
    }
    this.syncKeepAlive();
  }

  /** See {@link KeepAlive}: hold the process open while a `get()` waits and a delayed item will be ready. */
  private syncKeepAlive(): void {
    this.keepAlive.set(this.waiters.length > 0 && this.waiting.size > 0);
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
    this.syncKeepAlive();
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

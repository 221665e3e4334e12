import type { Clock } from '@kubeloop/core';
import { QueueBase } from './internal/queue-base.js';
import { Ring } from './internal/ring.js';
import type { MetricsProvider } from './metrics.js';

/** What {@link Queue.get} resolves to: an item to process, or the signal that the queue has shut down. */
export type GetResult<T> = { item: T; shutdown: false } | { item: undefined; shutdown: true };

/** Maps an item to the identity used for dedup and bookkeeping (a string, number or any `Map` key). */
export type KeyFn<T> = (item: T) => unknown;

/**
 * The basic work queue (client-go `workqueue.TypedInterface`): a FIFO of distinct keys where a key is never
 * handed to two workers at once.
 */
export interface Queue<T> {
  /**
   * Marks `item` as needing processing. Ignored after shutdown. A key already waiting is not queued twice;
   * a key currently being processed is queued again only when its worker calls {@link Queue.done}.
   */
  add(item: T): void;
  /** Number of items waiting to be handed out (not counting items being processed). */
  len(): number;
  /**
   * Waits for the next item and marks it as being processed. Resolves `{ shutdown: true }` only once the
   * queue is shutting down **and** empty: after {@link Queue.shutDown}, already queued items are still
   * handed out. Every item received must be passed to {@link Queue.done}.
   */
  get(): Promise<GetResult<T>>;
  /**
   * Synchronous, non-waiting {@link Queue.get}: the next ready item (now being processed, so it must be
   * passed to {@link Queue.done}), or `undefined` if none is ready. Does not report shutdown: check
   * {@link Queue.shuttingDown}. Same hand-out rules as `get`, without a promise per item.
   */
  tryGet(): T | undefined;
  /** Marks the processing of `item` finished; if it was re-added meanwhile, it is queued again. */
  done(item: T): void;
  /** Stops accepting adds and wakes every waiting {@link Queue.get}. Idempotent. */
  shutDown(): void;
  /**
   * Like {@link Queue.shutDown}, then resolves once every item handed out has been passed to
   * {@link Queue.done}. Items still queued are not waited for: keep calling `get` to drain them.
   */
  shutDownWithDrain(): Promise<void>;
  /** Whether {@link Queue.shutDown} has been called. */
  shuttingDown(): boolean;
}

/** Options common to every queue constructor. */
export interface QueueOptions<T> {
  /** Queue name; with {@link QueueOptions.metricsProvider} it enables metrics (client-go's rule). */
  name?: string;
  /** Receives the queue's metrics; ignored without a `name`. */
  metricsProvider?: MetricsProvider;
  /** Clock for every timer and duration (default `realClock` of `@kubeloop/core`); inject a `FakeClock` in tests. */
  clock?: Clock;
  /**
   * Identity of an item for dedup. Default: the item itself (fine for strings and numbers; objects are then
   * compared by reference). For object keys such as `{ namespace, name }`, return a string.
   */
  keyFn?: KeyFn<T>;
}

/** Sizes of a queue's internal structures; all 0 for an idle queue that has forgotten every key. */
export interface QueueDebugSizes {
  /** FIFO of keys ready to be handed out. */
  queue: number;
  /** Entries of the per-key bookkeeping maps (state of every dirty or processing key; items by key). */
  keys: number;
  /** Keys needing processing (queued or re-added while processing). */
  dirty: number;
  /** Keys handed out and not yet `done`. */
  processing: number;
  /** Pending `get()` callers. */
  waiters: number;
  /** Delayed items waiting in the heap (delaying queues). */
  waiting: number;
  /** Index of delayed items by key (delaying queues). */
  waitingByKey: number;
  /** Ready items held back while their key is being processed (priority queue). */
  parked: number;
  /** Per-item rate-limiter history (rate-limiting queues). */
  rateLimiter: number;
  /** Metric bookkeeping: add times + processing start times. */
  metrics: number;
}

type Waiter<T> = (r: GetResult<T>) => void;

const SHUTDOWN: GetResult<never> = Object.freeze({ item: undefined, shutdown: true }) as GetResult<never>;

/** Bits of a key's state: queued or re-added (needs processing) and/or handed to a worker. */
const DIRTY = 1;
/** Finished-key entries kept for reuse at most (tens of KiB). */
const SPARE_ENTRIES = 1024;
const PROCESSING = 2;

/** Bookkeeping of one key that is dirty and/or being processed. */
interface KeyEntry<T> {
  key: unknown;
  /** The item to hand out next (the first one added since the key was last handed out). */
  item: T;
  flags: number;
}

/**
 * Implementation of {@link Queue} (client-go `util/workqueue/queue.go`). client-go's `dirty` and
 * `processing` sets are one map here, key → entry with state bits, and the FIFO holds the entries, so a
 * full add → get → done cycle costs two to three hash look-ups.
 * @internal exported for the delaying and rate-limiting queues; use {@link newQueue}.
 */
export class BasicQueue<T> extends QueueBase<T, Waiter<T>> implements Queue<T> {
  /** Entries ready to be handed out, in order. */
  private readonly fifo = new Ring<KeyEntry<T>>();
  /** key → entry, for every key that is dirty or being processed. */
  private readonly entries = new Map<unknown, KeyEntry<T>>();
  /** Entries of finished keys kept for reuse: a busy queue allocates no entry per add (bounded). */
  private readonly spare: KeyEntry<T>[] = [];
  private dirtyCount = 0;
  /**
   * The entry handed out last, until its `done` (always a processing entry of `entries`, or undefined): a
   * worker's `done` right after its own get skips the map look-up.
   */
  private lastTaken: KeyEntry<T> | undefined;

  constructor(options: QueueOptions<T> = {}) {
    super(options, false);
  }

  add(item: T): void {
    if (this.shutdownFlag) return;
    const key = this.keyFn === undefined ? item : this.keyFn(item);
    const e = this.entries.get(key);
    if (e === undefined) {
      this.metrics?.add(key);
      let entry = this.spare.pop();
      if (entry === undefined) entry = { key, item, flags: DIRTY };
      else {
        entry.key = key;
        entry.item = item;
        entry.flags = DIRTY;
      }
      this.entries.set(key, entry);
      this.dirtyCount++;
      this.enqueue(entry);
      return;
    }
    if ((e.flags & DIRTY) !== 0) return;
    // being processed: remember it needs another round; `done` puts it back in line
    this.metrics?.add(key);
    e.flags |= DIRTY;
    e.item = item;
    this.dirtyCount++;
  }

  len(): number {
    return this.fifo.length;
  }

  get(): Promise<GetResult<T>> {
    if (this.fifo.length > 0) return Promise.resolve({ item: this.take(), shutdown: false });
    if (this.shutdownFlag) return Promise.resolve(SHUTDOWN);
    const waiting = new Promise<GetResult<T>>((resolve) => this.waiters.push(resolve));
    this.onWaitersChanged();
    return waiting;
  }

  tryGet(): T | undefined {
    if (this.fifo.length === 0) return undefined;
    return this.take();
  }

  done(item: T): void {
    const key = this.keyFn === undefined ? item : this.keyFn(item);
    let e = this.lastTaken;
    if (e === undefined || e.key !== key) e = this.entries.get(key);
    if (e === undefined || (e.flags & PROCESSING) === 0) return;
    if (e === this.lastTaken) this.lastTaken = undefined;
    this.metrics?.done(key);
    this.processingCount--;
    if ((e.flags & DIRTY) !== 0) {
      e.flags = DIRTY;
      this.enqueue(e);
      return;
    }
    this.entries.delete(key);
    if (this.spare.length < SPARE_ENTRIES) {
      e.key = undefined;
      e.item = undefined as T;
      e.flags = 0;
      this.spare.push(e);
    }
    this.released();
  }

  protected stop(): void {
    this.onShutDown();
    while (this.waiters.length > 0) (this.waiters.shift() as Waiter<T>)(SHUTDOWN);
    this.onWaitersChanged();
  }

  /** Sizes of the internal maps, sets, heaps and buffers (for leak checks such as case C12). */
  debugSizes(): QueueDebugSizes {
    return {
      queue: this.fifo.length,
      keys: this.entries.size,
      dirty: this.dirtyCount,
      processing: this.processingCount,
      waiters: this.waiters.length,
      waiting: 0,
      waitingByKey: 0,
      parked: 0,
      rateLimiter: 0,
      metrics: this.metrics ? this.metrics.addTimes.size + this.metrics.processingStartTimes.size : 0,
    };
  }

  /** Hook for subclasses: release timers and pending delays. */
  protected onShutDown(): void {}

  /** Hook for subclasses: the number of pending `get()` calls ({@link waiterCount}) changed. */
  protected onWaitersChanged(): void {}

  /** Pending `get()` calls. */
  protected get waiterCount(): number {
    return this.waiters.length;
  }

  /** Puts a dirty, not-processing entry in line, or hands it straight to a waiting worker. */
  private enqueue(e: KeyEntry<T>): void {
    this.fifo.push(e);
    if (this.waiters.length > 0) {
      (this.waiters.shift() as Waiter<T>)({ item: this.take(), shutdown: false });
      this.onWaitersChanged();
    }
  }

  /** Moves the oldest queued entry to processing and returns its item. Precondition: fifo not empty. */
  private take(): T {
    const e = this.fifo.shift() as KeyEntry<T>;
    e.flags = PROCESSING;
    this.lastTaken = e;
    this.dirtyCount--;
    this.processingCount++;
    this.metrics?.get(e.key);
    return e.item;
  }
}

/**
 * Creates the basic deduplicating work queue (client-go `workqueue.NewTypedWithConfig`).
 *
 * @example
 * ```ts
 * const q = newQueue<string>();
 * q.add('default/web');
 * const { item, shutdown } = await q.get();
 * if (!shutdown) { try { await work(item); } finally { q.done(item); } }
 * ```
 */
export function newQueue<T>(options: QueueOptions<T> = {}): Queue<T> & QueueInspection {
  return new BasicQueue<T>(options);
}

/** Introspection every queue of this package offers, for tests and leak checks. */
export interface QueueInspection {
  /** Sizes of the internal structures; all 0 once an idle queue's keys are processed and forgotten. */
  debugSizes(): QueueDebugSizes;
}

import { checkDelayMs } from './errors.js';
import { type DelayedEntry, DelayHeap } from './internal/delay-heap.js';
import { KeepAlive } from './internal/keep-alive.js';
import {
  BasicQueue,
  type Queue,
  type QueueDebugSizes,
  type QueueInspection,
  type QueueOptions,
} from './queue.js';

/** A {@link Queue} that can also add an item after a delay (client-go `workqueue.TypedDelayingInterface`). */
export interface DelayingQueue<T> extends Queue<T> {
  /**
   * Adds `item` once `delayMs` milliseconds have passed on the queue's clock (≤ 0 ⇒ {@link Queue.add} now).
   * If the same key is already waiting, the earlier ready time wins. Ignored after shutdown; items still
   * waiting at shutdown are dropped. Counts as a retry in the metrics.
   * @throws InvalidArgumentError when `delayMs` is not a finite number (a string, NaN, Infinity), before
   *   anything is queued.
   */
  addAfter(item: T, delayMs: number): void;
}

interface WaitingEntry<T> extends DelayedEntry {
  key: unknown;
  item: T;
}

/**
 * Implementation of {@link DelayingQueue} (client-go `util/workqueue/delaying_queue.go`): a min-heap by
 * ready time plus one timer armed for the earliest entry.
 * @internal use {@link newDelayingQueue}.
 */
export class BasicDelayingQueue<T> extends BasicQueue<T> implements DelayingQueue<T> {
  private readonly waiting = new DelayHeap<WaitingEntry<T>>(
    this.clock,
    (e) => {
      this.waitingByKey.delete(e.key);
      this.add(e.item);
    },
    () => {},
    () => this.onWaitersChanged(),
  );
  private readonly waitingByKey = new Map<unknown, WaitingEntry<T>>();
  private readonly keepAlive = new KeepAlive(this.clock);

  addAfter(item: T, delayMs: number): void {
    checkDelayMs('addAfter: delayMs', delayMs);
    if (this.shuttingDown()) return;
    this.metrics?.retry();
    if (!(delayMs > 0)) {
      this.add(item);
      return;
    }
    const key = this.keyFn === undefined ? item : this.keyFn(item);
    const readyAt = this.clock.now() + delayMs;
    const existing = this.waitingByKey.get(key);
    if (existing !== undefined) {
      if (this.waiting.advance(existing, readyAt)) existing.item = item;
    } else {
      const entry: WaitingEntry<T> = { key, item, readyAt, seq: 0, index: -1 };
      this.waitingByKey.set(key, entry);
      this.waiting.push(entry, readyAt);
    }
  }

  override debugSizes(): QueueDebugSizes {
    const s = super.debugSizes();
    s.waiting = this.waiting.size;
    s.waitingByKey = this.waitingByKey.size;
    return s;
  }

  protected override onShutDown(): void {
    this.waiting.clear();
    this.waitingByKey.clear();
    this.keepAlive.set(false);
  }

  protected override onWaitersChanged(): void {
    this.keepAlive.set(this.waiterCount > 0 && this.waiting.size > 0);
  }
}

/**
 * Creates a delaying queue (client-go `workqueue.NewTypedDelayingQueueWithConfig`).
 * @example
 * ```ts
 * const q = newDelayingQueue<string>();
 * q.addAfter('default/web', 2_000); // handed out in ~2 s
 * ```
 */
export function newDelayingQueue<T>(options: QueueOptions<T> = {}): DelayingQueue<T> & QueueInspection {
  return new BasicDelayingQueue<T>(options);
}

import { type ClockTimer, realClock } from './clock.js';
import { type HeapEntry, IndexedHeap } from './internal/heap.js';
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
   */
  addAfter(item: T, delayMs: number): void;
}

interface WaitingEntry<T> extends HeapEntry {
  key: unknown;
  item: T;
  readyAt: number;
  seq: number;
}

/**
 * Implementation of {@link DelayingQueue} (client-go `util/workqueue/delaying_queue.go`): a min-heap by
 * ready time plus one timer armed for the earliest entry.
 * @internal use {@link newDelayingQueue}.
 */
export class BasicDelayingQueue<T> extends BasicQueue<T> implements DelayingQueue<T> {
  private readonly waiting = new IndexedHeap<WaitingEntry<T>>(
    (a, b) => a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.seq < b.seq),
  );
  private readonly waitingByKey = new Map<unknown, WaitingEntry<T>>();
  private timer: ClockTimer | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  private seq = 0;
  private readonly keepAlive = new KeepAlive(this.clock === realClock);

  addAfter(item: T, delayMs: number): void {
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
      if (readyAt < existing.readyAt) {
        existing.readyAt = readyAt;
        existing.item = item;
        this.waiting.fix(existing.index);
      }
    } else {
      const entry: WaitingEntry<T> = { key, item, readyAt, seq: this.seq++, index: -1 };
      this.waitingByKey.set(key, entry);
      this.waiting.push(entry);
    }
    this.arm();
  }

  override debugSizes(): QueueDebugSizes {
    const s = super.debugSizes();
    s.waiting = this.waiting.size;
    s.waitingByKey = this.waitingByKey.size;
    return s;
  }

  protected override onShutDown(): void {
    this.timer?.cancel();
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    this.waiting.clear();
    this.waitingByKey.clear();
    this.keepAlive.set(false);
  }

  protected override onWaitersChanged(): void {
    this.keepAlive.set(this.waiterCount > 0 && this.waiting.size > 0);
  }

  /** Moves every entry whose time has come into the queue, then re-arms the timer for the next one. */
  private fire = (): void => {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = this.clock.now();
    for (;;) {
      const top = this.waiting.peek();
      if (top === undefined || top.readyAt > now) break;
      this.waiting.pop();
      this.waitingByKey.delete(top.key);
      this.add(top.item);
    }
    this.arm();
  };

  private arm(): void {
    this.onWaitersChanged();
    const top = this.waiting.peek();
    if (top === undefined || top.readyAt >= this.timerAt) return;
    this.timer?.cancel();
    this.timerAt = top.readyAt;
    this.timer = this.clock.setTimer(this.fire, top.readyAt - this.clock.now());
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

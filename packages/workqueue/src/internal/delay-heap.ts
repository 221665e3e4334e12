import type { Clock, ClockTimer } from '@kubeloop/core';
import { type HeapEntry, IndexedHeap } from './heap.js';

/** An entry of a {@link DelayHeap}: its ready time (ms on the queue clock) and insertion order (tie-break). */
export interface DelayedEntry extends HeapEntry {
  readyAt: number;
  seq: number;
}

/**
 * Entries waiting for their ready time: a min-heap by ready time (ties in insertion order) and one timer
 * armed for the earliest entry, never one timer per entry (client-go `delaying_queue.go`: `waitForPriorityQueue`
 * and the single timer of its `waitingLoop`). Shared by the delaying queue and the priority queue.
 */
export class DelayHeap<E extends DelayedEntry> {
  private readonly heap = new IndexedHeap<E>(
    (a, b) => a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.seq < b.seq),
  );
  private timer: ClockTimer | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  private seq = 0;

  /**
   * @param clock - the queue's clock.
   * @param onDue - receives each entry whose time has come, in order (it has left the heap).
   * @param afterDue - called once after a timer moved its due entries (e.g. to hand them to waiting workers).
   * @param onArm - called whenever the heap changes its timer, so the queue can hold or release its keep-alive.
   */
  constructor(
    private readonly clock: Clock,
    private readonly onDue: (e: E) => void,
    private readonly afterDue: () => void,
    private readonly onArm: () => void,
  ) {}

  get size(): number {
    return this.heap.size;
  }

  /** Adds `e` to wait until `readyAt` (ms on the queue clock). */
  push(e: E, readyAt: number): void {
    e.readyAt = readyAt;
    e.seq = this.seq++;
    this.heap.push(e);
    this.arm();
  }

  /** Moves a waiting entry's ready time earlier; returns whether it moved (a later time never wins). */
  advance(e: E, readyAt: number): boolean {
    if (!(readyAt < e.readyAt)) return false;
    e.readyAt = readyAt;
    this.heap.fix(e.index);
    this.arm();
    return true;
  }

  /** Takes a waiting entry out (the timer stays: firing early finds nothing due and re-arms). */
  remove(e: E): void {
    this.heap.remove(e);
  }

  /** Drops every entry and the timer. */
  clear(): void {
    this.timer?.cancel();
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    this.heap.clear();
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = this.clock.now();
    for (;;) {
      const top = this.heap.peek();
      if (top === undefined || top.readyAt > now) break;
      this.heap.pop();
      this.onDue(top);
    }
    this.afterDue();
    this.arm();
  };

  private arm(): void {
    this.onArm();
    const top = this.heap.peek();
    if (top === undefined || top.readyAt >= this.timerAt) return;
    this.timer?.cancel();
    this.timerAt = top.readyAt;
    this.timer = this.clock.setTimer(this.fire, top.readyAt - this.clock.now());
  }
}

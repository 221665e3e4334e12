import type { DelayedEntry } from './delay-heap.js';

/** Where a priority queue's entry is. */
export enum State {
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

/** One key's entry; `readyAt`/`seq` are used while it waits in the delay heap. */
export interface Entry<T> extends DelayedEntry {
  key: unknown;
  item: T;
  priority: number;
  state: State;
  /** Whether the key is handed out and not yet `done`. */
  processing: boolean;
  /** Its place in the order of becoming ready (set by the ready levels; the fair share picks the lowest). */
  stamp: number;
}

/** Finished-key entries kept for reuse at most (tens of KiB). */
const SPARE_ENTRIES = 1024;

/** Entries of finished keys kept for reuse (bounded), so a busy queue allocates no entry per new key. */
export class EntryPool<T> {
  private readonly spare: Entry<T>[] = [];

  /** A new (or reused) idle entry. */
  get(key: unknown, item: T, priority: number, processing: boolean): Entry<T> {
    const e = this.spare.pop();
    if (e === undefined)
      return {
        key,
        item,
        priority,
        readyAt: 0,
        seq: 0,
        state: State.Idle,
        index: -1,
        processing,
        stamp: 0,
      };
    e.key = key;
    e.item = item;
    e.priority = priority;
    e.processing = processing;
    return e;
  }

  /**
   * Keeps a finished entry for reuse. Only entries that left the queue's map idle come here: no FIFO, heap
   * or waiter refers to them (a replaced entry, still in its level's FIFO, is never recycled). Its heap
   * fields are set again when it next waits in the heap.
   */
  recycle(e: Entry<T>): void {
    if (this.spare.length >= SPARE_ENTRIES) return;
    e.key = undefined;
    e.item = undefined as T;
    this.spare.push(e);
  }
}

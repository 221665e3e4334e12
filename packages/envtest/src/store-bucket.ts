/**
 * One storage bucket of the object store (a resource's objects): objects by key with their etcd-ordered key list
 * kept lazily, the bounded event history watches resume from, its listeners and its watch cache's resourceVersion.
 */
import { compareKeys, type Entry, type StoreEvent, type StoreListener } from './store-entry.js';

/** A bucket's state; the `Store` owns every bucket and keeps the global resourceVersion. */
export class Bucket {
  readonly objects = new Map<string, Entry>();
  sorted: string[] = [];
  dirty = false;
  /** Retained events, oldest first (a ring kept as array + start offset). */
  history: StoreEvent[] = [];
  historyStart = 0;
  /** Highest RV of any event dropped from this bucket's history (0 = none dropped). */
  truncatedRv = 0;
  readonly listeners = new Set<StoreListener>();
  /**
   * The resourceVersion this resource's watch cache has processed (the cacher's `lastProcessedResourceVersion`):
   * the RV of its last event, or a later one learnt from an etcd progress notification.
   */
  cacheRv: number;
  /** No event since the last progress tick (etcd elides the progress notification of a watcher that got events). */
  quiet = true;

  constructor(cacheRv: number) {
    this.cacheRv = cacheRv;
  }

  sortedKeys(): string[] {
    if (this.dirty) {
      this.sorted = [...this.objects.keys()].sort(compareKeys);
      this.dirty = false;
    }
    return this.sorted;
  }
  noteInsert(key: string): void {
    if (this.dirty) return;
    const last = this.sorted[this.sorted.length - 1];
    if (last === undefined || compareKeys(last, key) < 0) this.sorted.push(key);
    else this.dirty = true;
  }
  get historyLength(): number {
    return this.history.length - this.historyStart;
  }
  pushEvent(ev: StoreEvent, limit: number): void {
    this.history.push(ev);
    while (this.historyLength > limit) {
      const dropped = this.history[this.historyStart]!;
      this.truncatedRv = Math.max(this.truncatedRv, dropped.rv);
      this.historyStart++;
    }
    if (this.historyStart > 1024 && this.historyStart * 2 > this.history.length) {
      this.history = this.history.slice(this.historyStart);
      this.historyStart = 0;
    }
  }
  /** Events with rv > fromRv, oldest first. */
  eventsAfter(fromRv: number): StoreEvent[] {
    const h = this.history;
    let lo = this.historyStart;
    let hi = h.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (h[mid]!.rv <= fromRv) lo = mid + 1;
      else hi = mid;
    }
    return h.slice(lo);
  }
}

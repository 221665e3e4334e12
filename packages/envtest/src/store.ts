import type { KObject } from './resource-type.js';
import { Bucket } from './store-bucket.js';
import {
  compareKeys,
  Entry,
  ExpiredError,
  type Snapshot,
  type StoreEvent,
  type StoreListener,
} from './store-entry.js';

export {
  compareKeys,
  deepFreeze,
  Entry,
  type EventType,
  ExpiredError,
  type Snapshot,
  type StoreEvent,
  type StoreListener,
} from './store-entry.js';

/**
 * The object store: one global resourceVersion sequence over all buckets (like an etcd revision), a
 * bounded per-bucket event history for watches and consistent paged lists, and synchronous fan-out of
 * changes to listeners.
 */
export class Store {
  #rv: number;
  #compactedRv = 0;
  #historyLimit: number;
  readonly #buckets = new Map<string, Bucket>();
  /** The RV the watch caches started at (kube-apiserver start): a bucket made later begins its cache RV here. */
  #cacheStartRv: number;

  /** @param historyLimit events kept per bucket for watch replay (default 10000). */
  constructor(options: { historyLimit?: number; initialRv?: number } = {}) {
    this.#historyLimit = options.historyLimit ?? 10000;
    this.#rv = options.initialRv ?? 1;
    this.#cacheStartRv = this.#rv;
  }

  /** The current (latest) resourceVersion. */
  get rv(): number {
    return this.#rv;
  }

  /** RVs at or below this were compacted (exact lists and continue tokens there get 410). */
  get compactedRv(): number {
    return this.#compactedRv;
  }

  /** Allocate the next resourceVersion without storing anything (used by dry-run-free bookkeeping). */
  #next(): number {
    this.#rv += 1;
    return this.#rv;
  }

  #bucket(storageKey: string): Bucket {
    let b = this.#buckets.get(storageKey);
    if (!b) {
      b = new Bucket(this.#cacheStartRv);
      this.#buckets.set(storageKey, b);
    }
    return b;
  }

  get(storageKey: string, key: string): Entry | undefined {
    return this.#buckets.get(storageKey)?.objects.get(key);
  }

  /** Number of objects in one bucket. */
  size(storageKey: string): number {
    return this.#buckets.get(storageKey)?.objects.size ?? 0;
  }

  /**
   * Store a new version of an object (create when absent, else modify). The object is mutated to carry
   * the new `metadata.resourceVersion`, then frozen. Emits ADDED or MODIFIED.
   */
  put(storageKey: string, key: string, obj: KObject): Entry {
    const b = this.#bucket(storageKey);
    const rv = this.#next();
    obj.metadata ??= {};
    const meta = obj.metadata;
    meta.resourceVersion = String(rv);
    const entry = new Entry(key, rv, obj);
    const prev = b.objects.get(key);
    b.objects.set(key, entry);
    if (!prev) b.noteInsert(key);
    this.#emit(b, { rv, type: prev ? 'MODIFIED' : 'ADDED', entry, prev, lines: new Map() });
    return entry;
  }

  /**
   * Remove an object. `last` is its final state (e.g. with finalizers emptied); it is stored in the
   * DELETED event with the delete's new resourceVersion. Returns that final entry.
   */
  remove(storageKey: string, key: string, last?: KObject): Entry | undefined {
    const b = this.#buckets.get(storageKey);
    const prev = b?.objects.get(key);
    if (!b || !prev) return undefined;
    const rv = this.#next();
    const src = last ?? (structuredClone(prev.obj) as KObject);
    src.metadata ??= {};
    const meta = src.metadata;
    meta.resourceVersion = String(rv);
    const entry = new Entry(key, rv, src);
    b.objects.delete(key);
    b.dirty = true;
    this.#emit(b, { rv, type: 'DELETED', entry, prev, lines: new Map() });
    return entry;
  }

  #emit(b: Bucket, ev: StoreEvent): void {
    b.pushEvent(ev, this.#historyLimit);
    b.cacheRv = ev.rv;
    b.quiet = false;
    for (const l of [...b.listeners]) {
      try {
        l(ev);
      } catch {
        // a broken listener must not break the write path
      }
    }
  }

  /**
   * A consistent, sorted view of a bucket. Without `atRv` (or with the current RV) it is the live state.
   * With an older `atRv` the state is rebuilt from the event history.
   * @throws ExpiredError when `atRv` is compacted or older than the retained history.
   */
  snapshot(storageKey: string, atRv?: number): Snapshot {
    const b = this.#bucket(storageKey);
    const current = this.#rv;
    if (atRv === undefined || atRv >= current) {
      const objects = b.objects;
      return { rv: current, keys: b.sortedKeys(), get: (k) => objects.get(k) };
    }
    if (atRv < this.#compactedRv) throw new ExpiredError(atRv, this.#compactedRv, true);
    const later = b.eventsAfter(atRv);
    if (later.length === 0) {
      const objects = b.objects;
      return { rv: atRv, keys: b.sortedKeys(), get: (k) => objects.get(k) };
    }
    if (atRv < b.truncatedRv) throw new ExpiredError(atRv, b.truncatedRv);
    // undo the later events, newest first
    const overrides = new Map<string, Entry | undefined>();
    for (let i = later.length - 1; i >= 0; i--) {
      const ev = later[i]!;
      overrides.set(ev.entry.key, ev.prev);
    }
    const objects = new Map(b.objects);
    for (const [k, v] of overrides) {
      if (v) objects.set(k, v);
      else objects.delete(k);
    }
    const keys = [...objects.keys()].sort(compareKeys);
    return { rv: atRv, keys, get: (k) => objects.get(k) };
  }

  /**
   * Subscribe to a bucket's changes. With `fromRv`, the retained events after it are returned for replay
   * (the listener is registered atomically with that replay: nothing is lost in between).
   * @throws ExpiredError when `fromRv` is older than the retained history or compacted.
   */
  subscribe(
    storageKey: string,
    fromRv: number | undefined,
    listener: StoreListener,
  ): { replay: StoreEvent[]; cancel: () => void } {
    const b = this.#bucket(storageKey);
    let replay: StoreEvent[] = [];
    if (fromRv !== undefined && fromRv < this.#rv) {
      if (fromRv < this.#compactedRv) throw new ExpiredError(fromRv, this.#compactedRv, true);
      if (fromRv < b.truncatedRv) throw new ExpiredError(fromRv, b.truncatedRv);
      replay = b.eventsAfter(fromRv);
    }
    b.listeners.add(listener);
    return { replay, cancel: () => b.listeners.delete(listener) };
  }

  /**
   * Check that a watch could start at `fromRv` without subscribing.
   * @throws ExpiredError (with `compacted` set when compaction is the reason).
   */
  checkWatchable(storageKey: string, fromRv: number): void {
    if (fromRv >= this.#rv) return;
    if (fromRv < this.#compactedRv) throw new ExpiredError(fromRv, this.#compactedRv, true);
    const b = this.#buckets.get(storageKey);
    if (b && fromRv < b.truncatedRv) throw new ExpiredError(fromRv, b.truncatedRv);
  }

  /**
   * The resourceVersion the watch cache of one resource has processed (kube-apiserver's cacher keeps one per
   * resource: `lastProcessedResourceVersion` in `dispatchEvents`, the RV its bookmarks carry). It is the RV of
   * the resource's last event, or the global RV of a later progress notification ({@link requireFresh},
   * {@link progressNotify}), or the RV the caches started at.
   */
  cacheRv(storageKey: string): number {
    return this.#buckets.get(storageKey)?.cacheRv ?? this.#cacheStartRv;
  }

  /**
   * A read from the watch cache that needs it at `minRv` or later (a consistent list needs the current RV; a
   * list or watch from an RV the cache has not reached): kube-apiserver 1.32's watch cache then asks etcd for
   * a progress notification (`waitingUntilFresh`, ConsistentListFromCache), which brings its RV to etcd's
   * current revision even when the resource saw no event.
   */
  requireFresh(storageKey: string, minRv: number): void {
    const b = this.#bucket(storageKey);
    if (minRv > b.cacheRv) b.cacheRv = this.#rv;
  }

  /**
   * etcd's periodic progress notification (`--experimental-watch-progress-notify-interval`, 10 min by default):
   * each resource's watch that got no event since the previous tick learns the current revision, so its cache
   * RV (and the bookmarks it sends) moves on.
   */
  progressNotify(): void {
    for (const b of this.#buckets.values()) {
      if (b.quiet) b.cacheRv = this.#rv;
      b.quiet = true;
    }
    this.#cacheStartRv = this.#rv;
  }

  /** Number of active listeners on a bucket (for tests and diagnostics). */
  listenerCount(storageKey: string): number {
    return this.#buckets.get(storageKey)?.listeners.size ?? 0;
  }

  /**
   * Compact at the current resourceVersion, like etcd compaction: afterwards an exact-RV list, a continue
   * token or a watch from any older RV gets 410 Expired.
   */
  compact(): void {
    this.#compactedRv = this.#rv;
    this.dropWatchHistory();
  }

  /**
   * Forget every retained watch event, as a restarted kube-apiserver whose watch cache starts empty at the
   * current resourceVersion: a watch from an older RV then gets an ERROR event with 410 Expired, while
   * objects, the RV sequence and exact reads of older RVs (etcd's, until compaction) are kept.
   */
  dropWatchHistory(): void {
    for (const b of this.#buckets.values()) {
      b.history = [];
      b.historyStart = 0;
      b.truncatedRv = Math.max(b.truncatedRv, this.#rv);
      b.cacheRv = this.#rv;
    }
    this.#cacheStartRv = this.#rv;
  }

  /** The watch caches (re)start at the current RV, as kube-apiserver's cachers list etcd when it starts. */
  startWatchCaches(): void {
    for (const b of this.#buckets.values()) b.cacheRv = this.#rv;
    this.#cacheStartRv = this.#rv;
  }

  /**
   * Shrink (or grow) the per-bucket watch history to `n` events, like the API server's watch cache window:
   * a watch from an RV older than the window gets an ERROR event with 410 Expired.
   */
  setWatchHistoryLimit(n: number): void {
    if (!Number.isInteger(n) || n < 0)
      throw new RangeError('watch history limit must be a non-negative integer');
    this.#historyLimit = n;
    for (const b of this.#buckets.values()) {
      while (b.historyLength > n) {
        const dropped = b.history[b.historyStart]!;
        b.truncatedRv = Math.max(b.truncatedRv, dropped.rv);
        b.historyStart++;
      }
    }
  }

  get watchHistoryLimit(): number {
    return this.#historyLimit;
  }

  /** Every bucket key currently known. */
  bucketKeys(): string[] {
    return [...this.#buckets.keys()];
  }
}

import type { KubeObject } from '@kubeloop/client';
import type { ReflectorStore } from './reflector-options.js';
import { DeletedFinalStateUnknown, type KeyFunc, metaNamespaceKeyFunc } from './store.js';

/**
 * What happened to an object (client-go `DeltaType`): `Added`/`Updated`/`Deleted` come from watch events,
 * `Replaced` from a list or relist, `Sync` from a periodic resync.
 */
export type DeltaType = 'Added' | 'Updated' | 'Deleted' | 'Replaced' | 'Sync';

/** One change, in the order it was seen. A `Deleted` found by a relist carries a {@link DeletedFinalStateUnknown}. */
export interface Delta<T extends KubeObject = KubeObject> {
  readonly type: DeltaType;
  readonly object: T | DeletedFinalStateUnknown<T>;
}

/** The store the FIFO feeds, as far as the FIFO needs it: which keys exist and their last known state. */
export interface KeyListerGetter<T extends KubeObject = KubeObject> {
  listKeys(): Iterable<string>;
  get(key: string): T | undefined;
}

/** Options of {@link RealFIFO}. */
export interface RealFIFOOptions<T extends KubeObject = KubeObject> {
  /** @defaultValue {@link metaNamespaceKeyFunc} */
  readonly keyFunc?: KeyFunc;
  /**
   * The consumer's store: `replace` queues a `Deleted` tombstone for each of its keys missing from the new
   * list, and `resync` a `Sync` for each of its objects. Without it, `replace` queues no tombstones.
   */
  readonly knownObjects?: KeyListerGetter<T>;
  /**
   * Applied to each object as it is queued (not to tombstones, which carry the consumer's already
   * transformed state). A throwing transform is the producer's error (the reflector relists).
   */
  readonly transform?: (obj: T) => T;
}

/** Popping from a closed FIFO. Code `'ERR_FIFO_CLOSED'`. */
export class FIFOClosedError extends Error {
  readonly code = 'ERR_FIFO_CLOSED' as const;
  override readonly name = 'FIFOClosedError';
}

/**
 * The in-order queue between a {@link Reflector} and its consumer (client-go `tools/cache/the_real_fifo.go`,
 * which replaced `DeltaFIFO` in shared informers): one {@link Delta} per event, delivered in arrival order
 * with no per-key compression, deletes delivered even when the object is gone. It is a
 * {@link ReflectorStore}, so `new Reflector(lw, fifo)` fills it; a consumer `pop`s. `hasSynced()` is true once
 * every delta of the first `replace` has been popped. The informers of this package apply the same
 * semantics directly (a FIFO drained as it fills), so this class is for building your own consumer.
 */
export class RealFIFO<T extends KubeObject = KubeObject> implements ReflectorStore<T> {
  readonly #keyFunc: KeyFunc;
  readonly #known: KeyListerGetter<T> | undefined;
  readonly #transform: ((obj: T) => T) | undefined;
  #queue: Delta<T>[] = [];
  #head = 0;
  #populated = false;
  #initialCount = 0;
  #closed = false;
  #waiters: Array<() => void> = [];
  #lastRV = '';

  constructor(options: RealFIFOOptions<T> = {}) {
    this.#keyFunc = options.keyFunc ?? metaNamespaceKeyFunc;
    this.#known = options.knownObjects;
    this.#transform = options.transform;
  }

  /** Number of queued deltas. */
  get length(): number {
    return this.#queue.length - this.#head;
  }

  /** The resourceVersion of the last replace, event or bookmark queued. */
  get lastSyncResourceVersion(): string {
    return this.#lastRV;
  }

  /** True once the first `replace` happened and all its deltas were popped (client-go `HasSynced`). */
  hasSynced(): boolean {
    return this.#populated && this.#initialCount === 0;
  }

  add(obj: T): void {
    this.#populated = true;
    this.#push({ type: 'Added', object: this.#tx(obj) });
    this.#bump(obj);
  }

  update(obj: T): void {
    this.#populated = true;
    this.#push({ type: 'Updated', object: this.#tx(obj) });
    this.#bump(obj);
  }

  delete(obj: T): void {
    this.#populated = true;
    this.#push({ type: 'Deleted', object: this.#tx(obj) });
    this.#bump(obj);
  }

  /** Queues `Replaced` for every item, then a `Deleted` tombstone for every known key not listed. */
  replace(items: T[], resourceVersion: string): void {
    const first = !this.#populated;
    this.#populated = true;
    const listed = new Set<string>();
    let queued = 0;
    for (let i = 0; i < items.length; i++) {
      const obj = this.#tx(items[i]!);
      listed.add(this.#keyFunc(obj));
      this.#push({ type: 'Replaced', object: obj });
      queued++;
    }
    if (this.#known) {
      for (const key of this.#known.listKeys()) {
        if (listed.has(key)) continue;
        const last = this.#known.get(key);
        if (!last) continue;
        this.#push({ type: 'Deleted', object: new DeletedFinalStateUnknown(key, last) });
        queued++;
      }
    }
    if (first) this.#initialCount = queued;
    this.#lastRV = resourceVersion;
  }

  /** Queues a `Sync` for every object of `knownObjects` (client-go `Resync`). */
  resync(): void {
    if (!this.#known) return;
    for (const key of this.#known.listKeys()) {
      const obj = this.#known.get(key);
      if (obj) this.#push({ type: 'Sync', object: obj });
    }
  }

  bookmark(resourceVersion: string): void {
    this.#lastRV = resourceVersion;
  }

  /**
   * The oldest delta; waits for one when empty. Resolves `undefined` when `signal` aborts first.
   * @throws FIFOClosedError once closed and drained.
   */
  async pop(signal?: AbortSignal): Promise<Delta<T> | undefined> {
    for (;;) {
      const d = this.tryPop();
      if (d) return d;
      if (this.#closed) throw new FIFOClosedError('the FIFO is closed');
      if (signal?.aborted) return undefined;
      await new Promise<void>((resolve) => {
        const done = () => {
          signal?.removeEventListener('abort', done);
          const i = this.#waiters.indexOf(done);
          if (i >= 0) this.#waiters.splice(i, 1);
          resolve();
        };
        this.#waiters.push(done);
        signal?.addEventListener('abort', done, { once: true });
      });
    }
  }

  /** The oldest delta, or `undefined` when empty (never waits). */
  tryPop(): Delta<T> | undefined {
    if (this.#head >= this.#queue.length) return undefined;
    const d = this.#queue[this.#head]!;
    this.#queue[this.#head] = undefined as never;
    this.#head++;
    if (this.#head === this.#queue.length) {
      this.#queue = [];
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    if (this.#initialCount > 0) this.#initialCount--;
    return d;
  }

  /** No more deltas are accepted; waiting `pop`s end once the queue is drained. */
  close(): void {
    this.#closed = true;
    this.#wake();
  }

  #tx(obj: T): T {
    return this.#transform ? this.#transform(obj) : obj;
  }

  #push(d: Delta<T>): void {
    if (this.#closed) throw new FIFOClosedError('the FIFO is closed');
    this.#queue.push(d);
    this.#wake();
  }

  #wake(): void {
    if (this.#waiters.length === 0) return;
    const ws = this.#waiters;
    this.#waiters = [];
    for (const w of ws) w();
  }

  #bump(obj: T): void {
    const rv = obj.metadata?.resourceVersion;
    if (rv) this.#lastRV = rv;
  }
}

import {
  type Clock,
  discardLogger,
  isNoMatchError,
  isNotFound,
  type KubeObject,
  type Logger,
  realClock,
} from '@kubeloop/client';
import { CompactIndexer } from './compact-store.js';
import { onAbort } from './internal/abort.js';
import type { ListerWatcher } from './list-watch.js';
import { Reflector, type ReflectorOptions, type ReflectorStore } from './reflector.js';
import {
  DeletedFinalStateUnknown,
  deepFreeze,
  Indexer,
  type IndexerReader,
  type IndexerStore,
  type Indexers,
  metaNamespaceIndexFunc,
  NAMESPACE_INDEX,
} from './store.js';

/**
 * ResourceEventHandler knows how to react to changes of cached objects (client-go
 * `ResourceEventHandler`). Objects are frozen and shared. A delete found by a relist arrives as a
 * {@link DeletedFinalStateUnknown} tombstone, so `onDelete` must handle both shapes.
 */
export interface ResourceEventHandler<T extends KubeObject = KubeObject> {
  /** `isInInitialList`: the object came from the first list (or a late handler's synthetic adds). */
  onAdd?(obj: T, isInInitialList: boolean): void;
  /** `oldObj === newObj` (same resourceVersion) for a resync. */
  onUpdate?(oldObj: T, newObj: T): void;
  onDelete?(obj: T | DeletedFinalStateUnknown<T>): void;
}

/** Options of one handler (client-go `AddEventHandlerWithResyncPeriod`). */
export interface HandlerOptions {
  /**
   * This handler's resync period in ms: every period it gets `onUpdate(obj, obj)` for every cached object.
   * 0 disables; a positive value below 1000 is raised to 1000 (client-go's minimum).
   * @defaultValue the informer's `resyncPeriodMs`
   */
  readonly resyncPeriodMs?: number;
}

/** What `addEventHandler` returns. */
export interface ResourceEventHandlerRegistration {
  /** True once the informer has synced and this handler has seen the initial state. */
  hasSynced(): boolean;
  /** Stops delivering to this handler. */
  remove(): void;
}

/** Where an informer stands: synced, the last list error, and whether the server still serves its kind. */
export interface InformerStatus {
  readonly synced: boolean;
  readonly started: boolean;
  readonly stopped: boolean;
  /** The error of the last failed list (cleared by a successful one). */
  readonly lastListError: unknown;
  /** The last list said the resource does not exist (404: e.g. its CRD was deleted) — C36. */
  readonly unserved: boolean;
  /** Objects a transform threw for (each arrival counts once). */
  readonly transformErrors: number;
}

/**
 * Informer knows how to share one kind's cached objects: the read side, handlers and sync state (what
 * `InformerCache.getInformer` returns: a {@link SharedIndexInformer}, or several merged across namespaces).
 */
export interface Informer<T extends KubeObject = KubeObject> {
  addEventHandler(
    handler: ResourceEventHandler<T>,
    options?: HandlerOptions,
  ): ResourceEventHandlerRegistration;
  /** The store (read-only view). Objects are frozen and shared. */
  getIndexer(): IndexerReader<T>;
  /** @throws StoreError on a duplicate index name. */
  addIndexers(indexers: Indexers<T>): void;
  hasSynced(): boolean;
  /** Resolves `true` when synced, `false` if `signal` aborts or the informer stops first. */
  waitForSync(signal?: AbortSignal): Promise<boolean>;
  status(): InformerStatus;
  isStarted(): boolean;
  isStopped(): boolean;
  /** @throws InformerError once started. */
  setWatchErrorHandler(handler: (err: unknown) => void): void;
  readonly lastSyncResourceVersion: string;
}

/** Options of {@link SharedIndexInformer}. */
export interface SharedIndexInformerOptions<T extends KubeObject = KubeObject> {
  /** Extra indexes; the `namespace` index is always there. */
  readonly indexers?: Indexers<T>;
  /**
   * Default resync period of handlers in ms: every period (±`resyncJitter`) each handler gets
   * `onUpdate(obj, obj)` for every cached object, delivered in batches of 1000 with the event loop free in
   * between. 0 disables. @defaultValue 0
   */
  readonly resyncPeriodMs?: number;
  /** Each resync period is scaled by a random factor in [1 − jitter, 1 + jitter]. @defaultValue 0.1 */
  readonly resyncJitter?: number;
  /**
   * Applied once per object version before it is stored (client-go `SetTransform`; e.g.
   * {@link stripManagedFields}). A relisted object whose resourceVersion is already cached is not transformed
   * again; tombstones carry the already transformed state and are never transformed. If it throws for an
   * object, that arrival is logged (error, with the key) and counted in `status().transformErrors`, the
   * object is not stored (the key keeps its last good state, if any) and the informer goes on (C39).
   */
  readonly transform?: (obj: T) => T;
  readonly logger?: Logger;
  /** Name in logs. */
  readonly name?: string;
  /** Passed to the reflector (page size, watch timeout, backoff, WatchList, clock). */
  readonly reflector?: Omit<ReflectorOptions, 'logger' | 'name' | 'onListResult'>;
  /** Time source of resyncs (and of the reflector, unless `reflector.clock` is given). @defaultValue the real clock */
  readonly clock?: Clock;
  readonly random?: () => number;
  /**
   * Opt-in compact store ({@link CompactIndexer}): objects are kept as the UTF-8 bytes of their
   * (transformed) JSON plus their index values, and handed out parsed and frozen through a bounded LRU of
   * `maxCachedObjects` (default 1000) recently used objects. Less memory for large caches; cold reads, relists
   * and updates of cold objects cost a `JSON.parse`. @defaultValue false (the plain {@link Indexer})
   */
  readonly compactStore?: boolean | { readonly maxCachedObjects?: number };
  /**
   * Deep-freeze every stored object (and delete notification) so a handler or reader that mutates a shared
   * object throws instead of corrupting the cache. `false` skips it (deep freezing costs about 0.6× the
   * `JSON.parse` of an event): the objects are still shared, so treat them as read-only and copy before
   * changing (client-go's contract). @defaultValue true
   */
  readonly freezeObjects?: boolean;
}

/** Thrown by misuse of an informer (e.g. running it twice). Code `'ERR_INFORMER'`. */
export class InformerError extends Error {
  readonly code = 'ERR_INFORMER' as const;
  override readonly name = 'InformerError';
}

/** client-go's smallest per-handler resync period, in ms. */
const MIN_RESYNC_MS = 1000;
/** Objects delivered per macrotask during a resync. */
const RESYNC_BATCH = 1000;

interface Listener<T extends KubeObject> {
  readonly onAdd: ((obj: T, initial: boolean) => void) | undefined;
  readonly onUpdate: ((a: T, b: T) => void) | undefined;
  readonly onDelete: ((o: T | DeletedFinalStateUnknown<T>) => void) | undefined;
  readonly resyncMs: number;
  nextResyncAt: number;
  resyncing: boolean;
  removed: boolean;
}

/**
 * One reflector feeding one indexed store, fanned out to many handlers (client-go `SharedIndexInformer`).
 * Changes are applied to the store, then delivered to handlers in order, one notification per event
 * (client-go's `RealFIFO` semantics, see {@link RealFIFO}). A relist that finds an object unchanged (same
 * resourceVersion) notifies nobody; one that finds an object gone delivers a tombstone. A handler that throws
 * (or whose returned promise rejects) is logged with the error and skipped; the others and the informer go
 * on. A handler added late gets a synthetic `onAdd(obj, true)` for every cached object first. Only the
 * reflector writes the store (through an internal writer); users get the read side and handlers.
 */
export class SharedIndexInformer<T extends KubeObject = KubeObject> implements Informer<T> {
  readonly #indexer: IndexerStore<T>;
  readonly #lw: ListerWatcher<T>;
  readonly #options: SharedIndexInformerOptions<T>;
  readonly #log: Logger;
  readonly #name: string;
  readonly #clock: Clock;
  readonly #random: () => number;
  #transform: ((obj: T) => T) | undefined;
  #listeners: Listener<T>[] = [];
  #syncWaiters = new Set<(synced: boolean) => void>();
  #watchErrorHandler: ((err: unknown) => void) | undefined;
  #resyncTimer: { cancel(): void } | undefined;
  #resyncTimerAt = Number.POSITIVE_INFINITY;
  #synced = false;
  #started = false;
  #stopped = false;
  #lastSyncRV = '';
  #lastListError: unknown;
  #transformErrors = 0;

  constructor(lw: ListerWatcher<T>, options: SharedIndexInformerOptions<T> = {}) {
    this.#lw = lw;
    this.#options = options;
    this.#log = options.logger ?? discardLogger;
    this.#name = options.name ?? 'informer';
    this.#clock = options.clock ?? realClock;
    this.#random = options.random ?? Math.random;
    this.#transform = options.transform;
    const indexers = { [NAMESPACE_INDEX]: metaNamespaceIndexFunc, ...(options.indexers ?? {}) };
    const compact = options.compactStore;
    const freeze = options.freezeObjects === false ? 'none' : 'deep';
    this.#indexer = compact
      ? new CompactIndexer<T>({
          indexers,
          freeze,
          ...(typeof compact === 'object' && compact.maxCachedObjects !== undefined
            ? { maxCachedObjects: compact.maxCachedObjects }
            : {}),
        })
      : new Indexer<T>({ indexers, freeze });
  }

  /** The store (read-only view). Objects are frozen and shared. */
  getIndexer(): IndexerReader<T> {
    return this.#indexer;
  }

  /** Adds indexes, even after start (existing objects are indexed at once). @throws StoreError on a duplicate name. */
  addIndexers(indexers: Indexers<T>): void {
    this.#indexer.addIndexers(indexers);
  }

  /** Sets the transform (client-go `SetTransform`). @throws InformerError once started. */
  setTransform(transform: ((obj: T) => T) | undefined): void {
    if (this.#started) throw new InformerError(`informer ${this.#name}: setTransform after start`);
    this.#transform = transform;
  }

  /**
   * Called with every error that ends a list or watch, instead of nothing (client-go `SetWatchErrorHandler`;
   * the error is logged either way). @throws InformerError once started.
   */
  setWatchErrorHandler(handler: (err: unknown) => void): void {
    if (this.#started) throw new InformerError(`informer ${this.#name}: setWatchErrorHandler after start`);
    this.#watchErrorHandler = handler;
  }

  /** True once the first list has been stored and delivered. */
  hasSynced(): boolean {
    return this.#synced;
  }

  /** Whether `run` has been called, and whether it has finished. */
  isStarted(): boolean {
    return this.#started;
  }
  isStopped(): boolean {
    return this.#stopped;
  }

  /** Synced, last list error, unserved kind (C36), transform failures. */
  status(): InformerStatus {
    const err = this.#lastListError;
    return {
      synced: this.#synced,
      started: this.#started,
      stopped: this.#stopped,
      lastListError: err,
      unserved: err !== undefined && (isNotFound(err) || isNoMatchError(err)),
      transformErrors: this.#transformErrors,
    };
  }

  /** The resourceVersion the store is at. */
  get lastSyncResourceVersion(): string {
    return this.#lastSyncRV;
  }

  /**
   * Registers a handler. If objects are already cached, the handler first gets `onAdd(obj, true)` for each.
   */
  addEventHandler(
    handler: ResourceEventHandler<T>,
    options: HandlerOptions = {},
  ): ResourceEventHandlerRegistration {
    const report = (what: string, err: unknown) =>
      this.#log.error(
        { informer: this.#name, handler: what, err },
        'event handler threw; notification skipped',
      );
    const safe = <A extends unknown[]>(what: string, fn: ((...a: A) => void) | undefined) =>
      fn
        ? (...a: A) => {
            try {
              // An async function is assignable to a void-returning handler: a rejection it returns must be
              // logged like a throw, not escape as an unhandled rejection (which ends a Node process).
              const out: unknown = fn.apply(handler, a);
              if (out && typeof (out as PromiseLike<unknown>).then === 'function')
                (out as PromiseLike<unknown>).then(undefined, (err: unknown) => report(what, err));
            } catch (err) {
              report(what, err);
            }
          }
        : undefined;
    const period = options.resyncPeriodMs ?? this.#options.resyncPeriodMs ?? 0;
    if (!(period >= 0)) throw new RangeError(`resyncPeriodMs must be >= 0, got ${String(period)}`);
    const resyncMs = period > 0 ? Math.max(MIN_RESYNC_MS, period) : 0;
    const l: Listener<T> = {
      onAdd: safe('add', handler.onAdd),
      onUpdate: safe('update', handler.onUpdate),
      onDelete: safe('delete', handler.onDelete),
      resyncMs,
      nextResyncAt: Number.POSITIVE_INFINITY,
      resyncing: false,
      removed: false,
    };
    if (l.onAdd) {
      const existing = this.#indexer.list();
      for (let i = 0; i < existing.length; i++) l.onAdd(existing[i]!, true);
    }
    this.#listeners = [...this.#listeners, l];
    if (this.#started && !this.#stopped) this.#scheduleResync(l);
    return {
      hasSynced: () => this.#synced,
      remove: () => {
        l.removed = true;
        this.#listeners = this.#listeners.filter((x) => x !== l);
      },
    };
  }

  /**
   * Runs the reflector until `signal` aborts. Resolves when stopped.
   * @throws InformerError when called twice.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#started) throw new InformerError(`informer ${this.#name} already started`);
    this.#started = true;
    const reflector = new Reflector<T>(this.#lw, this.#writer, {
      clock: this.#clock,
      ...(this.#options.reflector ?? {}),
      name: this.#name,
      logger: this.#log,
      ...(this.#watchErrorHandler ? { onWatchError: this.#watchErrorHandler } : {}),
      onListResult: (err) => {
        this.#lastListError = err;
      },
    });
    for (const l of this.#listeners) this.#scheduleResync(l);
    try {
      await reflector.run(signal);
    } finally {
      this.#resyncTimer?.cancel();
      this.#resyncTimer = undefined;
      this.#stopped = true;
      const waiters = [...this.#syncWaiters];
      this.#syncWaiters.clear();
      for (const w of waiters) w(this.#synced);
    }
  }

  /** Resolves `true` when synced, `false` if `signal` aborts or the informer stops first. */
  waitForSync(signal?: AbortSignal): Promise<boolean> {
    if (this.#synced) return Promise.resolve(true);
    if (signal?.aborted || this.#stopped) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (synced: boolean) => {
        this.#syncWaiters.delete(done);
        unsubscribe();
        resolve(synced);
      };
      this.#syncWaiters.add(done);
      const unsubscribe = signal ? onAbort(signal, () => done(false)) : () => {};
    });
  }

  // Resync: one timer for the earliest due handler; each handler at its own (jittered) period.

  #jittered(ms: number): number {
    const j = this.#options.resyncJitter ?? 0.1;
    return ms * (1 + j * (this.#random() * 2 - 1));
  }

  #scheduleResync(l: Listener<T>): void {
    if (l.resyncMs <= 0 || l.removed) return;
    l.nextResyncAt = this.#clock.now() + this.#jittered(l.resyncMs);
    this.#armResyncTimer();
  }

  #armResyncTimer(): void {
    let at = Number.POSITIVE_INFINITY;
    for (const l of this.#listeners)
      if (l.resyncMs > 0 && !l.resyncing && l.nextResyncAt < at) at = l.nextResyncAt;
    if (at === this.#resyncTimerAt && this.#resyncTimer) return;
    this.#resyncTimer?.cancel();
    this.#resyncTimer = undefined;
    this.#resyncTimerAt = at;
    if (at === Number.POSITIVE_INFINITY || this.#stopped) return;
    this.#resyncTimer = this.#clock.setTimer(() => {
      this.#resyncTimer = undefined;
      this.#resyncTimerAt = Number.POSITIVE_INFINITY;
      this.#onResyncTimer();
    }, at - this.#clock.now());
  }

  #onResyncTimer(): void {
    if (this.#stopped) return;
    const now = this.#clock.now();
    for (const l of this.#listeners) {
      if (l.resyncMs <= 0 || l.resyncing || l.nextResyncAt > now) continue;
      if (!this.#synced || !l.onUpdate) {
        l.nextResyncAt = now + this.#jittered(l.resyncMs);
        continue;
      }
      l.resyncing = true;
      this.#resyncListener(l, this.#indexer.listKeys(), 0);
    }
    this.#armResyncTimer();
  }

  /** Delivers a resync of `keys` (current state of each) in batches, leaving the event loop free between them. */
  #resyncListener(l: Listener<T>, keys: string[], from: number): void {
    const end = Math.min(keys.length, from + RESYNC_BATCH);
    for (let i = from; i < end && !l.removed && !this.#stopped; i++) {
      const obj = this.#indexer.get(keys[i]!);
      if (obj) l.onUpdate!(obj, obj);
    }
    if (end < keys.length && !l.removed && !this.#stopped) {
      setImmediate(() => this.#resyncListener(l, keys, end));
      return;
    }
    l.resyncing = false;
    if (!l.removed && !this.#stopped) this.#scheduleResync(l);
  }

  // Fan-out (the listener array is replaced, never mutated, so a handler may add or remove handlers).

  #emitAdd(obj: T, initial: boolean): void {
    const ls = this.#listeners;
    for (let i = 0; i < ls.length; i++) ls[i]!.onAdd?.(obj, initial);
  }
  #emitUpdate(old: T, obj: T): void {
    const ls = this.#listeners;
    for (let i = 0; i < ls.length; i++) ls[i]!.onUpdate?.(old, obj);
  }
  #emitDelete(obj: T | DeletedFinalStateUnknown<T>): void {
    const ls = this.#listeners;
    for (let i = 0; i < ls.length; i++) ls[i]!.onDelete?.(obj);
  }

  /** The transformed object, or `undefined` when the transform threw (logged and counted). */
  #transformed(raw: T): T | undefined {
    const tx = this.#transform;
    if (!tx) return raw;
    try {
      return tx(raw);
    } catch (err) {
      this.#transformErrors++;
      const m = raw?.metadata;
      this.#log.error(
        {
          informer: this.#name,
          key: m?.namespace ? `${m.namespace}/${m?.name}` : m?.name,
          resourceVersion: m?.resourceVersion,
          err,
        },
        'transform threw; this version of the object is not cached',
      );
      return undefined;
    }
  }

  #setSynced(): void {
    if (this.#synced) return;
    this.#synced = true;
    const waiters = [...this.#syncWaiters];
    this.#syncWaiters.clear();
    for (const w of waiters) w(true);
  }

  #bumpRV(obj: KubeObject): void {
    const rv = obj.metadata?.resourceVersion;
    if (rv) this.#lastSyncRV = rv;
  }

  /** The reflector's only way into the store. */
  readonly #writer: ReflectorStore<T> = {
    replace: (items, resourceVersion) => {
      const initial = !this.#synced;
      const seen = new Set<string>();
      const indexer = this.#indexer;
      for (let i = 0; i < items.length; i++) {
        const raw = items[i]!;
        const key = indexer.keyFunc(raw);
        seen.add(key);
        const cached = indexer.get(key);
        const rv = raw.metadata?.resourceVersion;
        // Same version already cached (and transformed): a sync, not a change; nobody is told.
        if (cached && rv && cached.metadata?.resourceVersion === rv) continue;
        const obj = this.#transformed(raw);
        if (!obj) continue; // logged; the key keeps its last good state
        const old = indexer.upsert(obj);
        if (!old) this.#emitAdd(obj, initial);
        else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion) this.#emitUpdate(old, obj);
      }
      for (const key of indexer.listKeys()) {
        if (seen.has(key)) continue;
        const old = indexer.deleteKey(key);
        if (old) this.#emitDelete(new DeletedFinalStateUnknown(key, old));
      }
      this.#lastSyncRV = resourceVersion;
      this.#setSynced();
    },
    add: (raw) => {
      const obj = this.#transformed(raw);
      this.#bumpRV(raw);
      if (!obj) return;
      const old = this.#indexer.upsert(obj);
      if (old) this.#emitUpdate(old, obj);
      else this.#emitAdd(obj, false);
    },
    update: (raw) => this.#writer.add(raw),
    delete: (raw) => {
      const key = this.#indexer.keyFunc(raw);
      const old = this.#indexer.deleteKey(key);
      this.#bumpRV(raw);
      const obj = this.#transformed(raw) ?? old;
      if (!obj) return; // never cached and not transformable: logged, nothing to tell
      if (this.#options.freezeObjects !== false) deepFreeze(obj);
      this.#emitDelete(obj);
    },
    bookmark: (resourceVersion) => {
      this.#lastSyncRV = resourceVersion;
    },
  };
}

import { isNotFound, type KubeObject } from '@kubeloop/client';
import { rawJsonOf } from '@kubeloop/client/apiutil';
import { isNoMatchError } from '@kubeloop/client/errors';
import { type Clock, discardLogger, type Logger, realClock } from '@kubeloop/core';
import { CompactIndexer } from './compact-store.js';
import { deepFreeze } from './freeze.js';
import type { Indexers } from './indexes.js';
import {
  type HandlerOptions,
  handlerResyncMs,
  type Informer,
  InformerError,
  type InformerStats,
  type InformerStatus,
  type ResourceEventHandler,
  type ResourceEventHandlerRegistration,
} from './informer.js';
import { onAbort } from './internal/abort.js';
import { decodeListedJson, ListedJson, newInformerStore, storeBytes } from './internal/informer-store.js';
import type { ListerWatcher } from './list-watch.js';
import { Reflector } from './reflector.js';
import { checkReflectorOptions, type ReflectorStore } from './reflector-options.js';
import type { SharedIndexInformerOptions } from './shared-index-informer-options.js';
import { SharedProcessor } from './shared-processor.js';
import {
  DeletedFinalStateUnknown,
  type IndexerReader,
  type IndexerStore,
  metaNamespaceIndexFunc,
  NAMESPACE_INDEX,
  readOnlyView,
} from './store.js';

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
  /** The store keeps JSON: listed objects are not prepared, `replace` transforms them. */
  readonly #compact: boolean;
  /** Objects' JSON is asked of the client and kept as received (`objectRetention: 'bytes'`). */
  readonly #keepJson: boolean;
  readonly #lw: ListerWatcher<T>;
  readonly #options: SharedIndexInformerOptions<T>;
  readonly #log: Logger;
  readonly #name: string;
  readonly #clock: Clock;
  readonly #processor: SharedProcessor<T>;
  #transform: ((obj: T) => T) | undefined;
  #syncWaiters = new Set<(synced: boolean) => void>();
  #watchErrorHandler: ((err: unknown) => void) | undefined;
  #synced = false;
  #started = false;
  #stopped = false;
  #lastSyncRV = '';
  #lastListError: unknown;
  #terminalError: unknown;
  #transformErrors = 0;
  #lists = 0;
  #watches = 0;
  #lastEventAt: number | undefined;
  readonly #events = { added: 0, modified: 0, deleted: 0, bookmark: 0 };
  #handlerNotifications = 0;
  #handlerMs = 0;
  #handlerMaxMs = 0;

  /**
   * Checks the options here, so a bad one fails where it is given rather than when the informer runs.
   * @throws RangeError for a negative `resyncPeriodMs` or an invalid `reflector.pageSize`.
   */
  constructor(lw: ListerWatcher<T>, options: SharedIndexInformerOptions<T> = {}) {
    checkReflectorOptions(options.reflector);
    this.#lw = lw;
    this.#options = options;
    this.#log = options.logger ?? discardLogger;
    this.#name = options.name ?? 'informer';
    this.#clock = options.clock ?? realClock;
    this.#transform = options.transform;
    const indexers = { [NAMESPACE_INDEX]: metaNamespaceIndexFunc, ...(options.indexers ?? {}) };
    this.#indexer = newInformerStore(options, indexers);
    this.#compact = this.#indexer instanceof CompactIndexer;
    this.#keepJson = options.objectRetention === 'bytes';
    this.#processor = new SharedProcessor<T>({
      store: this.#indexer,
      hasSynced: () => this.#synced,
      log: this.#log,
      name: this.#name,
      clock: this.#clock,
      random: options.random ?? Math.random,
      resyncPeriodMs: handlerResyncMs(options.resyncPeriodMs ?? 0),
      resyncJitter: options.resyncJitter ?? 0.1,
    });
  }

  /** The store (read-only view). Objects are frozen and shared. */
  getIndexer(): IndexerReader<T> {
    return readOnlyView(this.#indexer);
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
      terminalError: this.#terminalError,
      unserved: err !== undefined && (isNotFound(err) || isNoMatchError(err)),
      transformErrors: this.#transformErrors,
    };
  }

  /** Objects, bytes, events, relists, watch restarts and handler time (see {@link InformerStats}). */
  stats(): InformerStats {
    const { objects, bytes, bytesEstimated } = storeBytes(this.#indexer);
    return {
      objects,
      bytes,
      bytesEstimated,
      lastEventAgeSeconds:
        this.#lastEventAt === undefined ? undefined : (this.#clock.now() - this.#lastEventAt) / 1000,
      relists: Math.max(0, this.#lists - 1),
      watchRestarts: Math.max(0, this.#watches - 1),
      events: { ...this.#events },
      handlerNotifications: this.#handlerNotifications,
      handlerSeconds: this.#handlerMs / 1000,
      handlerMaxSeconds: this.#handlerMaxMs / 1000,
      resourceVersion: this.#lastSyncRV,
    };
  }

  /** Counts one notification and the time the handlers took for it (they run synchronously). */
  #handled(startedAt: number): void {
    const ms = this.#clock.now() - startedAt;
    this.#handlerNotifications++;
    this.#handlerMs += ms;
    if (ms > this.#handlerMaxMs) this.#handlerMaxMs = ms;
  }

  /** The resourceVersion the store is at. */
  get lastSyncResourceVersion(): string {
    return this.#lastSyncRV;
  }

  /**
   * Registers a handler. If objects are already cached, the handler first gets `onAdd(obj, true)` for each.
   * @throws RangeError for a negative `resyncPeriodMs`.
   */
  addEventHandler(
    handler: ResourceEventHandler<T>,
    options: HandlerOptions = {},
  ): ResourceEventHandlerRegistration {
    return this.#processor.add(handler, options);
  }

  /**
   * Runs the reflector until `signal` aborts. Resolves when stopped.
   * @throws InformerError when called twice.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#started) throw new InformerError(`informer ${this.#name} already started`);
    this.#started = true;
    try {
      const writer: ReflectorStore<T> = this.#keepJson
        ? { ...this.#writer, decodeListItem: decodeListedJson, keepObjectJson: true }
        : this.#writer;
      const reflector = new Reflector<T>(this.#lw, writer, {
        clock: this.#clock,
        ...(this.#options.reflector ?? {}),
        name: this.#name,
        logger: this.#log,
        ...(this.#watchErrorHandler ? { onWatchError: this.#watchErrorHandler } : {}),
        onListResult: (err) => {
          this.#lastListError = err;
        },
        onWatchStart: () => {
          this.#watches++;
        },
      });
      this.#processor.run();
      await reflector.run(signal);
    } catch (err) {
      // Kept for status(): a reader or the manager waiting for the sync reports it as the cause.
      this.#terminalError = err;
      throw err;
    } finally {
      this.#processor.stop();
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

  /**
   * The JSON a store that keeps JSON may keep for `raw` as received: none after a transform (the store then
   * re-encodes the transformed object).
   */
  #jsonOf(raw: T): string | undefined {
    return this.#keepJson && !this.#transform ? rawJsonOf(raw) : undefined;
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

  /** Listed objects whose transform threw in `prepare` (logged there); `replace` keeps their last good state. */
  readonly #untransformable = new WeakSet<object>();

  /**
   * `prepare` of the writer (a no-op with the compact store, whose `get` is a parse): a listed object is
   * transformed and deep-frozen (against its cached version) as its page arrives, unless the same version is
   * cached (replace skips it). The store is not written during a list, so replace sees the same cache.
   */
  #prepareListed(raw: T): T {
    if (this.#compact) return raw;
    const cached = this.#indexer.get(this.#indexer.keyFunc(raw));
    const rv = raw.metadata?.resourceVersion;
    if (cached && rv && cached.metadata?.resourceVersion === rv) return raw;
    const obj = this.#transformed(raw);
    if (!obj) {
      this.#untransformable.add(raw);
      return raw;
    }
    if (this.#options.freezeObjects !== false) deepFreeze(obj, cached);
    return obj;
  }

  /** The reflector's only way into the store. */
  readonly #writer: ReflectorStore<T> = {
    prepare: (raw) => this.#prepareListed(raw),
    replace: (items, resourceVersion) => {
      this.#lists++;
      const initial = !this.#synced;
      const onStored = this.#options.onStored;
      const seen = new Set<string>();
      const indexer = this.#indexer;
      const prepared = !this.#compact;
      for (let i = 0; i < items.length; i++) {
        const raw = items[i]!;
        const key = indexer.keyFunc(raw);
        seen.add(key);
        const rv = raw.metadata?.resourceVersion;
        // Same version already cached (and transformed): a sync, not a change; nobody is told.
        if (rv && indexer.resourceVersionOf(key) === rv) {
          onStored?.(key, raw, false);
          continue;
        }
        // Prepared items are transformed already (the reflector ran every listed object through prepare);
        // an item kept as JSON while listed is parsed here, once for the store's indexes and the handlers.
        const full = raw instanceof ListedJson ? raw.parse<T>() : raw;
        const obj = prepared ? (this.#untransformable.has(raw) ? undefined : raw) : this.#transformed(full);
        if (!obj) continue; // logged; the key keeps its last good state
        const old = indexer.upsert(obj, this.#jsonOf(raw));
        onStored?.(key, raw, false);
        if (!old) this.#processor.emitAdd(obj, initial);
        else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion)
          this.#processor.emitUpdate(old, obj);
      }
      for (const key of indexer.listKeys()) {
        if (seen.has(key)) continue;
        const old = indexer.deleteKey(key);
        if (old) onStored?.(key, old, true);
        if (old) this.#processor.emitDelete(new DeletedFinalStateUnknown(key, old));
      }
      this.#lastSyncRV = resourceVersion;
      this.#setSynced();
    },
    add: (raw) => {
      const obj = this.#transformed(raw);
      this.#bumpRV(raw);
      // A version the transform refused is still a version the informer has passed.
      this.#options.onStored?.(this.#indexer.keyFunc(raw), raw, false);
      const now = this.#clock.now();
      this.#lastEventAt = now;
      if (!obj) return;
      const old = this.#indexer.upsert(obj, this.#jsonOf(raw));
      if (old) {
        this.#events.modified++;
        this.#processor.emitUpdate(old, obj);
      } else {
        this.#events.added++;
        this.#processor.emitAdd(obj, false);
      }
      this.#handled(now);
    },
    update: (raw) => this.#writer.add(raw),
    delete: (raw) => {
      const key = this.#indexer.keyFunc(raw);
      const old = this.#indexer.deleteKey(key);
      this.#bumpRV(raw);
      this.#options.onStored?.(key, raw, true);
      this.#lastEventAt = this.#clock.now();
      this.#events.deleted++;
      const obj = this.#transformed(raw) ?? old;
      if (!obj) return; // never cached and not transformable: logged, nothing to tell
      if (this.#options.freezeObjects !== false) deepFreeze(obj);
      const now = this.#clock.now();
      this.#processor.emitDelete(obj);
      this.#handled(now);
    },
    bookmark: (resourceVersion) => {
      this.#lastSyncRV = resourceVersion;
      this.#lastEventAt = this.#clock.now();
      this.#events.bookmark++;
    },
  };
}

import type { KubeObject } from '@kubeloop/client';
import { EventEmitter } from 'eventemitter3';
import type { ListerWatcher } from './list-watch.js';
import { type CacheLogger, discardLogger } from './logger.js';
import { Reflector, type ReflectorOptions, type ReflectorStore } from './reflector.js';
import {
  DeletedFinalStateUnknown,
  deepFreeze,
  Indexer,
  type IndexerReader,
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
  onUpdate?(oldObj: T, newObj: T): void;
  onDelete?(obj: T | DeletedFinalStateUnknown<T>): void;
}

/** What `addEventHandler` returns. */
export interface ResourceEventHandlerRegistration {
  /** True once the informer has synced and this handler has seen the initial state. */
  hasSynced(): boolean;
  /** Stops delivering to this handler. */
  remove(): void;
}

/** Options of {@link SharedIndexInformer}. */
export interface SharedIndexInformerOptions<T extends KubeObject = KubeObject> {
  /** Extra indexes; the `namespace` index is always there. */
  readonly indexers?: Indexers<T>;
  /**
   * Resync period in ms: every period each handler gets `onUpdate(obj, obj)` for every cached object.
   * 0 disables. @defaultValue 0
   */
  readonly resyncPeriodMs?: number;
  /** Applied to every object before it is stored (e.g. drop `managedFields`). */
  readonly transform?: (obj: T) => T;
  readonly logger?: CacheLogger;
  /** Name in logs. */
  readonly name?: string;
  /** Passed to the reflector (page size, watch timeout, backoff). */
  readonly reflector?: Omit<ReflectorOptions, 'logger' | 'name'>;
}

/** Thrown by misuse of an informer (e.g. running it twice). Code `'ERR_INFORMER'`. */
export class InformerError extends Error {
  readonly code = 'ERR_INFORMER' as const;
  override readonly name = 'InformerError';
}

type Events<T extends KubeObject> = {
  add: [obj: T, isInInitialList: boolean];
  update: [oldObj: T, newObj: T];
  delete: [obj: T | DeletedFinalStateUnknown<T>];
  synced: [];
};

/**
 * One reflector feeding one indexed store, fanned out to many handlers (client-go
 * `SharedIndexInformer`). Changes are applied to the store, then delivered to handlers in order, one
 * notification per event (client-go's RealFIFO semantics). A relist that finds an object unchanged (same
 * resourceVersion) notifies nobody; one that finds an object gone delivers a tombstone. A handler that
 * throws (or whose returned promise rejects) is logged and skipped; the others and the informer go on. A handler added late gets a
 * synthetic `onAdd(obj, true)` for every cached object first.
 */
export class SharedIndexInformer<T extends KubeObject = KubeObject> implements ReflectorStore<T> {
  readonly #indexer: Indexer<T>;
  readonly #emitter = new EventEmitter<Events<T>>();
  readonly #lw: ListerWatcher<T>;
  readonly #options: SharedIndexInformerOptions<T>;
  readonly #log: CacheLogger;
  readonly #name: string;
  #reflector: Reflector<T> | undefined;
  #synced = false;
  #started = false;
  #stopped = false;
  #lastSyncRV = '';

  constructor(lw: ListerWatcher<T>, options: SharedIndexInformerOptions<T> = {}) {
    this.#lw = lw;
    this.#options = options;
    this.#log = options.logger ?? discardLogger;
    this.#name = options.name ?? 'informer';
    this.#indexer = new Indexer<T>({
      indexers: { [NAMESPACE_INDEX]: metaNamespaceIndexFunc, ...(options.indexers ?? {}) },
    });
  }

  /** The store (read-only view). Objects are frozen and shared. */
  getIndexer(): IndexerReader<T> {
    return this.#indexer;
  }

  /** Adds indexes, even after start (existing objects are indexed at once). @throws StoreError on a duplicate name. */
  addIndexers(indexers: Indexers<T>): void {
    this.#indexer.addIndexers(indexers);
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

  /** The resourceVersion the store is at. */
  get lastSyncResourceVersion(): string {
    return this.#lastSyncRV;
  }

  /**
   * Registers a handler. If objects are already cached, the handler first gets `onAdd(obj, true)` for each.
   */
  addEventHandler(handler: ResourceEventHandler<T>): ResourceEventHandlerRegistration {
    const report = (what: string, err: unknown) =>
      this.#log.error(
        { informer: this.#name, handler: what, err: (err as Error)?.message ?? String(err) },
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
    const onAdd = safe('add', handler.onAdd);
    const onUpdate = safe('update', handler.onUpdate);
    const onDelete = safe('delete', handler.onDelete);
    for (const obj of this.#indexer.list()) onAdd?.(obj, true);
    if (onAdd) this.#emitter.on('add', onAdd);
    if (onUpdate) this.#emitter.on('update', onUpdate);
    if (onDelete) this.#emitter.on('delete', onDelete);
    return {
      hasSynced: () => this.#synced,
      remove: () => {
        if (onAdd) this.#emitter.off('add', onAdd);
        if (onUpdate) this.#emitter.off('update', onUpdate);
        if (onDelete) this.#emitter.off('delete', onDelete);
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
    this.#reflector = new Reflector<T>(this.#lw, this, {
      ...(this.#options.reflector ?? {}),
      name: this.#name,
      logger: this.#log,
    });
    const resyncMs = this.#options.resyncPeriodMs ?? 0;
    const timer =
      resyncMs > 0
        ? setInterval(() => {
            if (this.#synced) for (const o of this.#indexer.list()) this.#emitter.emit('update', o, o);
          }, resyncMs)
        : undefined;
    try {
      await this.#reflector.run(signal);
    } finally {
      if (timer) clearInterval(timer);
      this.#stopped = true;
    }
  }

  /** Resolves `true` when synced, `false` if `signal` aborts first. */
  waitForSync(signal?: AbortSignal): Promise<boolean> {
    if (this.#synced) return Promise.resolve(true);
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const onSynced = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve(true);
      };
      const onAbort = () => {
        this.#emitter.off('synced', onSynced);
        resolve(false);
      };
      this.#emitter.once('synced', onSynced);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  #transform(obj: T): T {
    return this.#options.transform ? this.#options.transform(obj) : obj;
  }

  // ReflectorStore: called by the reflector.

  /** @internal */
  replace(items: T[], resourceVersion: string): void {
    const initial = !this.#synced;
    const seen = new Set<string>();
    for (const raw of items) {
      const obj = this.#transform(raw);
      const key = this.#indexer.keyFunc(obj);
      seen.add(key);
      const old = this.#indexer.upsert(obj);
      if (!old) this.#emitter.emit('add', obj, initial);
      else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion)
        this.#emitter.emit('update', old, obj);
      // Same resourceVersion: a sync, not a change; nobody is told (resync is separate).
    }
    for (const key of this.#indexer.listKeys()) {
      if (seen.has(key)) continue;
      const old = this.#indexer.deleteKey(key);
      if (old) this.#emitter.emit('delete', new DeletedFinalStateUnknown(key, old));
    }
    this.#lastSyncRV = resourceVersion;
    if (!this.#synced) {
      this.#synced = true;
      this.#emitter.emit('synced');
    }
  }

  /** @internal */
  add(raw: T): void {
    const obj = this.#transform(raw);
    const old = this.#indexer.upsert(obj);
    if (old) this.#emitter.emit('update', old, obj);
    else this.#emitter.emit('add', obj, false);
    this.#bumpRV(obj);
  }

  /** @internal */
  update(raw: T): void {
    this.add(raw);
  }

  /** @internal */
  delete(raw: T): void {
    const obj = this.#transform(raw);
    const key = this.#indexer.keyFunc(obj);
    this.#indexer.deleteKey(key);
    deepFreeze(obj);
    this.#emitter.emit('delete', obj);
    this.#bumpRV(obj);
  }

  /** @internal */
  bookmark(resourceVersion: string): void {
    this.#lastSyncRV = resourceVersion;
  }

  #bumpRV(obj: T): void {
    const rv = obj.metadata?.resourceVersion;
    if (rv) this.#lastSyncRV = rv;
  }
}

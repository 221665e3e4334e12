import type { KubeObject } from '@kubeloop/client';
import { type Clock, type Logger, realClock, sleep } from '@kubeloop/core';
import { type Indexers, StoreError } from '../indexes.js';
import {
  type HandlerOptions,
  handlerResyncMs,
  type Informer,
  InformerError,
  type InformerStats,
  type InformerStatus,
  type ResourceEventHandler,
  type ResourceEventHandlerRegistration,
} from '../informer.js';
import type { SharedIndexInformer } from '../shared-index-informer.js';
import { type IndexerReader, NAMESPACE_INDEX, readOnlyView } from '../store.js';
import { childController, onAbort } from './abort.js';
import { MergedReader } from './merged-reader.js';

interface HandlerEntry<T extends KubeObject> {
  readonly handler: ResourceEventHandler<T>;
  readonly options: HandlerOptions;
}

/** The informer of one namespace (`namespace` undefined: the one cluster-wide informer of a cluster-scoped kind). */
interface Child<T extends KubeObject> {
  readonly namespace: string | undefined;
  readonly informer: SharedIndexInformer<T>;
  readonly abort: AbortController;
  /** Its registration of each handler, so removing the namespace (or the handler) removes exactly these. */
  readonly regs: Map<HandlerEntry<T>, ResourceEventHandlerRegistration>;
  /** Settles when its run has ended (never rejects). */
  done: Promise<void>;
  removed: boolean;
}

/**
 * One informer per namespace behind one {@link Informer} (controller-runtime `multiNamespaceInformer`):
 * handlers are registered on each, reads are merged. Which namespaces is decided when it runs: a namespaced
 * kind gets one informer per namespace (never a cluster-wide request), a cluster-scoped kind one
 * cluster-wide informer. Until then it holds handlers and indexers and reads as empty.
 *
 * Namespaces can be added and removed while it runs ({@link addNamespace}, {@link removeNamespace}); upstream
 * fixes them at construction (controller-runtime #2829 asks for this; the Java Operator SDK's "dynamically
 * changing target namespaces" does it). An added namespace gets its own informer with every handler and
 * indexer registered so far, so handlers see its objects as initial-list adds; a removed one's informer stops
 * and leaves the merged reads at once, and its handlers are detached first, so no delete is invented for its
 * objects.
 */
export class MultiNamespaceInformer<T extends KubeObject> implements Informer<T> {
  #namespaces: string[];
  readonly #make: (namespace: string | undefined) => SharedIndexInformer<T>;
  readonly #isNamespaced: () => Promise<boolean>;
  readonly #log: Logger;
  readonly #clock: Clock;
  /** The running informers, by namespace (`''`: the cluster-wide one). */
  readonly #children = new Map<string, Child<T>>();
  /** Every informer whose run has not ended yet, removed ones still stopping included. */
  readonly #live = new Set<Child<T>>();
  readonly #handlers: HandlerEntry<T>[] = [];
  readonly #indexers: Indexers<T>[] = [];
  #watchErrorHandler: ((err: unknown) => void) | undefined;
  #resolved = false;
  /** Whether the kind is namespaced, once `run` has asked. */
  #namespaced: boolean | undefined;
  #signal: AbortSignal | undefined;
  /** Ends `run` with a child's error (a child that stopped with one, as `Promise.all` over them did). */
  #fail: ((err: unknown) => void) | undefined;
  #started = false;
  #stopped = false;
  #terminalError: unknown;
  #waiters = new Set<() => void>();

  constructor(
    namespaces: readonly string[],
    make: (namespace: string | undefined) => SharedIndexInformer<T>,
    isNamespaced: () => Promise<boolean>,
    log: Logger,
    clock: Clock = realClock,
  ) {
    this.#namespaces = [...new Set(namespaces)];
    this.#make = make;
    this.#isNamespaced = isNamespaced;
    this.#log = log;
    this.#clock = clock;
  }

  #informers(): SharedIndexInformer<T>[] {
    return [...this.#children.values()].map((c) => c.informer);
  }

  /** The namespaces it watches (those added since included, removed ones not). */
  namespaces(): readonly string[] {
    return [...this.#namespaces];
  }

  /**
   * The namespaces that have an informer whose run has not ended, removed ones still stopping included (`''`
   * for the cluster-wide informer of a cluster-scoped kind): what `/debug/cache` shows, so a leak is visible.
   */
  runningNamespaces(): string[] {
    return [...this.#live].map((c) => c.namespace ?? '').sort();
  }

  /** The namespaces' stats summed (the largest handler time, the youngest last event). */
  stats(): InformerStats {
    const all = this.#informers().map((c) => c.stats());
    const sum = (f: (s: InformerStats) => number) => all.reduce((n, s) => n + f(s), 0);
    const ages = all.flatMap((s) => (s.lastEventAgeSeconds === undefined ? [] : [s.lastEventAgeSeconds]));
    return {
      objects: sum((s) => s.objects),
      bytes: sum((s) => s.bytes),
      bytesEstimated: all.some((s) => s.bytesEstimated),
      lastEventAgeSeconds: ages.length > 0 ? Math.min(...ages) : undefined,
      relists: sum((s) => s.relists),
      watchRestarts: sum((s) => s.watchRestarts),
      events: {
        added: sum((s) => s.events.added),
        modified: sum((s) => s.events.modified),
        deleted: sum((s) => s.events.deleted),
        bookmark: sum((s) => s.events.bookmark),
      },
      handlerNotifications: sum((s) => s.handlerNotifications),
      handlerSeconds: sum((s) => s.handlerSeconds),
      handlerMaxSeconds: Math.max(0, ...all.map((s) => s.handlerMaxSeconds)),
      resourceVersion: this.lastSyncResourceVersion,
    };
  }

  get lastSyncResourceVersion(): string {
    // Each namespace has its own resourceVersion; a merged list has none (controller-runtime leaves it empty).
    const all = this.#informers();
    return all.length === 1 ? all[0]!.lastSyncResourceVersion : '';
  }

  addEventHandler(
    handler: ResourceEventHandler<T>,
    options: HandlerOptions = {},
  ): ResourceEventHandlerRegistration {
    // Checked now, as a single informer does: a bad period must not surface only when the children are made.
    if (options.resyncPeriodMs !== undefined) handlerResyncMs(options.resyncPeriodMs);
    const h: HandlerEntry<T> = { handler, options };
    this.#handlers.push(h);
    for (const c of this.#children.values()) c.regs.set(h, c.informer.addEventHandler(handler, options));
    return {
      hasSynced: () => this.hasSynced(),
      remove: () => {
        for (const c of this.#children.values()) {
          c.regs.get(h)?.remove();
          c.regs.delete(h);
        }
        const i = this.#handlers.indexOf(h);
        if (i >= 0) this.#handlers.splice(i, 1);
      },
    };
  }

  /**
   * Adds indexers to every namespace informer. A name already registered (the built-in `namespace` index
   * included) is refused here with {@link StoreError}, as the single-namespace indexer does (client-go
   * `AddIndexers`), also before `run()`: otherwise the replay at start would throw and stop the informer
   * before it syncs.
   */
  addIndexers(indexers: Indexers<T>): void {
    if (this.#children.size === 0) {
      for (const name of Object.keys(indexers)) {
        if (name === NAMESPACE_INDEX || this.#indexers.some((ix) => Object.hasOwn(ix, name))) {
          throw new StoreError(`index ${JSON.stringify(name)} already exists`);
        }
      }
    }
    for (const c of this.#informers()) c.addIndexers(indexers);
    this.#indexers.push(indexers);
  }

  setWatchErrorHandler(handler: (err: unknown) => void): void {
    if (this.#started) throw new InformerError('setWatchErrorHandler after start');
    this.#watchErrorHandler = handler;
  }

  hasSynced(): boolean {
    return this.#resolved && this.#informers().every((c) => c.hasSynced());
  }

  isStarted(): boolean {
    return this.#started;
  }

  isStopped(): boolean {
    return this.#stopped;
  }

  status(): InformerStatus {
    const ss = this.#informers().map((c) => c.status());
    return {
      synced: this.hasSynced(),
      started: this.#started,
      stopped: this.#stopped,
      lastListError: ss.find((s) => s.lastListError !== undefined)?.lastListError,
      terminalError: this.#terminalError ?? ss.find((s) => s.terminalError !== undefined)?.terminalError,
      unserved: ss.some((s) => s.unserved),
      transformErrors: ss.reduce((n, s) => n + s.transformErrors, 0),
    };
  }

  async waitForSync(signal?: AbortSignal): Promise<boolean> {
    if (!this.#resolved) {
      if (this.#stopped || signal?.aborted) return false;
      await new Promise<void>((resolve) => {
        const done = () => {
          this.#waiters.delete(done);
          unsubscribe();
          resolve();
        };
        this.#waiters.add(done);
        const unsubscribe = signal ? onAbort(signal, done) : () => {};
      });
      if (!this.#resolved) return false;
    }
    // Namespaces added or removed during the wait change what "synced" means: wait again for the new set.
    for (;;) {
      const kids = [...this.#children.values()];
      await Promise.all(kids.map((c) => c.informer.waitForSync(signal)));
      if (this.hasSynced()) return true;
      if (this.#stopped || signal?.aborted) return false;
      const same = kids.length === this.#children.size && kids.every((c) => c.removed === false);
      // The same informers and one of them stopped before its sync: it never will.
      if (same) return false;
    }
  }

  getIndexer(): IndexerReader<T> {
    return readOnlyView(new MergedReader(() => this.#informers()));
  }

  /**
   * Watches `namespace` too. While running (and the kind is namespaced) its informer is made and started at
   * once, with every handler, indexer and watch error handler registered so far; `hasSynced()` is false until
   * it has synced. Before the kind's scope is known it is only remembered. No-op for a namespace watched
   * already, or for a cluster-scoped kind (its one informer watches every namespace).
   */
  addNamespace(namespace: string): void {
    if (this.#namespaces.includes(namespace)) return;
    this.#namespaces.push(namespace);
    const signal = this.#signal;
    if (this.#namespaced !== true || !signal || signal.aborted || this.#stopped) return;
    this.#startChild(namespace, signal);
  }

  /**
   * Stops watching `namespace`: its informer's handlers are detached (no delete is delivered for its objects),
   * it leaves the merged reads at once, and it is stopped. Resolves when its run has ended. No-op for a
   * namespace not watched.
   */
  async removeNamespace(namespace: string): Promise<void> {
    const i = this.#namespaces.indexOf(namespace);
    if (i < 0) return;
    this.#namespaces.splice(i, 1);
    const child = this.#namespaced === true ? this.#children.get(namespace) : undefined;
    if (!child) return;
    child.removed = true;
    this.#children.delete(namespace);
    for (const r of child.regs.values()) r.remove();
    child.regs.clear();
    child.abort.abort();
    this.#wake();
    await child.done;
  }

  /** Makes the informer of `namespace`, registers what the merged informer holds on it, and runs it. */
  #startChild(namespace: string | undefined, signal: AbortSignal): void {
    const informer = this.#make(namespace);
    for (const ix of this.#indexers) informer.addIndexers(ix);
    const regs = new Map<HandlerEntry<T>, ResourceEventHandlerRegistration>();
    for (const h of this.#handlers) regs.set(h, informer.addEventHandler(h.handler, h.options));
    if (this.#watchErrorHandler) informer.setWatchErrorHandler(this.#watchErrorHandler);
    const { controller, release } = childController(signal);
    const child: Child<T> = {
      namespace,
      informer,
      abort: controller,
      regs,
      done: Promise.resolve(),
      removed: false,
    };
    this.#children.set(namespace ?? '', child);
    this.#live.add(child);
    child.done = informer.run(controller.signal).then(
      () => {},
      (err: unknown) => {
        if (child.removed)
          this.#log.warn({ namespace, err }, 'a removed namespace informer stopped with an error');
        else this.#fail?.(err);
      },
    );
    void child.done.finally(() => {
      release();
      this.#live.delete(child);
    });
  }

  async run(signal: AbortSignal): Promise<void> {
    if (this.#started) throw new InformerError('informer already started');
    this.#started = true;
    try {
      let namespaced: boolean | undefined;
      for (
        let delay = 500;
        namespaced === undefined && !signal.aborted;
        delay = Math.min(delay * 2, 30_000)
      ) {
        try {
          namespaced = await this.#lookUpScope(signal);
        } catch (err) {
          this.#log.warn({ err }, 'can not tell whether the kind is namespaced; retrying');
          await sleep(delay, signal, this.#clock).catch(() => {});
        }
      }
      if (namespaced === undefined) return;
      this.#namespaced = namespaced;
      this.#signal = signal;
      const failed = new Promise<never>((_, reject) => {
        this.#fail = reject;
      });
      failed.catch(() => {});
      for (const ns of namespaced ? [...this.#namespaces] : [undefined]) this.#startChild(ns, signal);
      this.#resolved = true;
      this.#wake();
      await Promise.race([new Promise<void>((resolve) => onAbort(signal, resolve)), failed]);
      // Stopping: wait for every informer, those of namespaces removed just before included.
      await Promise.all([...this.#live].map((c) => c.done));
    } catch (err) {
      // Kept for status(), so whoever waits for the sync can say why it never came.
      this.#terminalError = err;
      throw err;
    } finally {
      this.#stopped = true;
      this.#wake();
    }
  }

  /**
   * Whether the kind is namespaced, or `undefined` once `signal` aborts: the RESTMapper call takes no signal,
   * and a discovery request that hangs must not keep a stopped (or removed) informer running.
   */
  #lookUpScope(signal: AbortSignal): Promise<boolean | undefined> {
    return new Promise((resolve, reject) => {
      const off = onAbort(signal, () => resolve(undefined));
      this.#isNamespaced().then(
        (v) => {
          off();
          resolve(v);
        },
        (err: unknown) => {
          off();
          reject(err);
        },
      );
    });
  }

  #wake(): void {
    for (const w of [...this.#waiters]) w();
  }
}

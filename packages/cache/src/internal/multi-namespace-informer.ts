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
import { onAbort } from './abort.js';
import { MergedReader } from './merged-reader.js';

/**
 * One informer per namespace behind one {@link Informer} (controller-runtime `multiNamespaceInformer`):
 * handlers are registered on each, reads are merged. Which namespaces is decided when it runs: a namespaced
 * kind gets one informer per namespace (never a cluster-wide request), a cluster-scoped kind one
 * cluster-wide informer. Until then it holds handlers and indexers and reads as empty.
 */
export class MultiNamespaceInformer<T extends KubeObject> implements Informer<T> {
  readonly #namespaces: readonly string[];
  readonly #make: (namespace: string | undefined) => SharedIndexInformer<T>;
  readonly #isNamespaced: () => Promise<boolean>;
  readonly #log: Logger;
  readonly #clock: Clock;
  #children: SharedIndexInformer<T>[] = [];
  readonly #handlers: Array<{
    handler: ResourceEventHandler<T>;
    options: HandlerOptions;
    regs: ResourceEventHandlerRegistration[];
    removed: boolean;
  }> = [];
  readonly #indexers: Indexers<T>[] = [];
  #watchErrorHandler: ((err: unknown) => void) | undefined;
  #resolved = false;
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

  /** The namespaces' stats summed (the largest handler time, the youngest last event). */
  stats(): InformerStats {
    const all = this.#children.map((c) => c.stats());
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
    return this.#children.length === 1 ? this.#children[0]!.lastSyncResourceVersion : '';
  }

  addEventHandler(
    handler: ResourceEventHandler<T>,
    options: HandlerOptions = {},
  ): ResourceEventHandlerRegistration {
    // Checked now, as a single informer does: a bad period must not surface only when the children are made.
    if (options.resyncPeriodMs !== undefined) handlerResyncMs(options.resyncPeriodMs);
    const h = { handler, options, regs: [] as ResourceEventHandlerRegistration[], removed: false };
    this.#handlers.push(h);
    for (const c of this.#children) h.regs.push(c.addEventHandler(handler, options));
    return {
      hasSynced: () => this.hasSynced(),
      remove: () => {
        h.removed = true;
        for (const r of h.regs) r.remove();
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
    if (this.#children.length === 0) {
      for (const name of Object.keys(indexers)) {
        if (name === NAMESPACE_INDEX || this.#indexers.some((ix) => Object.hasOwn(ix, name))) {
          throw new StoreError(`index ${JSON.stringify(name)} already exists`);
        }
      }
    }
    for (const c of this.#children) c.addIndexers(indexers);
    this.#indexers.push(indexers);
  }

  setWatchErrorHandler(handler: (err: unknown) => void): void {
    if (this.#started) throw new InformerError('setWatchErrorHandler after start');
    this.#watchErrorHandler = handler;
  }

  hasSynced(): boolean {
    return this.#resolved && this.#children.every((c) => c.hasSynced());
  }

  isStarted(): boolean {
    return this.#started;
  }

  isStopped(): boolean {
    return this.#stopped;
  }

  status(): InformerStatus {
    const ss = this.#children.map((c) => c.status());
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
    const results = await Promise.all(this.#children.map((c) => c.waitForSync(signal)));
    return results.every(Boolean);
  }

  getIndexer(): IndexerReader<T> {
    return readOnlyView(new MergedReader(() => this.#children));
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
      this.#children = namespaced ? this.#namespaces.map((ns) => this.#make(ns)) : [this.#make(undefined)];
      for (const c of this.#children) {
        for (const ix of this.#indexers) c.addIndexers(ix);
        for (const h of this.#handlers) if (!h.removed) h.regs.push(c.addEventHandler(h.handler, h.options));
        if (this.#watchErrorHandler) c.setWatchErrorHandler(this.#watchErrorHandler);
      }
      this.#resolved = true;
      this.#wake();
      await Promise.all(this.#children.map((c) => c.run(signal)));
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

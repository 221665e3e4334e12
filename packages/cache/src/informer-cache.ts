import type {
  Cached,
  CachedList,
  Client,
  GetOptions,
  Kind,
  KubeObject,
  ListOptions,
  ObjectKey,
} from '@kubeloop/client';
import { fieldRequirementsOf, gvkOf, gvkString, matchesLabelRequirements } from '@kubeloop/client/apiutil';
import { NoKindMatchError, newNotFound } from '@kubeloop/client/errors';
import { discardLogger, type Logger } from '@kubeloop/core';
import {
  CacheNotStartedError,
  CacheOptionsError,
  CacheUnsupportedError,
  InformerSyncError,
  ResourceNotCachedError,
  syncTimeoutError,
} from './cache-errors.js';
import { type ByObject, checkCacheOptions, type InformerCacheOptions } from './cache-options.js';
import type { Cache, CacheInformerInfo } from './cache-types.js';
import type { Informer } from './informer.js';
import { readYourWritesOf, watchListSupportOf } from './internal/cache-parts.js';
import { informerInfo, informerKey, storeKey, trackerKey } from './internal/informer-keys.js';
import { newKindInformer } from './internal/kind-informer.js';
import { MultiNamespaceInformer } from './internal/multi-namespace-informer.js';
import { NamespaceScope } from './internal/namespace-scope.js';
import { firstSyncError } from './internal/sync-error.js';
import type { ReadYourWrites } from './read-your-writes.js';
import { byFieldIndexes, fieldIndexName, labelRequirements } from './selectors.js';
import { NAMESPACE_INDEX, storeReader } from './store.js';
import type { WatchListSupport } from './watch-list-support.js';
import { trackingClient } from './write-tracking-client.js';

interface Entry {
  /** The kind's GVK, as errors and logs name it. */
  readonly gvk: string;
  readonly informer: Informer<KubeObject> & { run(signal: AbortSignal): Promise<void> };
  readonly abort: AbortController;
  run: Promise<void> | undefined;
}

/**
 * controller-runtime's informer cache (`pkg/cache/informer_cache.go`, `internal/informers.go`,
 * `multi_namespace_cache.go`): one shared informer per kind (and per representation: a
 * `metadataOnly(kind)` informer is separate from the typed one), created on first use (a read of a new kind
 * starts its informer and waits for it to sync once the cache runs), and a read-only reader (`CacheReader` of @kubeloop/client) served from the
 * informers' stores. Objects read from the cache are frozen and shared — no deep copy per read; copy before
 * changing one. Reads are eventually consistent: a get right after your own write may return the older state.
 *
 * Each informer runs under its own AbortController; the cache puts one listener on the `start` signal, so
 * any number of informers never piles listeners on a shared signal.
 */
export class InformerCache implements Cache {
  readonly #options: InformerCacheOptions;
  readonly #entries = new Map<string, Entry>();
  readonly #byObject: ReadonlyMap<string, ByObject>;
  readonly #namespaces: NamespaceScope;
  readonly #log: Logger;
  /** What the server said about streaming lists, shared by this cache's reflectors (one server per cache). */
  readonly #watchListSupport: WatchListSupport;
  #signal: AbortSignal | undefined;
  /** Read-your-own-writes, when on. */
  readonly #ryow: ReadYourWrites | undefined;

  /**
   * @throws CacheOptionsError for a kind twice in `byObject`, a `syncPeriodMs` (cache-wide or per kind) that
   *   is not a finite number of ms >= 0, a label or field selector (default or per kind) that does not parse
   *   (the error names the option; the parse error is its cause), or an invalid `reflector.pageSize` — checked
   *   here, not when an informer runs: a selector the server refuses would fail every list with 400 and the
   *   informer would never sync, so reads would wait for ever (controller-runtime takes parsed
   *   `labels.Selector`/`fields.Selector` values, so bad syntax fails where it is written).
   */
  constructor(options: InformerCacheOptions) {
    this.#options = options;
    this.#log = options.logger ?? discardLogger;
    this.#byObject = checkCacheOptions(options, informerKey);
    this.#namespaces = new NamespaceScope(options, this.#byObject, () => options.client.restMapper);
    this.#watchListSupport = watchListSupportOf(options);
    this.#ryow = readYourWritesOf(options);
  }

  /** The read-your-own-writes tracker (its counters feed metrics), or `undefined` when the option is off. */
  readYourWrites(): ReadYourWrites | undefined {
    return this.#ryow;
  }

  /**
   * `live` with its writes recorded for read-your-own-writes (see `InformerCacheOptions.readYourWrites`): what
   * the manager hands reconcilers as the writing side of its client. `live` itself when the option is off.
   */
  trackWrites(live: Client): Client {
    const ryow = this.#ryow;
    if (!ryow) return live;
    return trackingClient(live, (kind) => {
      const key = trackerKey(kind);
      const entry = this.#entries.get(informerKey(kind));
      return ryow.beginWrite(key, (k) =>
        entry ? storeReader(entry.informer.getIndexer()).get(k) : undefined,
      );
    });
  }

  /**
   * Resolves once the informer of `kind` has stored this process's last write of `key` (read-your-own-writes;
   * at once when the option is off or nothing is pending; never rejects, bounded by its `timeoutMs`). The
   * controller waits here before reconciling a key.
   */
  waitForOwnWrites(kind: Kind, key: ObjectKey, signal?: AbortSignal): Promise<void> {
    if (!this.#ryow) return Promise.resolve();
    return this.#ryow.waitForKey(trackerKey(kind), storeKey(key), signal);
  }

  getInformer<T extends KubeObject>(kind: Kind<T>): Informer<T> {
    const key = informerKey(kind);
    let entry = this.#entries.get(key);
    if (!entry) {
      entry = {
        gvk: gvkString(gvkOf(kind)),
        informer: this.#newInformer(kind, key),
        abort: new AbortController(),
        run: undefined,
      };
      this.#entries.set(key, entry);
      if (this.isStarted()) this.#run(entry);
    }
    return entry.informer as unknown as Informer<T>;
  }

  /** The default namespaces the cache watches now (`defaultNamespaces` as last set); empty: all. */
  defaultNamespaces(): readonly string[] {
    return this.#namespaces.defaults();
  }

  /**
   * Changes the namespaces a namespace-restricted cache watches, while it runs (controller-runtime fixes
   * `DefaultNamespaces` at construction, #2829; this follows its `multiNamespaceCache` per namespace, the way
   * the Java Operator SDK changes target namespaces). Every kind that follows the defaults (no
   * `byObject.namespaces`; cluster-scoped kinds are unaffected) gets, for an added namespace, a new informer
   * carrying the handlers and indexers registered so far — so a controller's handlers see its objects as adds
   * from an initial list and reconcile them — and, for a removed namespace, its informer's handlers detached,
   * then the informer stopped and its objects gone from `get`/`list` at once (a read naming that namespace
   * then throws `UnknownNamespaceError`). No delete event is delivered for a removed namespace's objects: they
   * left the cache's scope, not the server; reconciles already queued for them still run and read NotFound
   * from the cache. Kinds whose informer is made later watch the new set.
   *
   * Resolves once the removed namespaces' informers have stopped and then, if the cache runs, every informer
   * has synced (`waitForCacheSync`): `true`; `false` when `signal` aborts or the cache stops first. Before
   * `start` it resolves `true` at once.
   * @param namespaces the full new set (duplicates collapse).
   * @throws CacheOptionsError (as a rejection) when the cache watches every namespace,
   *   `namespaces` is empty, or an entry is not a non-empty string (named `namespaces[i]`); InformerSyncError
   *   as `waitForCacheSync`.
   */
  async setDefaultNamespaces(namespaces: readonly string[], signal?: AbortSignal): Promise<boolean> {
    const { added, removed } = this.#namespaces.change(namespaces);
    const stops: Promise<void>[] = [];
    for (const [key, e] of this.#entries) {
      if (!(e.informer instanceof MultiNamespaceInformer) || !this.#namespaces.followsDefaults(key)) continue;
      for (const ns of added) e.informer.addNamespace(ns);
      for (const ns of removed) stops.push(e.informer.removeNamespace(ns));
    }
    await Promise.all(stops);
    return this.isStarted() ? this.waitForCacheSync(signal) : true;
  }

  /** {@link setDefaultNamespaces} with `namespace` added to the current set. */
  addNamespace(namespace: string, signal?: AbortSignal): Promise<boolean> {
    return this.setDefaultNamespaces([...this.#namespaces.defaults(), namespace], signal);
  }

  /** {@link setDefaultNamespaces} without `namespace` (a namespace not watched changes nothing). */
  removeNamespace(namespace: string, signal?: AbortSignal): Promise<boolean> {
    return this.setDefaultNamespaces(
      this.#namespaces.defaults().filter((ns) => ns !== namespace),
      signal,
    );
  }

  #newInformer<T extends KubeObject>(kind: Kind<T>, key: string): Entry['informer'] {
    return newKindInformer<T>(kind, key, {
      options: this.#options,
      byObject: this.#byObject.get(key) as ByObject<T> | undefined,
      namespaces: this.#namespaces.of(key),
      readYourWrites: this.#ryow,
      watchListSupport: this.#watchListSupport,
      logger: this.#log,
    }) as unknown as Entry['informer'];
  }

  #run(entry: Entry): void {
    entry.run = entry.informer.run(entry.abort.signal).catch((err: unknown) => {
      // The informer keeps the error in status().terminalError: readers and waitForCacheSync report it.
      this.#log.error({ kind: entry.gvk, err }, 'informer stopped with an error');
    });
  }

  /** Whether `start` has been called (and not yet ended). */
  isStarted(): boolean {
    return !!this.#signal && !this.#signal.aborted;
  }

  /**
   * Runs every informer (and those created later) until `signal` aborts; resolves once all stopped.
   * @throws CacheOptionsError when already started.
   */
  async start(signal: AbortSignal): Promise<void> {
    if (this.isStarted()) throw new CacheOptionsError('the cache is already started');
    this.#signal = signal;
    for (const entry of this.#entries.values()) if (!entry.run) this.#run(entry);
    await new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      signal.addEventListener('abort', () => resolve(), { once: true });
    });
    // One listener on the caller's signal stops every informer (also those created while stopping).
    const runs: Promise<void>[] = [];
    for (const entry of this.#entries.values()) {
      entry.abort.abort();
      if (entry.run) runs.push(entry.run);
    }
    await Promise.all(runs);
  }

  /**
   * Stops the kind's informer (its watch and any list end at once) and frees its store; handlers registered
   * on it get nothing more. Resolves when it has stopped. No-op for a kind without an informer.
   */
  async removeInformer(kind: Kind): Promise<void> {
    const key = informerKey(kind);
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    entry.abort.abort();
    await entry.run;
  }

  /**
   * Resolves `true` once every informer created so far has synced; `false` if `signal` aborts or the cache
   * stops first (controller-runtime `WaitForCacheSync`). An informer that stopped with an error before its
   * sync never syncs: that rejects at once, with {@link InformerSyncError} naming the kind, the error as cause.
   * @throws InformerSyncError
   */
  async waitForCacheSync(signal?: AbortSignal): Promise<boolean> {
    const results = await Promise.all(
      [...this.#entries.values()].map(async (e) => {
        if (await e.informer.waitForSync(signal)) return true;
        const terminal = e.informer.status().terminalError;
        if (terminal !== undefined) throw new InformerSyncError(e.gvk, true, { cause: terminal });
        return false;
      }),
    );
    return results.every(Boolean);
  }

  /**
   * Every informer of the cache with its state and figures (objects, bytes, events, relists, watch restarts,
   * handler time): what the manager's informer metrics and `/debug/cache` report.
   */
  informers(): CacheInformerInfo[] {
    const out: CacheInformerInfo[] = [];
    for (const [key, e] of this.#entries) {
      const inf = e.informer;
      const running = inf instanceof MultiNamespaceInformer ? inf.runningNamespaces().filter(Boolean) : [];
      out.push(informerInfo(key, inf, this.#namespaces.of(key), running));
    }
    return out;
  }

  /** The GVKs (`Kind.version[.group]`) of the informers that have not synced yet. */
  unsyncedInformers(): string[] {
    const out: string[] = [];
    for (const e of this.#entries.values()) if (!e.informer.hasSynced()) out.push(e.gvk);
    return out;
  }

  /**
   * Why the cache has not synced, or `undefined` when it has: an {@link InformerSyncError} for the first
   * unsynced informer that has an error to tell (the one it stopped with, else its last list error), else
   * for the first unsynced one. For a caller whose wait for the sync ran out (a manager's sync timeout).
   */
  syncError(): InformerSyncError | undefined {
    return firstSyncError(this.#entries.values());
  }

  async #syncedInformer<T extends KubeObject>(kind: Kind<T>, signal?: AbortSignal): Promise<Informer<T>> {
    const key = informerKey(kind);
    const gvk = gvkString(gvkOf(kind));
    if (!this.#entries.has(key)) {
      if (this.#options.readerFailOnMissingInformer) throw new ResourceNotCachedError(gvk);
      // A kind the server does not serve would start an informer that never syncs, and the read would hang:
      // resolve the mapping first, as controller-runtime's informer map does (throws NoKindMatchError, which
      // names the kind and version).
      await this.#options.client.restMapper.restMapping(gvkOf(kind));
    }
    const inf = this.getInformer(kind);
    if (inf.hasSynced()) {
      // The kind stopped being served under a running informer (CRD deleted, C36): fail fast.
      if (inf.status().unserved) throw new NoKindMatchError(`kind ${gvk} (no longer served)`);
      return inf;
    }
    if (!this.isStarted()) throw new CacheNotStartedError(gvk);
    if (await inf.waitForSync(signal)) return inf;
    const st = inf.status();
    // Stopped with an error before its sync: say which error (never a bare "not started").
    if (st.terminalError !== undefined) throw new InformerSyncError(gvk, true, { cause: st.terminalError });
    if (!this.isStarted()) throw new CacheNotStartedError(gvk);
    if (inf.isStopped()) throw new InformerSyncError(gvk, true, { reason: 'it was removed from the cache' });
    // The caller gave up first: a Timeout, as controller-runtime's informer cache answers (NewTimeoutError),
    // with the last list error as its cause when there is one.
    throw syncTimeoutError(gvk, st.lastListError);
  }

  /**
   * Indexes a field of a kind so `list` can select on it (controller-runtime `FieldIndexer.IndexField`):
   * `extract` returns the values an object has for `field`; `list(kind, { fieldSelector: { [field]: v } })`
   * then answers from the index. Allowed before or after start (existing objects are indexed at once).
   * @throws StoreError when the field is already indexed.
   */
  indexField<T extends KubeObject>(
    kind: Kind<T>,
    field: string,
    extract: (obj: T) => readonly string[],
  ): void {
    this.getInformer(kind).addIndexers({ [fieldIndexName(field)]: extract });
  }

  /**
   * The cached object named by `key`. For a cluster-scoped kind the key's namespace is ignored
   * (controller-runtime's cache reader does the same).
   * @throws StatusError NotFound (message as the API server's), StatusError Timeout (`options.signal` aborted
   *   before the kind's informer synced; its `cause` is the last list error), CacheNotStartedError,
   *   InformerSyncError (the informer stopped before it synced; `cause` says why), UnknownNamespaceError (a
   *   namespaced kind, outside the namespaces a restricted cache watches), NoKindMatchError (a kind the server
   *   does not serve, or no longer serves), ResourceNotCachedError (`readerFailOnMissingInformer`).
   */
  async get<T extends KubeObject>(kind: Kind<T>, key: ObjectKey, options?: GetOptions): Promise<Cached<T>> {
    await this.#namespaces.check(kind, informerKey(kind), key.namespace ?? '', key.name);
    const inf = await this.#syncedInformer(kind, options?.signal);
    if (this.#ryow) await this.#ryow.waitForKey(trackerKey(kind), storeKey(key), options?.signal);
    const store = storeReader(inf.getIndexer());
    let obj = store.get(key.namespace ? `${key.namespace}/${key.name}` : key.name);
    if (!obj && key.namespace) {
      const mapping = await this.#options.client.restMapper.restMapping(gvkOf(kind)).catch(() => undefined);
      if (mapping && mapping.scope === 'Cluster') obj = store.get(key.name);
    }
    if (!obj) {
      const mapping = await this.#options.client.restMapper.restMapping(gvkOf(kind)).catch(() => undefined);
      throw newNotFound(
        mapping ? mapping.resource : { group: gvkOf(kind).group, resource: `${kind.kind.toLowerCase()}s` },
        key.name,
      );
    }
    // the store's objects are deep-frozen and were stored by the API server
    return obj as unknown as Cached<T>;
  }

  /**
   * Cached objects, by namespace, label selector and field selector. A field selector is answered from
   * indexes only: `metadata.name` and `metadata.namespace` (always), or a field indexed with `indexField`;
   * `=`/`==` select from the index, `!=` is answered exactly by scanning the (namespace's) objects against the
   * index; several requirements are intersected. `limit` cuts the result; `continue`
   * is not supported (controller-runtime's rules).
   * @throws FieldNotIndexedError (a field without an index, naming it and how to index it),
   *   CacheUnsupportedError (`continue`), SelectorParseError, CacheNotStartedError, InformerSyncError,
   *   UnknownNamespaceError (`namespace` outside the namespaces a restricted cache watches), StatusError
   *   Timeout (`options.signal` aborted before the kind's informer synced), NoKindMatchError,
   *   ResourceNotCachedError.
   */
  async list<T extends KubeObject>(kind: Kind<T>, options: ListOptions = {}): Promise<CachedList<T>> {
    if (options.continue) throw new CacheUnsupportedError('continue is not supported by the cache reader');
    // Parse the selectors before waiting for a sync: a bad selector fails at once.
    const labelReqs = labelRequirements(options.labelSelector);
    const fieldReqs = fieldRequirementsOf(options.fieldSelector);
    await this.#namespaces.check(kind, informerKey(kind), options.namespace || undefined);
    const inf = await this.#syncedInformer(kind, options.signal);
    if (this.#ryow) await this.#ryow.waitForKind(trackerKey(kind), options.namespace, options.signal);
    const store = storeReader(inf.getIndexer());
    let items = fieldReqs.length
      ? byFieldIndexes(store, fieldReqs, options.namespace, gvkString(gvkOf(kind)))
      : options.namespace
        ? store.byIndex(NAMESPACE_INDEX, options.namespace)
        : store.list();
    if (labelReqs.length)
      items = items.filter((o) => matchesLabelRequirements(labelReqs, o.metadata?.labels));
    if (options.limit && options.limit > 0 && items.length > options.limit)
      items = items.slice(0, options.limit);
    return {
      apiVersion: kind.apiVersion,
      kind: `${kind.kind}List`,
      metadata: { resourceVersion: inf.lastSyncResourceVersion },
      items: items as unknown as readonly Cached<T>[],
    };
  }
}

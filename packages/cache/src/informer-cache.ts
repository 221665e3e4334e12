import {
  type Client,
  type Clock,
  discardLogger,
  type FieldRequirement,
  type FieldSelectorInput,
  fieldRequirementsOf,
  type GetOptions,
  gvkOf,
  gvkString,
  type Kind,
  type KubeObject,
  type LabelRequirement,
  type LabelSelectorInput,
  type LabelSelectorObject,
  type ListOptions,
  type Logger,
  matchesLabelRequirements,
  NoKindMatchError,
  newNotFound,
  type ObjectKey,
  type ObjectList,
  parseLabelSelector,
  type Reader,
  SelectorParseError,
  StatusError,
} from '@kubeloop/client';
import { MultiNamespaceInformer } from './internal/multi-namespace-informer.js';
import { listWatchFor } from './list-watch.js';
import {
  type Informer,
  SharedIndexInformer,
  type SharedIndexInformerOptions,
} from './shared-index-informer.js';
import { type IndexerReader, NAMESPACE_INDEX } from './store.js';
import type { TransformFunc } from './transforms.js';

/** Per-kind overrides of the cache-wide defaults (controller-runtime `cache.ByObject`). */
export interface ByObject<T extends KubeObject = KubeObject> {
  readonly kind: Kind<T>;
  /** Watch only these namespaces (one informer each, merged reads). Overrides `defaultNamespaces`. */
  readonly namespaces?: readonly string[];
  /** Overrides `defaultLabelSelector`. */
  readonly labelSelector?: LabelSelectorInput;
  /** Overrides `defaultFieldSelector`. */
  readonly fieldSelector?: FieldSelectorInput;
  /** Overrides `defaultTransform`; `null` turns the default off for this kind. */
  readonly transform?: TransformFunc<T> | null;
  /** Overrides `syncPeriodMs`. */
  readonly syncPeriodMs?: number;
  /** Overrides `useWatchList`. */
  readonly useWatchList?: boolean;
}

/** Options of {@link InformerCache} (controller-runtime `cache.Options`). */
export interface InformerCacheOptions {
  /** Lists and watches go through this client (the live API client). */
  readonly client: Client;
  /**
   * Watch only these namespaces: one informer per namespace for namespaced kinds, reads merged across them,
   * never a cluster-wide request (controller-runtime `DefaultNamespaces`). Cluster-scoped kinds get one
   * cluster-wide informer. Absent or empty: all namespaces.
   */
  readonly defaultNamespaces?: readonly string[];
  /** @deprecated use `defaultNamespaces: [namespace]`. */
  readonly namespace?: string;
  /** Only objects matching this label selector are cached (a restricted cache: others read as NotFound). */
  readonly defaultLabelSelector?: LabelSelectorInput;
  /** Only objects matching this field selector are cached. */
  readonly defaultFieldSelector?: FieldSelectorInput;
  /** Applied to every object before it is cached (e.g. `stripManagedFields`); `byObject` may override. */
  readonly defaultTransform?: TransformFunc;
  /** @deprecated use `defaultTransform`. */
  readonly transform?: TransformFunc;
  /** Per-kind overrides. @throws CacheOptionsError (from the constructor) when a kind appears twice. */
  readonly byObject?: readonly ByObject[];
  /**
   * Resync period of every informer, in ms, jittered ±10 % per period; 0 disables
   * (controller-runtime `SyncPeriod`). @defaultValue 36 000 000 (10 h)
   */
  readonly syncPeriodMs?: number;
  /** @deprecated use `syncPeriodMs`. */
  readonly resyncPeriodMs?: number;
  /**
   * A read of a kind that has no informer yet throws {@link ResourceNotCachedError} instead of starting one
   * (controller-runtime `ReaderFailOnMissingInformer`). @defaultValue false
   */
  readonly readerFailOnMissingInformer?: boolean;
  /** Initial sync by streaming list (WatchList, see `ReflectorOptions.useWatchList`). @defaultValue false */
  readonly useWatchList?: boolean;
  readonly logger?: Logger;
  /** Reflector knobs for every informer (page size, watch timeout, backoff, WatchList timeout). */
  readonly reflector?: SharedIndexInformerOptions['reflector'];
  /** Time source of resyncs and reflector backoffs. @defaultValue the real clock */
  readonly clock?: Clock;
}

/** controller-runtime's default `SyncPeriod`: 10 hours, in ms. */
export const DEFAULT_SYNC_PERIOD_MS = 10 * 60 * 60 * 1000;

/** Reading from a cache that has not been started. Code `'ERR_CACHE_NOT_STARTED'`. */
export class CacheNotStartedError extends Error {
  readonly code = 'ERR_CACHE_NOT_STARTED' as const;
  override readonly name = 'CacheNotStartedError';
  constructor() {
    super('the cache is not started, can not read objects');
  }
}

/** An option the cache cannot serve (e.g. `continue`, or an unsupported field selector). Code `'ERR_CACHE_UNSUPPORTED'`. */
export class CacheUnsupportedError extends Error {
  /** `'ERR_FIELD_NOT_INDEXED'` for the {@link FieldNotIndexedError} subclass. */
  readonly code: 'ERR_CACHE_UNSUPPORTED' | 'ERR_FIELD_NOT_INDEXED' = 'ERR_CACHE_UNSUPPORTED';
  override readonly name: string = 'CacheUnsupportedError';
}

/**
 * A cached `list` with a field selector on a field that has no index (C34). Code `'ERR_FIELD_NOT_INDEXED'`;
 * also a {@link CacheUnsupportedError}.
 */
export class FieldNotIndexedError extends CacheUnsupportedError {
  override readonly code = 'ERR_FIELD_NOT_INDEXED' as const;
  override readonly name = 'FieldNotIndexedError';
  constructor(
    readonly kind: string,
    readonly field: string,
  ) {
    super(
      `field selector on ${JSON.stringify(field)} of ${kind} can not be answered by the cache: the field has no index; ` +
        `call cache.indexField(${kind}, ${JSON.stringify(field)}, (obj) => [value]) before the first read (mgr.getFieldIndexer().indexField in a manager)`,
    );
  }
}

/** A read of a kind with no informer while `readerFailOnMissingInformer` is set. Code `'ERR_RESOURCE_NOT_CACHED'`. */
export class ResourceNotCachedError extends Error {
  readonly code = 'ERR_RESOURCE_NOT_CACHED' as const;
  override readonly name = 'ResourceNotCachedError';
  constructor(readonly kind: string) {
    super(
      `${kind} is not cached: no informer for it, and readerFailOnMissingInformer is set (call getInformer first)`,
    );
  }
}

/** Invalid cache options. Code `'ERR_CACHE_OPTIONS'`. */
export class CacheOptionsError extends Error {
  readonly code = 'ERR_CACHE_OPTIONS' as const;
  override readonly name = 'CacheOptionsError';
}

/**
 * Informers knows how to hand out the shared informer for a kind, and to run them all.
 */
export interface Informers {
  getInformer<T extends KubeObject>(kind: Kind<T>): Informer<T>;
  /** Stops the kind's informer and forgets it (a later read or `getInformer` starts a new one). */
  removeInformer(kind: Kind): Promise<void>;
  start(signal: AbortSignal): Promise<void>;
  waitForCacheSync(signal?: AbortSignal): Promise<boolean>;
  /** Indexes a field so `list` can select on it. */
  indexField<T extends KubeObject>(
    kind: Kind<T>,
    field: string,
    extract: (obj: T) => readonly string[],
  ): void;
}

/** Cache knows how to serve reads from informers (controller-runtime `cache.Cache` = Reader + Informers). */
export interface Cache extends Reader, Informers {}

interface Entry {
  readonly informer: Informer<KubeObject> & { run(signal: AbortSignal): Promise<void> };
  readonly abort: AbortController;
  run: Promise<void> | undefined;
}

/**
 * controller-runtime's informer cache (`pkg/cache/informer_cache.go`, `internal/informers.go`,
 * `multi_namespace_cache.go`): one shared informer per kind (and per representation: a
 * `metadataOnly(kind)` informer is separate from the typed one), created on first use (a read of a new kind
 * starts its informer and waits for it to sync once the cache runs), and a {@link Reader} served from the
 * informers' stores. Objects read from the cache are frozen and shared — no deep copy per read; copy before
 * changing one. Reads are eventually consistent: a get right after your own write may return the older state.
 *
 * Each informer runs under its own AbortController; the cache puts one listener on the `start` signal, so
 * any number of informers never piles listeners on a shared signal.
 */
export class InformerCache implements Cache {
  readonly #options: InformerCacheOptions;
  readonly #entries = new Map<string, Entry>();
  readonly #byObject = new Map<string, ByObject>();
  readonly #log: Logger;
  #signal: AbortSignal | undefined;

  /** @throws CacheOptionsError for a kind twice in `byObject`, or a negative `syncPeriodMs`. */
  constructor(options: InformerCacheOptions) {
    this.#options = options;
    this.#log = options.logger ?? discardLogger;
    for (const b of options.byObject ?? []) {
      const key = informerKey(b.kind);
      if (this.#byObject.has(key)) throw new CacheOptionsError(`byObject lists ${key} twice`);
      this.#byObject.set(key, b);
    }
    const sp = options.syncPeriodMs ?? options.resyncPeriodMs;
    if (sp !== undefined && !(sp >= 0)) throw new CacheOptionsError(`syncPeriodMs must be >= 0, got ${sp}`);
  }

  getInformer<T extends KubeObject>(kind: Kind<T>): Informer<T> {
    const key = informerKey(kind);
    let entry = this.#entries.get(key);
    if (!entry) {
      entry = { informer: this.#newInformer(kind, key), abort: new AbortController(), run: undefined };
      this.#entries.set(key, entry);
      if (this.isStarted()) this.#run(entry);
    }
    return entry.informer as unknown as Informer<T>;
  }

  #newInformer<T extends KubeObject>(kind: Kind<T>, key: string): Entry['informer'] {
    const o = this.#options;
    const by = this.#byObject.get(key) as ByObject<T> | undefined;
    const namespaces = by?.namespaces ?? o.defaultNamespaces ?? (o.namespace ? [o.namespace] : []);
    const labelSelector = by?.labelSelector ?? o.defaultLabelSelector;
    const fieldSelector = by?.fieldSelector ?? o.defaultFieldSelector;
    const transform =
      by?.transform === null ? undefined : (by?.transform ?? o.defaultTransform ?? o.transform);
    const syncPeriodMs = by?.syncPeriodMs ?? o.syncPeriodMs ?? o.resyncPeriodMs ?? DEFAULT_SYNC_PERIOD_MS;
    const useWatchList = by?.useWatchList ?? o.useWatchList ?? false;
    const make = (namespace: string | undefined): SharedIndexInformer<T> =>
      new SharedIndexInformer<T>(
        listWatchFor(o.client, kind, {
          ...(namespace ? { namespace } : {}),
          ...(labelSelector !== undefined ? { labelSelector } : {}),
          ...(fieldSelector !== undefined ? { fieldSelector } : {}),
        }),
        {
          name: namespace ? `${key}@${namespace}` : key,
          logger: this.#log,
          resyncPeriodMs: syncPeriodMs,
          ...(transform ? { transform: transform as TransformFunc<T> } : {}),
          ...(o.clock ? { clock: o.clock } : {}),
          reflector: { ...(o.reflector ?? {}), ...(useWatchList ? { useWatchList } : {}) },
        },
      );
    if (namespaces.length === 0) return make(undefined) as unknown as Entry['informer'];
    return new MultiNamespaceInformer<T>(
      namespaces,
      make,
      () => o.client.restMapper.isNamespaced(gvkOf(kind)),
      this.#log,
      o.clock,
    ) as unknown as Entry['informer'];
  }

  #run(entry: Entry): void {
    entry.run = entry.informer.run(entry.abort.signal).catch((err: unknown) => {
      this.#log.error({ err }, 'informer stopped with an error');
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

  /** Resolves `true` once every informer created so far has synced; `false` if `signal` aborts or one stops first. */
  async waitForCacheSync(signal?: AbortSignal): Promise<boolean> {
    const results = await Promise.all([...this.#entries.values()].map((e) => e.informer.waitForSync(signal)));
    return results.every(Boolean);
  }

  async #syncedInformer<T extends KubeObject>(kind: Kind<T>, signal?: AbortSignal): Promise<Informer<T>> {
    const key = informerKey(kind);
    if (!this.#entries.has(key)) {
      if (this.#options.readerFailOnMissingInformer) throw new ResourceNotCachedError(gvkString(gvkOf(kind)));
      // A kind the server does not serve would start an informer that never syncs, and the read would hang:
      // resolve the mapping first, as controller-runtime's informer map does (throws NoKindMatchError, which
      // names the kind and version).
      await this.#options.client.restMapper.restMapping(gvkOf(kind));
    }
    const inf = this.getInformer(kind);
    if (inf.hasSynced()) {
      // The kind stopped being served under a running informer (CRD deleted, C36): fail fast.
      if (inf.status().unserved)
        throw new NoKindMatchError(`kind ${gvkString(gvkOf(kind))} (no longer served)`);
      return inf;
    }
    if (!this.isStarted()) throw new CacheNotStartedError();
    if (!(await inf.waitForSync(signal))) {
      if (!this.isStarted() || inf.isStopped()) throw new CacheNotStartedError();
      // The caller gave up first: a Timeout, as controller-runtime's informer cache answers (NewTimeoutError).
      throw new StatusError({
        apiVersion: 'v1',
        kind: 'Status',
        status: 'Failure',
        code: 504,
        reason: 'Timeout',
        message: `Timeout: failed waiting for ${gvkString(gvkOf(kind))} informer to sync`,
        details: { retryAfterSeconds: 0 },
      });
    }
    return inf;
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
   *   before the kind's informer synced), CacheNotStartedError, NoKindMatchError (a kind the server does not
   *   serve, or no longer serves), ResourceNotCachedError (`readerFailOnMissingInformer`).
   */
  async get<T extends KubeObject>(kind: Kind<T>, key: ObjectKey, options?: GetOptions): Promise<T> {
    const inf = await this.#syncedInformer(kind, options?.signal);
    const store = inf.getIndexer();
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
    return obj;
  }

  /**
   * Cached objects, by namespace, label selector and field selector. A field selector is answered from
   * indexes only: `metadata.name` and `metadata.namespace` (always), or a field indexed with `indexField`;
   * `=`/`==` select from the index, `!=` is answered exactly by scanning the (namespace's) objects against the
   * index; several requirements are intersected. `limit` cuts the result; `continue`
   * is not supported (controller-runtime's rules).
   * @throws FieldNotIndexedError (a field without an index, naming it and how to index it),
   *   CacheUnsupportedError (`continue`), SelectorParseError, CacheNotStartedError,
   *   StatusError Timeout (`options.signal` aborted before the kind's informer synced), NoKindMatchError,
   *   ResourceNotCachedError.
   */
  async list<T extends KubeObject>(kind: Kind<T>, options: ListOptions = {}): Promise<ObjectList<T>> {
    if (options.continue) throw new CacheUnsupportedError('continue is not supported by the cache reader');
    // Parse the selectors before waiting for a sync: a bad selector fails at once.
    const labelReqs = labelRequirements(options.labelSelector);
    const fieldReqs = fieldRequirementsOf(options.fieldSelector);
    const inf = await this.#syncedInformer(kind, options.signal);
    const store = inf.getIndexer();
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
      items,
    };
  }
}

/** The index name under which `indexField` stores a field (controller-runtime `field:<name>`). */
export function fieldIndexName(field: string): string {
  return `field:${field}`;
}

function labelRequirements(sel: LabelSelectorInput | undefined): readonly LabelRequirement[] {
  if (sel === undefined) return [];
  if (typeof sel === 'string') return sel.trim() ? parseLabelSelector(sel) : [];
  const reqs: LabelRequirement[] = [];
  const o = sel as LabelSelectorObject;
  const isObject =
    (o.matchLabels !== undefined && typeof o.matchLabels === 'object') ||
    (o.matchExpressions !== undefined && Array.isArray(o.matchExpressions));
  const labels = isObject ? (o.matchLabels ?? {}) : (sel as Readonly<Record<string, string>>);
  for (const key of Object.keys(labels)) reqs.push({ key, operator: 'in', values: [labels[key]!] });
  if (isObject) {
    for (const e of o.matchExpressions ?? []) {
      const values = e.values ?? [];
      switch (e.operator) {
        case 'In':
        case 'NotIn':
          if (values.length === 0)
            throw new SelectorParseError(`${e.operator} for key ${e.key} needs values`);
          reqs.push({ key: e.key, operator: e.operator === 'In' ? 'in' : 'notin', values });
          break;
        case 'Exists':
          reqs.push({ key: e.key, operator: 'exists', values: [] });
          break;
        case 'DoesNotExist':
          reqs.push({ key: e.key, operator: '!', values: [] });
          break;
        default:
          throw new SelectorParseError(`unknown label selector operator ${JSON.stringify(e.operator)}`);
      }
    }
  }
  return reqs;
}

/**
 * Objects matching every requirement, from indexes (controller-runtime `requiresExactMatch` + `byIndexes`):
 * `metadata.namespace` narrows the namespace, `metadata.name` is a key lookup, any other field needs its
 * `field:<name>` index; the first indexed requirement selects, the others filter by their index keys.
 */
function byFieldIndexes<T extends KubeObject>(
  store: IndexerReader<T>,
  reqs: readonly FieldRequirement[],
  namespace: string | undefined,
  kind: string,
): T[] {
  const names = new Set(store.indexerNames());
  let ns = namespace;
  const filters: Array<(o: T) => boolean> = [];
  let selected: T[] | undefined;
  for (const r of reqs) {
    const negated = r.operator === '!=';
    if (r.field === 'metadata.namespace') {
      if (negated) {
        filters.push((o) => (o.metadata?.namespace ?? '') !== r.value);
        continue;
      }
      if (ns !== undefined && ns !== '' && ns !== r.value) return [];
      ns = r.value;
      continue;
    }
    if (r.field === 'metadata.name') {
      filters.push(negated ? (o) => o.metadata?.name !== r.value : (o) => o.metadata?.name === r.value);
      continue;
    }
    const idx = fieldIndexName(r.field);
    if (!names.has(idx)) throw new FieldNotIndexedError(kind, r.field);
    if (!selected && !negated) {
      selected = store.byIndex(idx, r.value);
      continue;
    }
    // A second requirement, or `!=` (answered exactly by scanning, as the README says): filter by index keys.
    const keys = new Set(store.indexKeys(idx, r.value));
    filters.push(negated ? (o) => !keys.has(keyOf(o)) : (o) => keys.has(keyOf(o)));
  }
  let items = selected ?? (ns ? store.byIndex(NAMESPACE_INDEX, ns) : store.list());
  if (selected && ns) items = items.filter((o) => (o.metadata?.namespace ?? '') === ns);
  for (const f of filters) items = items.filter(f);
  return items;
}

function keyOf(o: KubeObject): string {
  const ns = o.metadata?.namespace;
  return ns ? `${ns}/${o.metadata?.name}` : (o.metadata?.name ?? '');
}

/** The informer map's key of a kind: `apiVersion/Kind`, plus `#metadata` for a metadata-only descriptor. */
function informerKey(kind: Kind): string {
  return `${kind.apiVersion}/${kind.kind}${(kind as { metadataOnly?: boolean }).metadataOnly ? '#metadata' : ''}`;
}

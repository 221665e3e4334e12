import {
  type Client,
  formatLabelSelector,
  type GetOptions,
  gvkOf,
  gvkString,
  type Kind,
  type KubeObject,
  type ListOptions,
  matchesLabelRequirements,
  newNotFound,
  type ObjectKey,
  type ObjectList,
  parseLabelSelector,
  type Reader,
  StatusError,
} from '@kubeloop/client';
import { listWatchFor } from './list-watch.js';
import { type CacheLogger, discardLogger } from './logger.js';
import { SharedIndexInformer, type SharedIndexInformerOptions } from './shared-index-informer.js';
import { type IndexerReader, metaNamespaceKeyFunc, NAMESPACE_INDEX } from './store.js';

/** Options of {@link InformerCache}. */
export interface InformerCacheOptions {
  /** Lists and watches go through this client (the live API client). */
  readonly client: Client;
  /** Watch only this namespace (controller-runtime `DefaultNamespaces` with one entry). Absent: all. */
  readonly namespace?: string;
  /** Resync period of every informer, in ms; 0 disables. @defaultValue 0 */
  readonly resyncPeriodMs?: number;
  /** Transform applied to every object before it is cached. */
  readonly transform?: (obj: KubeObject) => KubeObject;
  readonly logger?: CacheLogger;
  /** Reflector knobs for every informer (page size, watch timeout, backoff). */
  readonly reflector?: SharedIndexInformerOptions['reflector'];
}

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
  readonly code = 'ERR_CACHE_UNSUPPORTED' as const;
  override readonly name = 'CacheUnsupportedError';
}

/**
 * Informers knows how to hand out the shared informer for a kind, and to run them all.
 */
export interface Informers {
  getInformer<T extends KubeObject>(kind: Kind<T>): SharedIndexInformer<T>;
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

/**
 * controller-runtime's informer cache (`pkg/cache/informer_cache.go`, `internal/informers.go`): one
 * shared informer per kind, created on first use (a read of a new kind starts its informer and waits for
 * it to sync once the cache runs), and a {@link Reader} served from the informers' stores. Objects read
 * from the cache are frozen and shared — no deep copy per read; copy before changing one. Reads are
 * eventually consistent: a get right after your own write may return the older state.
 */
export class InformerCache implements Cache {
  readonly #options: InformerCacheOptions;
  readonly #informers = new Map<string, SharedIndexInformer<KubeObject>>();
  readonly #runs: Promise<void>[] = [];
  readonly #log: CacheLogger;
  #signal: AbortSignal | undefined;

  constructor(options: InformerCacheOptions) {
    this.#options = options;
    this.#log = options.logger ?? discardLogger;
  }

  getInformer<T extends KubeObject>(kind: Kind<T>): SharedIndexInformer<T> {
    const key = informerKey(kind);
    let inf = this.#informers.get(key) as SharedIndexInformer<T> | undefined;
    if (!inf) {
      inf = new SharedIndexInformer<T>(
        listWatchFor(
          this.#options.client,
          kind,
          this.#options.namespace ? { namespace: this.#options.namespace } : {},
        ),
        {
          name: key,
          logger: this.#log,
          ...(this.#options.resyncPeriodMs ? { resyncPeriodMs: this.#options.resyncPeriodMs } : {}),
          ...(this.#options.transform
            ? { transform: this.#options.transform as unknown as (o: T) => T }
            : {}),
          ...(this.#options.reflector ? { reflector: this.#options.reflector } : {}),
        },
      );
      this.#informers.set(key, inf as unknown as SharedIndexInformer<KubeObject>);
      if (this.#signal && !this.#signal.aborted) this.#runs.push(inf.run(this.#signal));
    }
    return inf;
  }

  /** Whether `start` has been called (and not yet ended). */
  isStarted(): boolean {
    return !!this.#signal && !this.#signal.aborted;
  }

  /**
   * Runs every informer (and those created later) until `signal` aborts; resolves once all stopped.
   */
  async start(signal: AbortSignal): Promise<void> {
    this.#signal = signal;
    for (const inf of this.#informers.values()) if (!inf.isStarted()) this.#runs.push(inf.run(signal));
    await new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      signal.addEventListener('abort', () => resolve(), { once: true });
    });
    // Informers created while stopping are in #runs as well.
    await Promise.all(this.#runs);
  }

  /** Resolves `true` once every informer created so far has synced; `false` if `signal` aborts first. */
  async waitForCacheSync(signal?: AbortSignal): Promise<boolean> {
    const results = await Promise.all([...this.#informers.values()].map((i) => i.waitForSync(signal)));
    return results.every(Boolean);
  }

  async #syncedInformer<T extends KubeObject>(
    kind: Kind<T>,
    signal?: AbortSignal,
  ): Promise<SharedIndexInformer<T>> {
    if (!this.#informers.has(informerKey(kind))) {
      // A kind the server does not serve would start an informer that never syncs, and the read would hang:
      // resolve the mapping first, as controller-runtime's informer map does (throws NoKindMatchError, which
      // names the kind and version).
      await this.#options.client.restMapper.restMapping(gvkOf(kind));
    }
    const inf = this.getInformer(kind);
    if (inf.hasSynced()) return inf;
    if (!this.isStarted()) throw new CacheNotStartedError();
    const stop = this.#signal!;
    const both = signal ? AbortSignal.any([signal, stop]) : stop;
    if (!(await inf.waitForSync(both))) {
      if (stop.aborted) throw new CacheNotStartedError();
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
   * then answers from the index. Allowed before or after start.
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
   * The cached object named by `key`.
   * @throws StatusError NotFound (message as the API server's), StatusError Timeout (`options.signal` aborted
   *   before the kind's informer synced), CacheNotStartedError, NoKindMatchError (a kind the server does not serve).
   */
  async get<T extends KubeObject>(kind: Kind<T>, key: ObjectKey, options?: GetOptions): Promise<T> {
    const inf = await this.#syncedInformer(kind, options?.signal);
    const obj = inf.getIndexer().get(key.namespace ? `${key.namespace}/${key.name}` : key.name);
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
   * Cached objects, by namespace, label selector and field selector (`metadata.name`,
   * `metadata.namespace`, or any field indexed with `indexField`; `=`, `==` and `!=`). `limit` cuts the result; `continue` is not supported (controller-runtime's rule).
   * @throws CacheUnsupportedError, SelectorParseError, CacheNotStartedError, StatusError Timeout (`options.signal`
   *   aborted before the kind's informer synced), NoKindMatchError (a kind the server does not serve).
   */
  async list<T extends KubeObject>(kind: Kind<T>, options: ListOptions = {}): Promise<ObjectList<T>> {
    if (options.continue) throw new CacheUnsupportedError('continue is not supported by the cache reader');
    const inf = await this.#syncedInformer(kind, options.signal);
    const store = inf.getIndexer();
    let items = options.namespace ? store.byIndex(NAMESPACE_INDEX, options.namespace) : store.list();
    const ls = formatLabelSelector(options.labelSelector);
    if (ls) {
      const reqs = parseLabelSelector(ls);
      items = items.filter((o) => matchesLabelRequirements(reqs, o.metadata?.labels));
    }
    const fieldFilter = fieldMatcher(options.fieldSelector, store);
    if (fieldFilter) items = items.filter(fieldFilter);
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

function fieldMatcher(
  sel: ListOptions['fieldSelector'],
  store: IndexerReader<KubeObject>,
): ((o: KubeObject) => boolean) | undefined {
  if (sel === undefined) return undefined;
  const pairs: Array<[string, string, boolean]> = [];
  if (typeof sel === 'string') {
    if (!sel.trim()) return undefined;
    for (const part of sel.split(',')) {
      const m = /^\s*([^!=\s]+)\s*(==|=|!=)\s*(.*?)\s*$/.exec(part);
      if (!m) throw new CacheUnsupportedError(`field selector ${JSON.stringify(sel)} does not parse`);
      pairs.push([m[1]!, m[3]!.replace(/\\(.)/g, '$1'), m[2] === '!=']);
    }
  } else {
    for (const [k, v] of Object.entries(sel)) pairs.push([k, v, false]);
  }
  const names = new Set(store.indexerNames());
  const tests = pairs.map(([k, v, neg]): ((o: KubeObject) => boolean) => {
    if (k === 'metadata.name' || k === 'metadata.namespace') {
      return (o) => {
        const actual = k === 'metadata.name' ? (o.metadata?.name ?? '') : (o.metadata?.namespace ?? '');
        return neg ? actual !== v : actual === v;
      };
    }
    if (!names.has(fieldIndexName(k))) {
      throw new CacheUnsupportedError(
        `field selector on ${k} needs an index: call indexField(kind, ${JSON.stringify(k)}, extract) first`,
      );
    }
    const keys = new Set(store.indexKeys(fieldIndexName(k), v));
    return (o) => keys.has(metaNamespaceKeyFunc(o)) !== neg;
  });
  return (o) => tests.every((t) => t(o));
}

/** The informer map's key of a kind: `apiVersion/Kind`. */
function informerKey(kind: Kind): string {
  return `${kind.apiVersion}/${kind.kind}`;
}

import type { Client, FieldSelectorInput, Kind, KubeObject, LabelSelectorInput } from '@kubeloop/client';
import {
  formatFieldSelector,
  formatLabelSelector,
  parseFieldSelector,
  parseLabelSelector,
} from '@kubeloop/client/apiutil';
import type { Clock, Logger } from '@kubeloop/core';
import { CacheOptionsError } from './cache-errors.js';
import type { ReadYourWritesOptions } from './read-your-writes.js';
import { checkReflectorOptions } from './reflector-options.js';
import type { SharedIndexInformerOptions } from './shared-index-informer-options.js';
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
  /**
   * Initial sync by streaming list (WatchList, as client-go 1.35+ does by default; see
   * `ReflectorOptions.useWatchList` for the rules). A streaming list that fails in any way costs one attempt:
   * the informer lists + watches in the same attempt (a connection reset under the stream is retried first, up to
   * `reflector.watchListResetLimit` times in a row). The cache's informers share one `WatchListSupport`: after a
   * refusal (the server does not serve streaming lists: kube-apiserver 1.32 on etcd 3.4 answers 500 "…
   * RequestWatchProgress is disabled"; a server with the WatchList gate off, 422) every informer of this cache
   * lists and watches until `watchListReprobeIntervalMs` has passed; a failure that a plain list would meet too (a
   * 404 of a deleted CRD, 403, 5xx) is not remembered. Until the server has answered one, one informer at a time
   * tries, so a server that refuses costs one request and one warning. `false` turns it off for every informer;
   * `byObject` decides per kind. @defaultValue true
   */
  readonly useWatchList?: boolean;
  /**
   * How long a WatchList refusal (an answer saying the server does not serve streaming lists, not a failed
   * request) is remembered, in ms (`WatchListSupportOptions.reprobeIntervalMs`). @defaultValue 600000
   */
  readonly watchListReprobeIntervalMs?: number;
  readonly logger?: Logger;
  /** Reflector knobs for every informer (page size, watch timeout, backoff, WatchList timeout). */
  readonly reflector?: SharedIndexInformerOptions['reflector'];
  /** Time source of resyncs and reflector backoffs. @defaultValue the real clock */
  readonly clock?: Clock;
  /**
   * Read-your-own-writes: writes made through {@link InformerCache.trackWrites}'s client record the
   * resourceVersion the server returned, and a cached `get` of that object (a `list` of its kind and
   * namespace) waits until the informer has stored that version, at most `timeoutMs` (then it reads what the
   * cache holds). `true` uses the defaults. See {@link ReadYourWrites}. @defaultValue false
   */
  readonly readYourWrites?: boolean | ReadYourWritesOptions;
  /**
   * What each informer's store keeps of an object: `'objects'` (parsed and frozen) or `'bytes'` (its JSON as
   * received, parsed on read through a hot set); see `SharedIndexInformerOptions.objectRetention`.
   * @defaultValue 'objects'
   */
  readonly objectRetention?: 'objects' | 'bytes';
}

/** controller-runtime's default `SyncPeriod`: 10 hours, in ms. */
export const DEFAULT_SYNC_PERIOD_MS = 10 * 60 * 60 * 1000;

/**
 * Checks cache options where they are written, not when an informer runs (controller-runtime takes parsed
 * selectors, so bad syntax fails at construction): `byObject` lists each kind once (keyed by `keyOf`), every
 * label and field selector (default and per kind) parses as it will be sent, every `syncPeriodMs` is a
 * finite number of ms >= 0, `reflector.pageSize` is a positive integer. Returns `byObject` by kind key.
 * @throws CacheOptionsError naming the option (a parse error as its cause).
 */
export function checkCacheOptions(
  options: InformerCacheOptions,
  keyOf: (kind: Kind) => string,
): Map<string, ByObject> {
  checkSelectors(
    'defaultLabelSelector',
    options.defaultLabelSelector,
    'defaultFieldSelector',
    options.defaultFieldSelector,
  );
  const byObject = new Map<string, ByObject>();
  for (const b of options.byObject ?? []) {
    const key = keyOf(b.kind);
    if (byObject.has(key)) throw new CacheOptionsError(`byObject lists ${key} twice`);
    checkSelectors(
      `byObject ${key}: labelSelector`,
      b.labelSelector,
      `byObject ${key}: fieldSelector`,
      b.fieldSelector,
    );
    checkSyncPeriod(`byObject ${key}: syncPeriodMs`, b.syncPeriodMs);
    byObject.set(key, b);
  }
  checkSyncPeriod('syncPeriodMs', options.syncPeriodMs ?? options.resyncPeriodMs);
  const retention = options.objectRetention;
  if (retention !== undefined && retention !== 'objects' && retention !== 'bytes')
    throw new CacheOptionsError(
      `objectRetention: must be 'objects' or 'bytes', got ${JSON.stringify(retention)}`,
    );
  try {
    checkReflectorOptions(options.reflector);
  } catch (err) {
    throw new CacheOptionsError(`reflector: ${(err as Error).message}`, { cause: err });
  }
  return byObject;
}

/**
 * Parses the label and field selectors of a cache option as they will be sent (the same parsers the cache's
 * reads and `labelSelectorPredicate` use, apimachinery `labels.Parse` / `fields.ParseSelector`).
 * @throws CacheOptionsError naming the option, with the SelectorParseError as cause.
 */
function checkSelectors(
  labelWhat: string,
  label: LabelSelectorInput | undefined,
  fieldWhat: string,
  field: FieldSelectorInput | undefined,
): void {
  try {
    if (label !== undefined) parseLabelSelector(formatLabelSelector(label));
  } catch (err) {
    throw new CacheOptionsError(`${labelWhat}: ${(err as Error).message}`, { cause: err });
  }
  try {
    if (field !== undefined) parseFieldSelector(formatFieldSelector(field));
  } catch (err) {
    throw new CacheOptionsError(`${fieldWhat}: ${(err as Error).message}`, { cause: err });
  }
}

/** @throws CacheOptionsError when a sync period is given and is not a finite number of ms >= 0. */
function checkSyncPeriod(what: string, v: unknown): void {
  if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v) || v < 0))
    throw new CacheOptionsError(`${what} must be a finite number of ms >= 0, got ${typeof v} ${String(v)}`);
}

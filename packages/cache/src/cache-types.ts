import type { CacheReader, Kind, KubeObject } from '@kubeloop/client';
import type { Informer, InformerStats } from './informer.js';

/**
 * Informers knows how to hand out the shared informer for a kind, and to run them all.
 */
export interface Informers {
  getInformer<T extends KubeObject>(kind: Kind<T>): Informer<T>;
  /** Stops the kind's informer and forgets it (a later read or `getInformer` starts a new one). */
  removeInformer(kind: Kind): Promise<void>;
  start(signal: AbortSignal): Promise<void>;
  /**
   * Resolves `true` once every informer has synced, `false` if `signal` aborts first.
   * @throws InformerSyncError when an informer stopped with an error before it synced (it never will).
   */
  waitForCacheSync(signal?: AbortSignal): Promise<boolean>;
  /** Indexes a field so `list` can select on it. */
  indexField<T extends KubeObject>(
    kind: Kind<T>,
    field: string,
    extract: (obj: T) => readonly string[],
  ): void;
}

/** One informer of an `InformerCache`, as `informers()` lists it (what `/debug/cache` serves). */
export interface CacheInformerInfo {
  /** The cache's key of the informer: `apiVersion/Kind`, `#metadata` appended for a metadata-only one. */
  readonly name: string;
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly metadataOnly: boolean;
  /** The namespaces it watches; empty: all. */
  readonly namespaces: readonly string[];
  /**
   * The namespaces that have an informer of this kind running now (a namespace-restricted cache runs one per
   * namespace; one removed with `setDefaultNamespaces` counts until its informer has stopped, so a leak shows
   * here); empty for a single informer (every namespace, or a cluster-scoped kind).
   */
  readonly namespaceInformers: readonly string[];
  readonly synced: boolean;
  readonly started: boolean;
  readonly stopped: boolean;
  /** The message of the last list error, while it stands. */
  readonly lastListError: string | undefined;
  readonly stats: InformerStats;
}

/**
 * The namespaces a namespace-restricted cache watches, changeable while it runs (not in controller-runtime,
 * whose `DefaultNamespaces` is fixed at construction: its #2829). See `InformerCache.setDefaultNamespaces`.
 */
export interface DynamicNamespaces {
  /** The default namespaces watched now; empty: all. */
  defaultNamespaces(): readonly string[];
  /**
   * Makes `namespaces` the default namespaces: informers start for added ones and stop for removed ones.
   * Resolves `true` once removed ones stopped and every informer has synced (`false` if `signal` aborts first).
   * @throws CacheOptionsError when the cache watches every namespace, or `namespaces` is empty or invalid.
   */
  setDefaultNamespaces(namespaces: readonly string[], signal?: AbortSignal): Promise<boolean>;
  /** `setDefaultNamespaces` with one namespace added. */
  addNamespace(namespace: string, signal?: AbortSignal): Promise<boolean>;
  /** `setDefaultNamespaces` with one namespace removed (a namespace not watched changes nothing). */
  removeNamespace(namespace: string, signal?: AbortSignal): Promise<boolean>;
}

/**
 * Cache knows how to serve reads from informers (controller-runtime `cache.Cache` = Reader + Informers), and
 * how to change the namespaces it watches while it runs ({@link DynamicNamespaces}). Its reads are `Cached`
 * (read-only: the objects are frozen and shared); `deepCopy` one to change it.
 */
export interface Cache extends CacheReader, Informers, DynamicNamespaces {}

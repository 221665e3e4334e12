import type { Cached, KubeObject } from '@kubeloop/client';
import type { Indexers } from './indexes.js';
import type { DeletedFinalStateUnknown, IndexerReader } from './store.js';

/**
 * ResourceEventHandler knows how to react to changes of cached objects (client-go
 * `ResourceEventHandler`). Objects are frozen and shared, so they are typed `Cached<T>` (deep read-only,
 * server-set metadata present): changing one is a compile error, and a writer takes `deepCopy(obj)`. A
 * delete found by a relist arrives as a {@link DeletedFinalStateUnknown} tombstone, so `onDelete` must
 * handle both shapes (`objectOfDelete` unwraps either).
 */
export interface ResourceEventHandler<T extends KubeObject = KubeObject> {
  /** `isInInitialList`: the object came from the first list (or a late handler's synthetic adds). */
  onAdd?(obj: Cached<T>, isInInitialList: boolean): void;
  /** `oldObj === newObj` (same resourceVersion) for a resync. */
  onUpdate?(oldObj: Cached<T>, newObj: Cached<T>): void;
  onDelete?(obj: Cached<T> | DeletedFinalStateUnknown<Cached<T>>): void;
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
  /** The error of the last failed list, or of a store that refused a listing (cleared by a successful one). */
  readonly lastListError: unknown;
  /** The error `run` ended with (`undefined` while running, or when its signal stopped it). */
  readonly terminalError: unknown;
  /** The last list said the resource does not exist (404: e.g. its CRD was deleted) — C36. */
  readonly unserved: boolean;
  /** Objects a transform threw for (each arrival counts once). */
  readonly transformErrors: number;
}

/**
 * What an informer holds and has done, for metrics and `/debug/cache` (the figures client-go's informer
 * metrics report, and those controller-runtime users ask for). Counters run from the informer's start.
 */
export interface InformerStats {
  /** Objects in the store. */
  readonly objects: number;
  /**
   * Bytes the stored objects take: the JSON bytes a compact store keeps (exact), else an estimate (the JSON
   * length of up to 64 sampled objects, scaled to all; `bytesEstimated`).
   */
  readonly bytes: number;
  readonly bytesEstimated: boolean;
  /** Seconds since the last event (add, update, delete or bookmark) reached the store; `undefined`: none yet. */
  readonly lastEventAgeSeconds: number | undefined;
  /** Lists after the first (after a 410, a failed watch, a restart). */
  readonly relists: number;
  /** Watch requests after the first. */
  readonly watchRestarts: number;
  /** Watch events applied, by type (`ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK`). */
  readonly events: {
    readonly added: number;
    readonly modified: number;
    readonly deleted: number;
    readonly bookmark: number;
  };
  /** Notifications delivered to the handlers, and the seconds the handlers took for them (sum and max). */
  readonly handlerNotifications: number;
  readonly handlerSeconds: number;
  readonly handlerMaxSeconds: number;
  /** The resourceVersion the store is at (`''` for a merge of several namespaces). */
  readonly resourceVersion: string;
}

/**
 * Informer knows how to share one kind's cached objects: the read side, handlers and sync state (what
 * `InformerCache.getInformer` returns: a `SharedIndexInformer`, or several merged across namespaces).
 */
export interface Informer<T extends KubeObject = KubeObject> {
  /** @throws RangeError for a negative `resyncPeriodMs`. */
  addEventHandler(
    handler: ResourceEventHandler<T>,
    options?: HandlerOptions,
  ): ResourceEventHandlerRegistration;
  /** The store (read-only view): objects are frozen and shared, typed `Cached<T>`. */
  getIndexer(): IndexerReader<T>;
  /** @throws StoreError on a duplicate index name (the built-in `namespace` index included). */
  addIndexers(indexers: Indexers<T>): void;
  hasSynced(): boolean;
  /** Resolves `true` when synced, `false` if `signal` aborts or the informer stops first. */
  waitForSync(signal?: AbortSignal): Promise<boolean>;
  status(): InformerStatus;
  /** Objects, bytes, events, relists and handler time (see {@link InformerStats}). */
  stats(): InformerStats;
  isStarted(): boolean;
  isStopped(): boolean;
  /** @throws InformerError once started. */
  setWatchErrorHandler(handler: (err: unknown) => void): void;
  readonly lastSyncResourceVersion: string;
}

/** Thrown by misuse of an informer (e.g. running it twice). Code `'ERR_INFORMER'`. */
export class InformerError extends Error {
  readonly code = 'ERR_INFORMER' as const;
  override readonly name = 'InformerError';
}

/** client-go's smallest per-handler resync period, in ms. */
const MIN_RESYNC_MS = 1000;

/**
 * A handler's effective resync period in ms: 0 (off), or at least 1000 (client-go raises smaller ones).
 * @throws RangeError for a negative or non-numeric period.
 */
export function handlerResyncMs(period: number): number {
  if (!(period >= 0)) throw new RangeError(`resyncPeriodMs must be >= 0, got ${String(period)}`);
  return period > 0 ? Math.max(MIN_RESYNC_MS, period) : 0;
}

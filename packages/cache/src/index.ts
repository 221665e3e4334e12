/**
 * @packageDocumentation
 * `@kubeloop/cache` keeps local, indexed copies of Kubernetes objects in step with the API server: the
 * `Reflector` (list, then watch from the list's resourceVersion; re-watch, relist on 410, backoff), the
 * `Indexer` store with secondary indexes, the in-order `RealFIFO`, the `SharedIndexInformer` (many handlers,
 * `hasSynced`, tombstones for deletes found by a relist) and the per-kind `InformerCache` whose `Reader`
 * serves reads from memory. Mirrors client-go `tools/cache` and controller-runtime `pkg/cache`.
 */
export {
  CacheNotStartedError,
  CacheOptionsError,
  CacheUnsupportedError,
  FieldNotIndexedError,
  InformerSyncError,
  ResourceNotCachedError,
  UnknownNamespaceError,
} from './cache-errors.js';
export { type ByObject, DEFAULT_SYNC_PERIOD_MS, type InformerCacheOptions } from './cache-options.js';
export type { Cache, CacheInformerInfo, DynamicNamespaces, Informers } from './cache-types.js';
export { CompactIndexer, type CompactIndexerOptions } from './compact-store.js';
export {
  type Delta,
  type DeltaType,
  FIFOClosedError,
  type KeyListerGetter,
  RealFIFO,
  type RealFIFOOptions,
} from './fifo.js';
export { type Indexers, type IndexFunc, StoreError } from './indexes.js';
export {
  type HandlerOptions,
  type Informer,
  InformerError,
  type InformerStats,
  type InformerStatus,
  type ResourceEventHandler,
  type ResourceEventHandlerRegistration,
} from './informer.js';
export { InformerCache } from './informer-cache.js';
export {
  type ListCallOptions,
  type ListerWatcher,
  type ListWatchScope,
  listWatchFor,
  type WatchCallOptions,
} from './list-watch.js';
export {
  DEFAULT_READ_YOUR_WRITES_TIMEOUT_MS,
  ReadYourWrites,
  type ReadYourWritesOptions,
  type ReadYourWritesStats,
} from './read-your-writes.js';
export { Reflector } from './reflector.js';
export type { ReflectorOptions, ReflectorStore } from './reflector-options.js';
export { SharedIndexInformer } from './shared-index-informer.js';
export type { SharedIndexInformerOptions } from './shared-index-informer-options.js';
export {
  DeletedFinalStateUnknown,
  Indexer,
  type IndexerReader,
  type IndexerStore,
  isDeletedFinalStateUnknown,
  type KeyFunc,
  metaNamespaceIndexFunc,
  metaNamespaceKeyFunc,
  NAMESPACE_INDEX,
  objectOfDelete,
  splitMetaNamespaceKey,
} from './store.js';
export {
  composeTransforms,
  LAST_APPLIED_CONFIG_ANNOTATION,
  stripLastAppliedConfiguration,
  stripManagedFields,
  type TransformFunc,
} from './transforms.js';
export { VeryShortWatchError } from './watch-errors.js';
export { INITIAL_EVENTS_END_ANNOTATION } from './watch-list.js';
export {
  DEFAULT_WATCH_LIST_REPROBE_MS,
  WatchListSupport,
  type WatchListSupportOptions,
} from './watch-list-support.js';

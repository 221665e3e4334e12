/**
 * @packageDocumentation
 * `@kubeloop/cache` keeps local, indexed copies of Kubernetes objects in step with the API server: the
 * `Reflector` (list, then watch from the list's resourceVersion; re-watch, relist on 410, backoff), the
 * `Indexer` store with secondary indexes, the `SharedIndexInformer` (many handlers, `hasSynced`,
 * tombstones for deletes found by a relist) and the per-kind `InformerCache` whose `Reader` serves reads
 * from memory. Mirrors client-go `tools/cache` and controller-runtime `pkg/cache`.
 */

export { CompactIndexer, type CompactIndexerOptions } from './compact-store.js';
export {
  type Cache,
  CacheNotStartedError,
  CacheUnsupportedError,
  fieldIndexName,
  InformerCache,
  type InformerCacheOptions,
  type Informers,
} from './informer-cache.js';
export type { BackoffOptions } from './internal/backoff.js';
export {
  type ListCallOptions,
  type ListerWatcher,
  type ListWatchScope,
  listWatchFor,
  type WatchCallOptions,
} from './list-watch.js';
export { type CacheLogger, discardLogger } from './logger.js';
export { Reflector, type ReflectorOptions, type ReflectorStore, VeryShortWatchError } from './reflector.js';
export {
  InformerError,
  type ResourceEventHandler,
  type ResourceEventHandlerRegistration,
  SharedIndexInformer,
  type SharedIndexInformerOptions,
} from './shared-index-informer.js';
export {
  DeletedFinalStateUnknown,
  deepFreeze,
  Indexer,
  type IndexerReader,
  type IndexerStore,
  type Indexers,
  type IndexFunc,
  type KeyFunc,
  metaNamespaceIndexFunc,
  metaNamespaceKeyFunc,
  NAMESPACE_INDEX,
  objectOfDelete,
  StoreError,
  splitMetaNamespaceKey,
} from './store.js';

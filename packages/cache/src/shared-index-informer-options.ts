import type { KubeObject } from '@kubeloop/client';
import type { Clock, Logger } from '@kubeloop/core';
import type { Indexers } from './indexes.js';
import type { ReflectorOptions } from './reflector-options.js';

/** Options of {@link SharedIndexInformer}. */
export interface SharedIndexInformerOptions<T extends KubeObject = KubeObject> {
  /** Extra indexes; the `namespace` index is always there. */
  readonly indexers?: Indexers<T>;
  /**
   * Default resync period of handlers in ms: every period (±`resyncJitter`) each handler gets
   * `onUpdate(obj, obj)` for every cached object, delivered in batches of 1000 with the event loop free in
   * between. 0 disables. @defaultValue 0
   */
  readonly resyncPeriodMs?: number;
  /** Each resync period is scaled by a random factor in [1 − jitter, 1 + jitter]. @defaultValue 0.1 */
  readonly resyncJitter?: number;
  /**
   * Applied once per object version before it is stored (client-go `SetTransform`; e.g.
   * {@link stripManagedFields}). A relisted object whose resourceVersion is already cached is not transformed
   * again; tombstones carry the already transformed state and are never transformed. If it throws for an
   * object, that arrival is logged (error, with the key) and counted in `status().transformErrors`, the
   * object is not stored (the key keeps its last good state, if any) and the informer goes on (C39).
   */
  readonly transform?: (obj: T) => T;
  readonly logger?: Logger;
  /** Name in logs. */
  readonly name?: string;
  /** Passed to the reflector (page size, watch timeout, backoff, WatchList, clock). */
  readonly reflector?: Omit<ReflectorOptions, 'logger' | 'name' | 'onListResult' | 'onWatchStart'>;
  /** Time source of resyncs (and of the reflector, unless `reflector.clock` is given). @defaultValue the real clock */
  readonly clock?: Clock;
  readonly random?: () => number;
  /**
   * Opt-in compact store ({@link CompactIndexer}): objects are kept as the UTF-8 bytes of their
   * (transformed) JSON plus their index values, and handed out parsed and frozen through a bounded LRU of
   * `maxCachedObjects` (default 1000) recently used objects. Less memory for large caches; cold reads, relists
   * and updates of cold objects cost a `JSON.parse`. @defaultValue false (the plain {@link Indexer})
   */
  readonly compactStore?: boolean | { readonly maxCachedObjects?: number };
  /**
   * What the store keeps of each object. `'objects'`: the parsed, frozen object (client-go's store keeps its
   * typed structs likewise). `'bytes'`: the object's JSON text as the client received it — each listed item's
   * text is cut out of the list reply and the parsed item dropped as soon as its key and resourceVersion are
   * read, a watch event's object is a slice of the event line — with its index values, in the compact store
   * ({@link CompactIndexer}; `compactStore.maxCachedObjects` sizes its hot set, default 1000). Reads, selectors
   * and indexes behave the same: a read hands out a frozen object equal to the parsed one (parsed and frozen
   * on first use, then kept among the hot objects); index values and selectors work from the values computed
   * when the object was stored; handlers get the parsed object, frozen. With a `transform`, the transform
   * runs on the parsed object as before and the store keeps the transformed object's JSON (re-encoded once
   * per stored version). Costs: an update of a cold object parses the previous version for `onUpdate`; a
   * listed item is parsed twice (once while the list arrives, for its key, once when stored); a cold read
   * parses. Gains: a sync's objects die young instead of being promoted, so the collector's share of the
   * CPU (most of an eager sync's) falls, and retained memory is the JSON's size.
   * A ListerWatcher that does not pass `decodeItem`/`keepObjectJson` on hands over parsed objects, which are
   * then re-encoded. @defaultValue 'objects'
   */
  readonly objectRetention?: 'objects' | 'bytes';
  /**
   * Deep-freeze every stored object (and delete notification) so a handler or reader that mutates a shared
   * object throws instead of corrupting the cache. `false` skips it (deep freezing costs about 0.6× the
   * `JSON.parse` of an event): the objects are still shared, so treat them as read-only and copy before
   * changing (client-go's contract). @defaultValue true
   */
  readonly freezeObjects?: boolean;
  /**
   * Told of every version the store takes in, after it is stored: each add and update, each object of a
   * relist (changed or not), each delete (`deleted`, with the deleted object). Used by read-your-own-writes
   * ({@link ReadYourWrites}); must be cheap and must not throw.
   */
  readonly onStored?: (key: string, obj: KubeObject | undefined, deleted: boolean) => void;
}

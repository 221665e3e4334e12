import type { Cached, KubeObject } from '@kubeloop/client';
import { deepFreeze } from './freeze.js';
import {
  addToIndex,
  IndexedEntries,
  type Indexers,
  type IndexSlot,
  indexValuesOf,
  removeFromIndex,
  StoreError,
  sameIndexValues,
} from './indexes.js';

/** Maps an object to its store key. */
export type KeyFunc = (obj: KubeObject) => string;

/** The name of the namespace index every informer store has (client-go `cache.NamespaceIndex`). */
export const NAMESPACE_INDEX = 'namespace';

/** `namespace/name`, or `name` for cluster-scoped objects (client-go `MetaNamespaceKeyFunc`). */
export function metaNamespaceKeyFunc(obj: KubeObject): string {
  const name = obj.metadata?.name;
  if (!name) throw new StoreError('object has no metadata.name');
  const ns = obj.metadata?.namespace;
  return ns ? `${ns}/${name}` : name;
}

/** Splits a `namespace/name` key (client-go `SplitMetaNamespaceKey`). */
export function splitMetaNamespaceKey(key: string): { namespace: string; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { namespace: '', name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

/** Indexes objects by their namespace (client-go `MetaNamespaceIndexFunc`). */
export function metaNamespaceIndexFunc(obj: KubeObject): readonly string[] {
  return [obj.metadata?.namespace ?? ''];
}

/** The brand every tombstone carries, shared by every installed copy of this package. */
const TOMBSTONE_BRAND: unique symbol = Symbol.for('kubeloop.cache.DeletedFinalStateUnknown') as never;

/**
 * A delete whose final state is unknown: the object vanished while the watch was down and was found
 * missing by a relist (client-go `DeletedFinalStateUnknown`). `obj` is the last state the cache knew.
 * `instanceof` also recognises a tombstone made by another installed copy of this package (it tests a
 * `Symbol.for` brand), as does {@link isDeletedFinalStateUnknown}.
 */
export class DeletedFinalStateUnknown<T = KubeObject> {
  readonly kind = 'DeletedFinalStateUnknown' as const;
  constructor(
    readonly key: string,
    readonly obj: T,
  ) {
    Object.defineProperty(this, TOMBSTONE_BRAND, { value: true });
    Object.freeze(this);
  }

  static [Symbol.hasInstance](value: unknown): boolean {
    return isDeletedFinalStateUnknown(value);
  }
}

/**
 * Whether `value` is a tombstone, from this or any other installed copy of the package. On a handler's
 * `onDelete` argument it narrows to `DeletedFinalStateUnknown<Cached<T>>`, and the other branch to `Cached<T>`.
 */
export function isDeletedFinalStateUnknown<T = KubeObject>(
  value: T | DeletedFinalStateUnknown<T>,
): value is DeletedFinalStateUnknown<T> {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Record<symbol, unknown>)[TOMBSTONE_BRAND] === true
  );
}

/**
 * The object inside a delete notification, whether or not it is a tombstone: from a handler's `onDelete`
 * (`Cached<T> | DeletedFinalStateUnknown<Cached<T>>`) it is the read-only `Cached<T>`.
 */
export function objectOfDelete<T>(obj: T | DeletedFinalStateUnknown<T>): T {
  return isDeletedFinalStateUnknown(obj) ? (obj as DeletedFinalStateUnknown<T>).obj : (obj as T);
}

/**
 * IndexerReader knows how to read a store and its indexes. Objects are frozen and shared, so they are typed
 * read-only: `R` is `Cached<T>` (what an informer's `getIndexer()` hands out: deep read-only, server-set
 * metadata present); `deepCopy` one to change it. A store's own methods ({@link IndexerStore}) read `T`.
 */
export interface IndexerReader<T extends KubeObject = KubeObject, R = Cached<T>> {
  get(key: string): R | undefined;
  list(): R[];
  listKeys(): string[];
  /** Objects whose index `indexName` contains `value`. @throws StoreError for an unknown index. */
  byIndex(indexName: string, value: string): R[];
  /** Keys whose index `indexName` contains `value`. @throws StoreError for an unknown index. */
  indexKeys(indexName: string, value: string): string[];
  /** Every value index `indexName` holds. */
  listIndexFuncValues(indexName: string): string[];
  /** Names of the indexes this store keeps. */
  indexerNames(): string[];
  size(): number;
}

/**
 * `reader` typed with the stored `T`, for this package's own read paths (selectors, merged readers), which
 * never change what they read. @internal
 */
export function storeReader<T extends KubeObject>(reader: IndexerReader<T>): IndexerReader<T, T> {
  return reader as unknown as IndexerReader<T, T>;
}

/** The read-only view of a store that an informer hands out (`getIndexer()`). @internal */
export function readOnlyView<T extends KubeObject>(store: IndexerReader<T, T>): IndexerReader<T> {
  return store as unknown as IndexerReader<T>;
}

/**
 * What an informer needs from its store: the reader plus the mutations the informer applies. Both
 * {@link Indexer} (objects kept as parsed, frozen objects) and {@link CompactIndexer} (objects kept as
 * JSON bytes) implement it.
 */
export interface IndexerStore<T extends KubeObject = KubeObject> extends IndexerReader<T, T> {
  readonly keyFunc: KeyFunc;
  addIndexers(indexers: Indexers<T>): void;
  /**
   * Adds or replaces the object under its key (freezing it); returns the previous object, if any. `json`: the
   * text `obj` was parsed from, which a store that keeps JSON keeps instead of re-encoding `obj`; others ignore it.
   */
  upsert(obj: T, json?: string): T | undefined;
  /** Removes the object with `key`; returns it, if it was there. */
  deleteKey(key: string): T | undefined;
  replace(objs: readonly T[]): void;
  has(key: string): boolean;
  /** `metadata.resourceVersion` of the object under `key` (without parsing it, in a store that keeps JSON). */
  resourceVersionOf(key: string): string | undefined;
}

/**
 * How a store protects the objects it hands out, which are shared by every reader and handler:
 * `'deep'` freezes each stored object and everything in it (a mutation throws in strict mode);
 * `'none'` stores objects as they are — cheaper (deep freezing costs about 0.3× a `JSON.parse` of the
 * same object) but the contract is then only documented, as in client-go, whose cache hands out shared
 * pointers: never mutate a cached object, copy it (`structuredClone`) before changing it.
 */
export type FreezeMode = 'deep' | 'none';

/**
 * The informer's store: key → object plus secondary indexes (client-go `ThreadSafeStore` + `Indexer`).
 * JavaScript runs one callback at a time, so no locks are needed; every mutation keeps the indexes
 * consistent before it returns. Objects are deep-frozen on the way in (unless `freeze: 'none'`) and
 * handed out without copies.
 * An update touches only the indexes whose values changed (client-go `updateIndices` does the same
 * comparison per index), so a label change does not rewrite the namespace index.
 */
export class Indexer<T extends KubeObject = KubeObject>
  extends IndexedEntries<T, T>
  implements IndexerStore<T>
{
  /** Index values of the object being stored, computed before the store changes. */
  readonly #scratch: Array<readonly string[] | undefined> = [];
  readonly keyFunc: KeyFunc;
  readonly #freeze: boolean;

  /** `freeze`: `'deep'` (default) deep-freezes each stored object, so a mutation throws in strict mode; `'none'` stores it as is (cheaper; never mutate a cached object, copy it first). @defaultValue 'deep' */
  constructor(options: { keyFunc?: KeyFunc; indexers?: Indexers<T>; freeze?: FreezeMode } = {}) {
    super();
    this.keyFunc = options.keyFunc ?? metaNamespaceKeyFunc;
    this.#freeze = (options.freeze ?? 'deep') === 'deep';
    this.addIndexers(options.indexers ?? {});
  }

  /**
   * Adds indexes; existing items are indexed at once (client-go allows this after start).
   * @throws StoreError when a name is already used.
   */
  addIndexers(indexers: Indexers<T>): void {
    // Built in full before any is registered: a function that throws on an existing item adds nothing.
    const added = this.indexes.prepare(indexers);
    for (const slot of added)
      for (const [key, obj] of this.items)
        addToIndex(slot.index, indexValuesOf(slot.name, slot.fn, obj, key), key);
    this.indexes.register(added);
  }

  /**
   * Adds or replaces the object under its key; returns the previous object, if any.
   * @throws StoreError when an index function throws (the store is then unchanged).
   */
  upsert(obj: T): T | undefined {
    const key = this.keyFunc(obj);
    const slots = this.indexes.list;
    // Every index value first, into a reused scratch array: a throwing index function changes nothing.
    const next = this.#scratch;
    next.length = slots.length;
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i] as IndexSlot<T>;
      next[i] = indexValuesOf(slot.name, slot.fn, obj, key);
    }
    const old = this.items.get(key);
    // against the cached version: unchanged subtrees are shared with it, not frozen anew (see deepFreeze)
    if (this.#freeze) deepFreeze(obj, old);
    this.items.set(key, obj);
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i] as IndexSlot<T>;
      const values = next[i] as readonly string[];
      next[i] = undefined;
      if (old) {
        const oldValues = slot.fn(old);
        if (sameIndexValues(oldValues, values)) continue;
        removeFromIndex(slot.index, oldValues, key);
      }
      addToIndex(slot.index, values, key);
    }
    return old;
  }

  /** Removes the object with `key`; returns it, if it was there. */
  deleteKey(key: string): T | undefined {
    const old = this.items.get(key);
    if (!old) return undefined;
    const slots = this.indexes.list;
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i] as IndexSlot<T>;
      removeFromIndex(slot.index, slot.fn(old), key);
    }
    this.items.delete(key);
    return old;
  }

  /** Replaces the whole content. */
  replace(objs: readonly T[]): void {
    this.items.clear();
    this.indexes.clear();
    for (const o of objs) this.upsert(o);
  }

  protected objectAt(_key: string, entry: T): T {
    return entry;
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }
  /** `metadata.resourceVersion` of the object under `key`; `undefined` when absent. */
  resourceVersionOf(key: string): string | undefined {
    return this.items.get(key)?.metadata?.resourceVersion;
  }
  list(): T[] {
    return [...this.items.values()];
  }

  /** Sizes of every index (values per index); for tests that check nothing leaks. */
  debugIndexSizes(): Record<string, number> {
    return this.indexes.sizes();
  }
}

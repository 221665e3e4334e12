import type { KubeObject } from '@kubeloop/client';

/** Maps an object to its store key. */
export type KeyFunc = (obj: KubeObject) => string;

/** Maps an object to the values it is indexed under. */
export type IndexFunc<T extends KubeObject = KubeObject> = (obj: T) => readonly string[];

/** Index name → index function. */
export type Indexers<T extends KubeObject = KubeObject> = Readonly<Record<string, IndexFunc<T>>>;

/** The name of the namespace index every informer store has (client-go `cache.NamespaceIndex`). */
export const NAMESPACE_INDEX = 'namespace';

/** Thrown for a store misuse (unknown or duplicate index, bad key). Code `'ERR_STORE'`. */
export class StoreError extends Error {
  readonly code = 'ERR_STORE' as const;
  override readonly name = 'StoreError';
}

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

/**
 * A delete whose final state is unknown: the object vanished while the watch was down and was found
 * missing by a relist (client-go `DeletedFinalStateUnknown`). `obj` is the last state the cache knew.
 */
export class DeletedFinalStateUnknown<T extends KubeObject = KubeObject> {
  readonly kind = 'DeletedFinalStateUnknown' as const;
  constructor(
    readonly key: string,
    readonly obj: T,
  ) {
    Object.freeze(this);
  }
}

/** The object inside a delete notification, whether or not it is a tombstone. */
export function objectOfDelete<T extends KubeObject>(obj: T | DeletedFinalStateUnknown<T>): T {
  return obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
}

/** Freezes an object and everything it holds; objects in the cache are shared and must not be mutated. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) freezeTree(value);
  return value;
}

// Hot path (every object an informer stores): no per-object array from Object.values, and no call for
// primitive members, which are most of an object's values.
function freezeTree(obj: object): void {
  Object.freeze(obj);
  if (Array.isArray(obj)) {
    for (let i = 0; i < obj.length; i++) {
      const v: unknown = obj[i];
      if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) freezeTree(v);
    }
    return;
  }
  const rec = obj as Record<string, unknown>;
  for (const k in rec) {
    const v = rec[k];
    if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) freezeTree(v);
  }
}

/** IndexerReader knows how to read a store and its indexes. Objects are frozen and shared: do not mutate. */
export interface IndexerReader<T extends KubeObject = KubeObject> {
  get(key: string): T | undefined;
  list(): T[];
  listKeys(): string[];
  /** Objects whose index `indexName` contains `value`. @throws StoreError for an unknown index. */
  byIndex(indexName: string, value: string): T[];
  /** Keys whose index `indexName` contains `value`. @throws StoreError for an unknown index. */
  indexKeys(indexName: string, value: string): string[];
  /** Every value index `indexName` holds. */
  listIndexFuncValues(indexName: string): string[];
  /** Names of the indexes this store keeps. */
  indexerNames(): string[];
  size(): number;
}

/**
 * The informer's store: key → object plus secondary indexes (client-go `ThreadSafeStore` + `Indexer`).
 * JavaScript runs one callback at a time, so no locks are needed; every mutation keeps the indexes
 * consistent before it returns. Objects are deep-frozen on the way in and handed out without copies.
 */
export class Indexer<T extends KubeObject = KubeObject> implements IndexerReader<T> {
  readonly #items = new Map<string, T>();
  readonly #indexers = new Map<string, IndexFunc<T>>();
  readonly #indices = new Map<string, Map<string, Set<string>>>();
  readonly keyFunc: KeyFunc;

  constructor(options: { keyFunc?: KeyFunc; indexers?: Indexers<T> } = {}) {
    this.keyFunc = options.keyFunc ?? metaNamespaceKeyFunc;
    this.addIndexers(options.indexers ?? {});
  }

  /**
   * Adds indexes; existing items are indexed at once (client-go allows this after start).
   * @throws StoreError when a name is already used.
   */
  addIndexers(indexers: Indexers<T>): void {
    for (const [name, fn] of Object.entries(indexers)) {
      if (this.#indexers.has(name)) throw new StoreError(`index ${JSON.stringify(name)} already exists`);
      this.#indexers.set(name, fn);
      const index = new Map<string, Set<string>>();
      this.#indices.set(name, index);
      for (const [key, obj] of this.#items) this.#addToIndex(index, fn, key, obj);
    }
  }

  /** Index names. */
  indexerNames(): string[] {
    return [...this.#indexers.keys()];
  }

  /** Adds or replaces the object under its key; returns the previous object, if any. */
  upsert(obj: T): T | undefined {
    const key = this.keyFunc(obj);
    deepFreeze(obj);
    const old = this.#items.get(key);
    if (old) this.#removeFromIndices(key, old);
    this.#items.set(key, obj);
    for (const [name, fn] of this.#indexers) this.#addToIndex(this.#indices.get(name)!, fn, key, obj);
    return old;
  }

  /** Removes the object with `key`; returns it, if it was there. */
  deleteKey(key: string): T | undefined {
    const old = this.#items.get(key);
    if (!old) return undefined;
    this.#removeFromIndices(key, old);
    this.#items.delete(key);
    return old;
  }

  /** Replaces the whole content. */
  replace(objs: readonly T[]): void {
    this.#items.clear();
    for (const index of this.#indices.values()) index.clear();
    for (const o of objs) this.upsert(o);
  }

  get(key: string): T | undefined {
    return this.#items.get(key);
  }
  has(key: string): boolean {
    return this.#items.has(key);
  }
  list(): T[] {
    return [...this.#items.values()];
  }
  listKeys(): string[] {
    return [...this.#items.keys()];
  }
  size(): number {
    return this.#items.size;
  }

  byIndex(indexName: string, value: string): T[] {
    return this.indexKeys(indexName, value).map((k) => this.#items.get(k)!);
  }

  indexKeys(indexName: string, value: string): string[] {
    const index = this.#indices.get(indexName);
    if (!index) throw new StoreError(`index ${JSON.stringify(indexName)} does not exist`);
    return [...(index.get(value) ?? [])];
  }

  listIndexFuncValues(indexName: string): string[] {
    return [...(this.#indices.get(indexName)?.keys() ?? [])];
  }

  /** Sizes of every index (values per index); for tests that check nothing leaks. */
  debugIndexSizes(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [name, index] of this.#indices) out[name] = index.size;
    return out;
  }

  #addToIndex(index: Map<string, Set<string>>, fn: IndexFunc<T>, key: string, obj: T): void {
    for (const v of fn(obj)) {
      let set = index.get(v);
      if (!set) {
        set = new Set();
        index.set(v, set);
      }
      set.add(key);
    }
  }

  #removeFromIndices(key: string, obj: T): void {
    for (const [name, fn] of this.#indexers) {
      const index = this.#indices.get(name)!;
      for (const v of fn(obj)) {
        const set = index.get(v);
        if (!set) continue;
        set.delete(key);
        if (set.size === 0) index.delete(v);
      }
    }
  }
}

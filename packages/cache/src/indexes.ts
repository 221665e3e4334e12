import type { KubeObject } from '@kubeloop/client';

// The secondary indexes of a store (client-go `Indexers`/`Indices` in `thread_safe_store.go`), shared by the
// plain Indexer and the CompactIndexer: index functions, the value → keys maps, and the bookkeeping of names.

/** Maps an object to the values it is indexed under. */
export type IndexFunc<T extends KubeObject = KubeObject> = (obj: T) => readonly string[];

/** Index name → index function. */
export type Indexers<T extends KubeObject = KubeObject> = Readonly<Record<string, IndexFunc<T>>>;

/** Thrown for a store misuse (unknown or duplicate index, bad key). Code `'ERR_STORE'`. */
export class StoreError extends Error {
  readonly code = 'ERR_STORE' as const;
  override readonly name = 'StoreError';
}

/** One index: its function and its value → keys map (an array of these keeps the hot loops allocation-free). */
export interface IndexSlot<T extends KubeObject> {
  readonly name: string;
  readonly fn: IndexFunc<T>;
  readonly index: Map<string, Set<string>>;
}

/**
 * The values `fn` (the index named `name`) gives for the object stored under `key`. Stores call it for every
 * index before they change anything, so an index function that throws leaves the store as it was (client-go
 * panics there; here the write fails, and an informer reports it as a list error).
 * @throws StoreError naming the index and the key, with the function's error as `cause`.
 */
export function indexValuesOf<T extends KubeObject>(
  name: string,
  fn: IndexFunc<T>,
  obj: T,
  key: string,
): readonly string[] {
  try {
    return fn(obj);
  } catch (err) {
    throw new StoreError(
      `index ${JSON.stringify(name)} failed for ${key}: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  }
}

/** True when two index-value lists hold the same values in the same order (the usual unchanged case). */
export function sameIndexValues(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Adds `key` under every value of `values` in `index`. */
export function addToIndex(index: Map<string, Set<string>>, values: readonly string[], key: string): void {
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as string;
    let set = index.get(v);
    if (!set) {
      set = new Set();
      index.set(v, set);
    }
    set.add(key);
  }
}

/** Removes `key` from every value of `values` in `index`, dropping values left with no key. */
export function removeFromIndex(
  index: Map<string, Set<string>>,
  values: readonly string[],
  key: string,
): void {
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as string;
    const set = index.get(v);
    if (!set) continue;
    set.delete(key);
    if (set.size === 0) index.delete(v);
  }
}

/**
 * The indexes of one store by name: the slots in registration order (the stores' hot loops walk this array)
 * and the lookups by name. Index names are unique.
 */
export class IndexSlots<T extends KubeObject> {
  /** In registration order; a store keeps per-object index values in this order. */
  readonly list: IndexSlot<T>[] = [];
  readonly #byName = new Map<string, IndexSlot<T>>();

  /**
   * Empty slots for `indexers`, not registered yet (a store fills them, then calls {@link register}).
   * @throws StoreError when a name is already used.
   */
  prepare(indexers: Indexers<T>): IndexSlot<T>[] {
    const out: IndexSlot<T>[] = [];
    for (const [name, fn] of Object.entries(indexers)) {
      if (this.#byName.has(name)) throw new StoreError(`index ${JSON.stringify(name)} already exists`);
      out.push({ name, fn, index: new Map() });
    }
    return out;
  }

  register(slots: readonly IndexSlot<T>[]): void {
    for (const slot of slots) {
      this.list.push(slot);
      this.#byName.set(slot.name, slot);
    }
  }

  names(): string[] {
    return this.list.map((s) => s.name);
  }

  /** The keys under `value` of the index `name`. @throws StoreError for an unknown index. */
  keySet(name: string, value: string): ReadonlySet<string> | undefined {
    const slot = this.#byName.get(name);
    if (!slot) throw new StoreError(`index ${JSON.stringify(name)} does not exist`);
    return slot.index.get(value);
  }

  /** Every value the index `name` holds (none for an unknown index, as client-go). */
  values(name: string): string[] {
    return [...(this.#byName.get(name)?.index.keys() ?? [])];
  }

  clear(): void {
    for (const slot of this.list) slot.index.clear();
  }

  /** Values per index; for tests that check nothing leaks. */
  sizes(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const slot of this.list) out[slot.name] = slot.index.size;
    return out;
  }
}

/**
 * The part of a store both stores share: a key → entry map and its indexes, with the reads that need no
 * more than that. A store says how an entry becomes the object it hands out ({@link objectAt}).
 */
export abstract class IndexedEntries<T extends KubeObject, E> {
  protected readonly items = new Map<string, E>();
  protected readonly indexes = new IndexSlots<T>();

  /** The object an entry holds (a read: must not change what is kept hot or cold). */
  protected abstract objectAt(key: string, entry: E): T;

  /** Index names, in registration order. */
  indexerNames(): string[] {
    return this.indexes.names();
  }
  has(key: string): boolean {
    return this.items.has(key);
  }
  listKeys(): string[] {
    return [...this.items.keys()];
  }
  size(): number {
    return this.items.size;
  }
  /** The objects under `value` of the index `indexName`. @throws StoreError for an unknown index. */
  byIndex(indexName: string, value: string): T[] {
    const set = this.indexes.keySet(indexName, value);
    const out: T[] = [];
    if (set) for (const k of set) out.push(this.objectAt(k, this.items.get(k) as E));
    return out;
  }
  /** @throws StoreError for an unknown index. */
  indexKeys(indexName: string, value: string): string[] {
    return [...(this.indexes.keySet(indexName, value) ?? [])];
  }
  listIndexFuncValues(indexName: string): string[] {
    return this.indexes.values(indexName);
  }
}

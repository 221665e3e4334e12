import { Buffer } from 'node:buffer';
import type { KubeObject } from '@kubeloop/client';
import { LRUCache } from 'lru-cache';
import {
  addToIndex,
  deepFreeze,
  type FreezeMode,
  type IndexerStore,
  type Indexers,
  type IndexFunc,
  indexValuesOf,
  type KeyFunc,
  metaNamespaceKeyFunc,
  removeFromIndex,
  StoreError,
  sameIndexValues,
} from './store.js';

/** Options of {@link CompactIndexer}. */
export interface CompactIndexerOptions<T extends KubeObject = KubeObject> {
  readonly keyFunc?: KeyFunc;
  readonly indexers?: Indexers<T>;
  /**
   * How many parsed objects to keep for reads (the most recently read or written ones); the rest are
   * kept only as JSON bytes and parsed again when read. @defaultValue 1000
   */
  readonly maxCachedObjects?: number;
  /** Whether parsed objects are deep-frozen; `'deep'` (default) deep-freezes each stored object, so a mutation throws in strict mode; `'none'` stores it as is (cheaper; never mutate a cached object, copy it first). @defaultValue 'deep' */
  readonly freeze?: FreezeMode;
}

interface CompactEntry {
  /** UTF-8 JSON of the (transformed) object. */
  readonly bytes: Buffer;
  /** Index values per index slot, in slot order, computed when the object was stored. */
  readonly values: ReadonlyArray<readonly string[]>;
}

interface CompactSlot<T extends KubeObject> {
  readonly name: string;
  readonly fn: IndexFunc<T>;
  readonly index: Map<string, Set<string>>;
}

/**
 * A store that keeps each object as the UTF-8 bytes of its JSON plus the index values computed when it was
 * stored, and hands out parsed, deep-frozen objects — the most recently used ones from a bounded
 * `lru-cache`, the others parsed on each read. A parsed V8 object costs about 2.2× its JSON, so for large
 * caches this trades CPU on cold reads for memory. Same contract as {@link Indexer}: objects handed out
 * are frozen and shared; index lookups never parse anything; `list()` and `byIndex()` parse the cold
 * objects they return (without evicting hot ones). `upsert` returns the previous object, parsing it when
 * it is not hot — an update notification needs it, so an informer's update costs one extra parse here.
 * No counterpart in client-go (whose store keeps Go structs).
 */
export class CompactIndexer<T extends KubeObject = KubeObject> implements IndexerStore<T> {
  readonly #items = new Map<string, CompactEntry>();
  readonly #slots: CompactSlot<T>[] = [];
  readonly #byName = new Map<string, CompactSlot<T>>();
  readonly #hot: LRUCache<string, T>;
  readonly keyFunc: KeyFunc;
  readonly #freeze: boolean;

  /** @throws StoreError when `maxCachedObjects` is not a positive integer. */
  constructor(options: CompactIndexerOptions<T> = {}) {
    this.keyFunc = options.keyFunc ?? metaNamespaceKeyFunc;
    this.#freeze = (options.freeze ?? 'deep') === 'deep';
    const max = options.maxCachedObjects ?? 1000;
    if (!Number.isInteger(max) || max < 1)
      throw new StoreError(`maxCachedObjects must be a positive integer, got ${String(max)}`);
    this.#hot = new LRUCache<string, T>({ max });
    this.addIndexers(options.indexers ?? {});
  }

  /**
   * Adds indexes; existing objects are parsed once and indexed.
   * @throws StoreError when a name is already used.
   */
  addIndexers(indexers: Indexers<T>): void {
    const entries = Object.entries(indexers);
    for (const [name] of entries)
      if (this.#byName.has(name)) throw new StoreError(`index ${JSON.stringify(name)} already exists`);
    const added: CompactSlot<T>[] = entries.map(([name, fn]) => ({ name, fn, index: new Map() }));
    // Every existing object's new values first: a function that throws on one registers nothing.
    const extra = new Map<string, (readonly string[])[]>();
    if (added.length > 0)
      for (const [key, entry] of this.#items) {
        const obj = this.#peek(key, entry);
        extra.set(
          key,
          added.map((slot) => indexValuesOf(slot.name, slot.fn, obj, key)),
        );
      }
    for (const slot of added) {
      this.#slots.push(slot);
      this.#byName.set(slot.name, slot);
    }
    for (const [key, vs] of extra) {
      const entry = this.#items.get(key) as CompactEntry;
      const values = entry.values.slice();
      for (let i = 0; i < vs.length; i++) {
        values.push(vs[i] as readonly string[]);
        addToIndex((added[i] as CompactSlot<T>).index, vs[i] as readonly string[], key);
      }
      this.#items.set(key, { bytes: entry.bytes, values });
    }
  }

  indexerNames(): string[] {
    return this.#slots.map((s) => s.name);
  }

  /** Stores the object as JSON bytes (and keeps it hot); returns the previous object, if any. */
  upsert(obj: T): T | undefined {
    const key = this.keyFunc(obj);
    const slots = this.#slots;
    const values: (readonly string[])[] = new Array(slots.length);
    // Every index value first: an index function that throws leaves the store unchanged.
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i] as CompactSlot<T>;
      values[i] = indexValuesOf(slot.name, slot.fn, obj, key);
    }
    if (this.#freeze) deepFreeze(obj);
    const oldEntry = this.#items.get(key);
    const old = oldEntry ? this.#peek(key, oldEntry) : undefined;
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i] as CompactSlot<T>;
      const v = values[i] as readonly string[];
      if (oldEntry) {
        const ov = oldEntry.values[i] as readonly string[];
        if (sameIndexValues(ov, v)) {
          values[i] = ov; // share the old array: one less array kept per object
          continue;
        }
        removeFromIndex(slot.index, ov, key);
      }
      addToIndex(slot.index, v, key);
    }
    this.#items.set(key, { bytes: Buffer.from(JSON.stringify(obj), 'utf8'), values });
    this.#hot.set(key, obj);
    return old;
  }

  deleteKey(key: string): T | undefined {
    const entry = this.#items.get(key);
    if (!entry) return undefined;
    const old = this.#peek(key, entry);
    for (let i = 0; i < this.#slots.length; i++) {
      const slot = this.#slots[i] as CompactSlot<T>;
      removeFromIndex(slot.index, entry.values[i] as readonly string[], key);
    }
    this.#items.delete(key);
    this.#hot.delete(key);
    return old;
  }

  replace(objs: readonly T[]): void {
    this.#items.clear();
    this.#hot.clear();
    for (const slot of this.#slots) slot.index.clear();
    for (const o of objs) this.upsert(o);
  }

  /** The object under `key`, parsed and frozen (from the LRU when hot; a cold read makes it hot). */
  get(key: string): T | undefined {
    const hot = this.#hot.get(key);
    if (hot) return hot;
    const entry = this.#items.get(key);
    if (!entry) return undefined;
    const obj = this.#decode(entry);
    this.#hot.set(key, obj);
    return obj;
  }

  has(key: string): boolean {
    return this.#items.has(key);
  }

  /** Every object; cold ones are parsed for this call only (a scan does not flush the hot set). */
  list(): T[] {
    const out: T[] = [];
    for (const [key, entry] of this.#items) out.push(this.#peek(key, entry));
    return out;
  }

  listKeys(): string[] {
    return [...this.#items.keys()];
  }

  size(): number {
    return this.#items.size;
  }

  byIndex(indexName: string, value: string): T[] {
    const set = this.#slot(indexName).index.get(value);
    const out: T[] = [];
    if (set) for (const k of set) out.push(this.#peek(k, this.#items.get(k) as CompactEntry));
    return out;
  }

  indexKeys(indexName: string, value: string): string[] {
    return [...(this.#slot(indexName).index.get(value) ?? [])];
  }

  listIndexFuncValues(indexName: string): string[] {
    return [...(this.#byName.get(indexName)?.index.keys() ?? [])];
  }

  /** Bytes of JSON held and the number of parsed objects kept hot; for tests and benchmarks. */
  debugStats(): { jsonBytes: number; hotObjects: number; indexSizes: Record<string, number> } {
    let jsonBytes = 0;
    for (const e of this.#items.values()) jsonBytes += e.bytes.length;
    const indexSizes: Record<string, number> = {};
    for (const slot of this.#slots) indexSizes[slot.name] = slot.index.size;
    return { jsonBytes, hotObjects: this.#hot.size, indexSizes };
  }

  /** Hot object or a fresh parse, without touching the LRU's order or content. */
  #peek(key: string, entry: CompactEntry): T {
    return this.#hot.peek(key) ?? this.#decode(entry);
  }

  #decode(entry: CompactEntry): T {
    const obj = JSON.parse(entry.bytes.toString('utf8')) as T;
    return this.#freeze ? deepFreeze(obj) : obj;
  }

  #slot(indexName: string): CompactSlot<T> {
    const slot = this.#byName.get(indexName);
    if (!slot) throw new StoreError(`index ${JSON.stringify(indexName)} does not exist`);
    return slot;
  }
}

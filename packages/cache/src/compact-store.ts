import type { KubeObject } from '@kubeloop/client';
import { LRUCache } from 'lru-cache';
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
import { type FreezeMode, type IndexerStore, type KeyFunc, metaNamespaceKeyFunc } from './store.js';

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
  /** JSON of the object: the text it was decoded from, or its re-encoding (a transformed object). */
  readonly json: string;
  /** Index values per index slot, in slot order, computed when the object was stored. */
  readonly values: ReadonlyArray<readonly string[]>;
  /** `metadata.resourceVersion`, so a relist compares versions without a parse. */
  readonly resourceVersion: string | undefined;
  /** `apiVersion`/`kind` the stored object had: list items' JSON lacks them (the client fills them in). */
  readonly apiVersion: string | undefined;
  readonly kind: string | undefined;
}

/**
 * A store that keeps each object as its JSON text plus the index values computed when it was stored — the text
 * the client decoded it from when the caller hands it over (`upsert(obj, json)`), else `JSON.stringify(obj)` —
 * and hands out parsed, deep-frozen objects — the most recently used ones from a bounded
 * `lru-cache`, the others parsed on each read. A parsed V8 object costs about 2.2× its JSON, so for large
 * caches this trades CPU on cold reads for memory. Same contract as {@link Indexer}: objects handed out
 * are frozen and shared; index lookups never parse anything; `list()` and `byIndex()` parse the cold
 * objects they return (without evicting hot ones). `upsert` returns the previous object, parsing it when
 * it is not hot — an update notification needs it, so an informer's update costs one extra parse here.
 * No counterpart in client-go (whose store keeps Go structs).
 */
export class CompactIndexer<T extends KubeObject = KubeObject>
  extends IndexedEntries<T, CompactEntry>
  implements IndexerStore<T>
{
  readonly #hot: LRUCache<string, T>;
  readonly keyFunc: KeyFunc;
  readonly #freeze: boolean;

  /** @throws StoreError when `maxCachedObjects` is not a positive integer. */
  constructor(options: CompactIndexerOptions<T> = {}) {
    super();
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
    const added = this.indexes.prepare(indexers);
    // Every existing object's new values first: a function that throws on one registers nothing.
    const extra = new Map<string, (readonly string[])[]>();
    if (added.length > 0)
      for (const [key, entry] of this.items) {
        const obj = this.#peek(key, entry);
        extra.set(
          key,
          added.map((slot) => indexValuesOf(slot.name, slot.fn, obj, key)),
        );
      }
    this.indexes.register(added);
    for (const [key, vs] of extra) {
      const entry = this.items.get(key) as CompactEntry;
      const values = entry.values.slice();
      for (let i = 0; i < vs.length; i++) {
        values.push(vs[i] as readonly string[]);
        addToIndex((added[i] as IndexSlot<T>).index, vs[i] as readonly string[], key);
      }
      this.items.set(key, { ...entry, values });
    }
  }

  /**
   * Stores the object as JSON (and keeps it hot); returns the previous object, if any. `json`, when given,
   * must be the text `obj` was parsed from (no transform in between, `apiVersion`/`kind` aside): it is kept
   * instead of a re-encoding.
   * @throws StoreError when an index function throws (the store is then unchanged).
   */
  upsert(obj: T, json?: string): T | undefined {
    const key = this.keyFunc(obj);
    const slots = this.indexes.list;
    const values: (readonly string[])[] = new Array(slots.length);
    // Every index value first: an index function that throws leaves the store unchanged.
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i] as IndexSlot<T>;
      values[i] = indexValuesOf(slot.name, slot.fn, obj, key);
    }
    if (this.#freeze) deepFreeze(obj);
    const oldEntry = this.items.get(key);
    const old = oldEntry ? this.#peek(key, oldEntry) : undefined;
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i] as IndexSlot<T>;
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
    const m = obj.metadata;
    this.items.set(key, {
      json: json ?? JSON.stringify(obj),
      values,
      resourceVersion: m?.resourceVersion,
      apiVersion: obj.apiVersion,
      kind: obj.kind,
    });
    this.#hot.set(key, obj);
    return old;
  }

  deleteKey(key: string): T | undefined {
    const entry = this.items.get(key);
    if (!entry) return undefined;
    const old = this.#peek(key, entry);
    const slots = this.indexes.list;
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i] as IndexSlot<T>;
      removeFromIndex(slot.index, entry.values[i] as readonly string[], key);
    }
    this.items.delete(key);
    this.#hot.delete(key);
    return old;
  }

  replace(objs: readonly T[]): void {
    this.items.clear();
    this.#hot.clear();
    this.indexes.clear();
    for (const o of objs) this.upsert(o);
  }

  /** The object under `key`, parsed and frozen (from the LRU when hot; a cold read makes it hot). */
  get(key: string): T | undefined {
    const hot = this.#hot.get(key);
    if (hot) return hot;
    const entry = this.items.get(key);
    if (!entry) return undefined;
    const obj = this.#decode(entry);
    this.#hot.set(key, obj);
    return obj;
  }

  /** Every object; cold ones are parsed for this call only (a scan does not flush the hot set). */
  list(): T[] {
    const out: T[] = [];
    for (const [key, entry] of this.items) out.push(this.#peek(key, entry));
    return out;
  }

  /** `metadata.resourceVersion` of the object under `key`, without parsing it; `undefined` when absent. */
  resourceVersionOf(key: string): string | undefined {
    return this.items.get(key)?.resourceVersion;
  }

  /** Characters of JSON held (bytes, for ASCII) and the number of parsed objects kept hot; for tests and benchmarks. */
  debugStats(): { jsonBytes: number; hotObjects: number; indexSizes: Record<string, number> } {
    let jsonBytes = 0;
    for (const e of this.items.values()) jsonBytes += e.json.length;
    return { jsonBytes, hotObjects: this.#hot.size, indexSizes: this.indexes.sizes() };
  }

  protected objectAt(key: string, entry: CompactEntry): T {
    return this.#peek(key, entry);
  }

  /** Hot object or a fresh parse, without touching the LRU's order or content. */
  #peek(key: string, entry: CompactEntry): T {
    return this.#hot.peek(key) ?? this.#decode(entry);
  }

  #decode(entry: CompactEntry): T {
    const obj = JSON.parse(entry.json) as T;
    // as the client's withTypeMeta: filled in where the JSON (a list item's) leaves them out
    if (!obj.apiVersion && entry.apiVersion) obj.apiVersion = entry.apiVersion;
    if (!obj.kind && entry.kind) obj.kind = entry.kind;
    return this.#freeze ? deepFreeze(obj) : obj;
  }
}

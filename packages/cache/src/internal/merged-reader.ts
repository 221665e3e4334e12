import type { KubeObject } from '@kubeloop/client';
import { type IndexerReader, storeReader } from '../store.js';

/** Reads over several stores as one. */
export class MergedReader<T extends KubeObject> implements IndexerReader<T, T> {
  constructor(readonly children: () => readonly { getIndexer(): IndexerReader<T> }[]) {}
  #stores(): IndexerReader<T, T>[] {
    return this.children().map((c) => storeReader(c.getIndexer()));
  }
  get(key: string): T | undefined {
    for (const s of this.#stores()) {
      const o = s.get(key);
      if (o) return o;
    }
    return undefined;
  }
  #concat<V>(f: (s: IndexerReader<T, T>) => V[]): V[] {
    const out: V[] = [];
    for (const s of this.#stores()) {
      const part = f(s);
      for (let i = 0; i < part.length; i++) out.push(part[i]!);
    }
    return out;
  }
  list(): T[] {
    return this.#concat((s) => s.list());
  }
  listKeys(): string[] {
    return this.#concat((s) => s.listKeys());
  }
  byIndex(indexName: string, value: string): T[] {
    return this.#concat((s) => s.byIndex(indexName, value));
  }
  indexKeys(indexName: string, value: string): string[] {
    return this.#concat((s) => s.indexKeys(indexName, value));
  }
  listIndexFuncValues(indexName: string): string[] {
    return [...new Set(this.#concat((s) => s.listIndexFuncValues(indexName)))];
  }
  indexerNames(): string[] {
    return this.#stores()[0]?.indexerNames() ?? [];
  }
  size(): number {
    let n = 0;
    for (const s of this.#stores()) n += s.size();
    return n;
  }
}

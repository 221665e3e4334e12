import type { KubeObject } from '@kubeloop/client';
import { RAW_JSON, withRawJson } from '@kubeloop/client/apiutil';
import { CompactIndexer } from '../compact-store.js';
import type { Indexers } from '../indexes.js';
import type { SharedIndexInformerOptions } from '../shared-index-informer-options.js';
import { Indexer, type IndexerStore } from '../store.js';
import { estimateBytes } from './estimate-bytes.js';

/**
 * The store of an informer from its options: a {@link CompactIndexer} when objects are kept as JSON
 * (`objectRetention: 'bytes'` or `compactStore`), else the plain {@link Indexer}.
 * @throws RangeError for an `objectRetention` other than `'objects'` or `'bytes'`.
 */
export function newInformerStore<T extends KubeObject>(
  options: SharedIndexInformerOptions<T>,
  indexers: Indexers<T>,
): IndexerStore<T> {
  const retention = options.objectRetention ?? 'objects';
  if (retention !== 'objects' && retention !== 'bytes')
    throw new RangeError(`objectRetention: must be 'objects' or 'bytes', got ${JSON.stringify(retention)}`);
  const compact = options.compactStore;
  const freeze = options.freezeObjects === false ? 'none' : 'deep';
  if (!compact && retention === 'objects') return new Indexer<T>({ indexers, freeze });
  const max = typeof compact === 'object' ? compact.maxCachedObjects : undefined;
  return new CompactIndexer<T>({ indexers, freeze, ...(max !== undefined ? { maxCachedObjects: max } : {}) });
}

/**
 * A listed item while its list is read, when the informer keeps JSON: only what the reflector and `replace`
 * read before the item is stored (key, resourceVersion, uid; `apiVersion`/`kind` as the client fills them
 * in) and the item's JSON text under `RAW_JSON`. The parsed item dies young; a 20,000-pod list never holds
 * 20,000 parsed pods (the collector's cost of promoting them is most of an eager sync's CPU).
 */
export class ListedJson {
  apiVersion?: string;
  kind?: string;
  readonly metadata: {
    readonly name?: string;
    readonly namespace?: string;
    readonly uid?: string;
    readonly resourceVersion?: string;
  };

  constructor(json: string) {
    const o = JSON.parse(json) as KubeObject;
    const m = o.metadata ?? {};
    this.metadata = { name: m.name, namespace: m.namespace, uid: m.uid, resourceVersion: m.resourceVersion };
    if (o.apiVersion) this.apiVersion = o.apiVersion;
    if (o.kind) this.kind = o.kind;
    withRawJson(this, json);
  }

  /** The full item, parsed again from its text, `apiVersion`/`kind` filled in as the client did. */
  parse<T extends KubeObject>(): T {
    const o = JSON.parse((this as unknown as { [RAW_JSON]: string })[RAW_JSON]) as T;
    if (!o.apiVersion && this.apiVersion) o.apiVersion = this.apiVersion;
    if (!o.kind && this.kind) o.kind = this.kind;
    return o;
  }
}

/** `decodeListItem` of an informer that keeps JSON. */
export function decodeListedJson<T extends KubeObject>(json: string): T {
  return new ListedJson(json) as unknown as T;
}

/** Objects in `store` and the bytes they hold: the JSON's length in a store of JSON, else an estimate. */
export function storeBytes(store: IndexerStore<KubeObject>): {
  objects: number;
  bytes: number;
  bytesEstimated: boolean;
} {
  const keys = store.listKeys();
  if (store instanceof CompactIndexer)
    return { objects: keys.length, bytes: store.debugStats().jsonBytes, bytesEstimated: false };
  return { objects: keys.length, bytes: estimateBytes(keys, (k) => store.get(k)), bytesEstimated: true };
}

/**
 * What the object store holds and hands out: frozen object versions (`Entry`, JSON encoded at most once), change
 * events and their listeners, snapshots for consistent lists, the expired-resourceVersion error, and etcd's key
 * order.
 */
import type { KObject } from './resource-type.js';

/** Recursively freeze a JSON value in place and return it. */
export function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const k of Object.keys(v as object)) deepFreeze((v as Record<string, unknown>)[k]);
  }
  return v;
}

/**
 * One stored object version: a frozen snapshot shared by every reader (lists, gets, watch events),
 * with its JSON encoded at most once.
 */
export class Entry {
  readonly key: string;
  readonly rv: number;
  readonly obj: Readonly<KObject>;
  #json: string | undefined;
  #itemJson: string | undefined;
  constructor(key: string, rv: number, obj: KObject) {
    this.key = key;
    this.rv = rv;
    this.obj = deepFreeze(obj);
  }
  /** The object's JSON (with kind and apiVersion). */
  get json(): string {
    if (this.#json === undefined) this.#json = JSON.stringify(this.obj);
    return this.#json;
  }
  /**
   * The object's JSON without kind/apiVersion, as a real server puts built-in objects in lists. Derived from
   * `json` (kind and apiVersion are the first two keys of every stored object), so it shares its memory.
   */
  get itemJson(): string {
    if (this.#itemJson === undefined) {
      const j = this.json;
      const prefix = `{"kind":${JSON.stringify(this.obj.kind)},"apiVersion":${JSON.stringify(this.obj.apiVersion)},`;
      if (this.obj.kind !== undefined && this.obj.apiVersion !== undefined && j.startsWith(prefix))
        this.#itemJson = `{${j.slice(prefix.length)}`;
      else {
        const { kind: _k, apiVersion: _a, ...rest } = this.obj;
        this.#itemJson = JSON.stringify(rest);
      }
    }
    return this.#itemJson;
  }
  get namespace(): string | undefined {
    return (this.obj.metadata as { namespace?: string } | undefined)?.namespace;
  }
  get name(): string {
    return ((this.obj.metadata as { name?: string } | undefined)?.name ?? '') as string;
  }
}

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One change in the store. `entry` is the new state (for DELETED: the last state carrying the delete's RV). */
export interface StoreEvent {
  readonly rv: number;
  readonly type: EventType;
  readonly entry: Entry;
  /** State before the change (undefined for ADDED). */
  readonly prev: Entry | undefined;
  /** Per-encoding cache of the encoded watch line, shared by every watcher of the fan-out. */
  readonly lines: Map<string, string>;
}

export type StoreListener = (ev: StoreEvent) => void;

/** A consistent view of one storage bucket at some resourceVersion. */
export interface Snapshot {
  readonly rv: number;
  /** Sorted keys (`namespace/name` or `name`). */
  readonly keys: readonly string[];
  get(key: string): Entry | undefined;
}

/** Thrown by the store when a requested resourceVersion is no longer available. */
export class ExpiredError extends Error {
  readonly code = 'ENVTEST_RV_EXPIRED';
  readonly requested: number;
  readonly oldest: number;
  /** True when the RV was compacted away (as opposed to falling out of the watch history window). */
  readonly compacted: boolean;
  constructor(requested: number, oldest: number, compacted = false) {
    super(`resourceVersion ${requested} is older than the retained history (${oldest})`);
    this.requested = requested;
    this.oldest = oldest;
    this.compacted = compacted;
  }
}

/** Byte-wise ordering of keys, as etcd orders them. */
export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

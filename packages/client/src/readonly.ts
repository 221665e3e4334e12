/**
 * Types that say what the runtime does with objects: objects from an informer cache are deep-frozen and shared
 * ({@link DeepReadonly}), objects the API server returns always carry their name, uid, resourceVersion and
 * creation time ({@link Stored}), and {@link deepCopy} makes the editable copy a writer takes.
 */
import type { DeepMutable, DeepReadonly } from './deep-readonly.js';
import type { KubeObject, ListMeta } from './kinds.js';
import type { V1ObjectMeta } from './models/generated.js';
import type { Time } from './models/scalars.js';

/**
 * Object meta as the API server returns it for a stored object: `name`, `uid`, `resourceVersion` and
 * `creationTimestamp` are always set (apiserver's `BeforeCreate` fills them, `generateName` included).
 */
export interface StoredObjectMeta extends V1ObjectMeta {
  name: string;
  uid: string;
  resourceVersion: string;
  creationTimestamp: Time;
}

/**
 * An object as the API server returns it from a read or a write: `T` whose `metadata` is a
 * {@link StoredObjectMeta}, so `obj.metadata.name` compiles under `strict` without `?.` or `!`. A `Stored<T>` is
 * a `T`.
 */
export type Stored<T extends KubeObject> = T & { metadata: StoredObjectMeta };

/** An object read from an informer cache: stored, deep-frozen and shared. */
export type Cached<T extends KubeObject> = DeepReadonly<Stored<T>>;

/** A list read from an informer cache (`items` are {@link Cached}). */
export interface CachedList<T extends KubeObject> {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: Readonly<ListMeta>;
  readonly items: readonly Cached<T>[];
}

/**
 * An editable deep copy of an object — typically one read from an informer cache, which is frozen and shared —
 * to change and hand to a writer (`client.update(Pod, deepCopy(cached))`): the Go `obj.DeepCopy()` every
 * controller-runtime reconciler calls before changing a cached object. Made with `structuredClone`, so the copy
 * shares nothing with the original and is not frozen; plain JSON objects (what kubeloop hands out) copy exactly.
 * @throws DataCloneError (a `DOMException`) for values `structuredClone` cannot copy (functions, symbols).
 */
export function deepCopy<R>(obj: R): DeepMutable<R> {
  return structuredClone(obj) as DeepMutable<R>;
}

/**
 * The role interfaces of the client (controller-runtime's `pkg/client/interfaces.go`): take the narrowest one
 * you need — a reconciler that only reads takes a {@link Reader}, which the cache implements too.
 */

import type { ApplyConfiguration, ApplyOptions } from './apply.js';
import type { DeleteAllOfOptions } from './delete-all-of.js';
import type { Kind, KubeObject, ObjectKey, ObjectList } from './kinds.js';
import type {
  DeleteOptions,
  GetOptions,
  ListOptions,
  Patch,
  PatchOptions,
  SubResourceUpdateOptions,
  WatchOptions,
  WriteOptions,
} from './options.js';
import type { Cached, CachedList } from './readonly.js';
import type { RESTMapper } from './rest-mapper.js';
import type { WatchEvent } from './watch.js';

/** Reader knows how to read objects: one by key, or a list. */
export interface Reader {
  /**
   * The object named by `key`.
   * @throws StatusError (use `isNotFound`) and NoKindMatchError.
   */
  get<T extends KubeObject>(kind: Kind<T>, key: ObjectKey, options?: GetOptions): Promise<T>;
  /** The objects matching `options` (namespace, selectors, paging). @throws StatusError, NoKindMatchError. */
  list<T extends KubeObject>(kind: Kind<T>, options?: ListOptions): Promise<ObjectList<T>>;
}

/**
 * CacheReader is a {@link Reader} whose objects come from an informer cache (the cache itself, and the reads of
 * the manager's client): shared and deep-frozen, so typed {@link Cached} — read-only all the way down (a write
 * is a compile error, not a `TypeError` in production) and with the metadata a stored object always has
 * (`metadata.name`, `uid`, `resourceVersion`, `creationTimestamp`). Change a `deepCopy(obj)` and write that.
 */
export interface CacheReader {
  /**
   * The cached object named by `key`.
   * @throws StatusError (use `isNotFound`) and NoKindMatchError.
   */
  get<T extends KubeObject>(kind: Kind<T>, key: ObjectKey, options?: GetOptions): Promise<Cached<T>>;
  /** The cached objects matching `options` (namespace, selectors). @throws StatusError, NoKindMatchError. */
  list<T extends KubeObject>(kind: Kind<T>, options?: ListOptions): Promise<CachedList<T>>;
}

/** Writer knows how to create, update, patch and delete objects. Writes always go to the API server. */
export interface Writer {
  /** Creates `obj`; resolves to the object the server stored. @throws StatusError (`isAlreadyExists`). */
  create<T extends KubeObject>(kind: Kind<T>, obj: T, options?: WriteOptions): Promise<T>;
  /** Replaces `obj` (PUT); its `resourceVersion` is a precondition. @throws StatusError (`isConflict`). */
  update<T extends KubeObject>(kind: Kind<T>, obj: T, options?: WriteOptions): Promise<T>;
  // PATCH_CONTENT_TYPES is named, not linked: interfaces extending Client in other packages (the fake client)
  // inherit this comment, and typedoc cannot resolve the link there.
  /**
   * Patches the object named by `key`, with the Content-Type of `patch.type` (`PATCH_CONTENT_TYPES`).
   * @throws InvalidRequestError (apply without field manager, before sending), UnsupportedPatchTypeError
   *   (strategic merge refused with 415, e.g. on a custom resource), StatusError.
   */
  patch<T extends KubeObject>(
    kind: Kind<T>,
    key: ObjectKey,
    patch: Patch,
    options?: PatchOptions,
  ): Promise<T>;
  /** Deletes the object named by `key` (or by an object's metadata). @throws StatusError (`isNotFound`). */
  delete<T extends KubeObject>(kind: Kind<T>, key: ObjectKey | T, options?: DeleteOptions): Promise<void>;
  /**
   * Deletes every object of a kind matching the selectors in one request (`deletecollection`).
   * @throws StatusError, NoKindMatchError.
   */
  deleteAllOf<T extends KubeObject>(kind: Kind<T>, options?: DeleteAllOfOptions): Promise<void>;
  /**
   * Server-side apply of an apply configuration, sending only the fields set in it.
   * @throws InvalidRequestError (no field manager or name, before sending), StatusError (409 on conflicts).
   */
  apply<T extends KubeObject>(
    kind: Kind<T>,
    config: ApplyConfiguration<T>,
    options?: ApplyOptions,
  ): Promise<T>;
}

/** WatchClient knows how to open a watch: an async iterable of typed events. */
export interface WatchClient {
  /**
   * Watches objects of a kind. The iterable ends when the server closes the stream cleanly or the
   * signal aborts; breaking out of the loop closes the connection.
   * @throws StatusError when the server refuses the watch; WatchDecodeError on a broken stream.
   */
  watch<T extends KubeObject>(kind: Kind<T>, options?: WatchOptions): AsyncIterable<WatchEvent<T>>;
}

/**
 * SubResourceReader knows how to read a subresource of an object (e.g. `scale`); resolves to the
 * subresource's own object, of type `S`.
 */
export interface SubResourceReader {
  get<T extends KubeObject, S extends object = T>(
    kind: Kind<T>,
    key: ObjectKey,
    options?: GetOptions,
  ): Promise<S>;
}

/**
 * SubResourceWriter knows how to write a subresource of an object: `create` (e.g. an `eviction`), `update`
 * (PUT of the object, or of `options.subResourceBody`) and `patch`.
 */
export interface SubResourceWriter {
  create<T extends KubeObject, S extends object>(
    kind: Kind<T>,
    obj: T,
    subResource: S,
    options?: WriteOptions,
  ): Promise<S>;
  update<T extends KubeObject, S extends object = T>(
    kind: Kind<T>,
    obj: T,
    options?: SubResourceUpdateOptions<S>,
  ): Promise<S>;
  patch<T extends KubeObject, S extends object = T>(
    kind: Kind<T>,
    key: ObjectKey,
    patch: Patch,
    options?: PatchOptions,
  ): Promise<S>;
  /** Server-side apply to the subresource (for `status`: only the configuration's `.status` is sent). */
  apply<T extends KubeObject>(
    kind: Kind<T>,
    config: ApplyConfiguration<T>,
    options?: ApplyOptions,
  ): Promise<T>;
}

/** StatusWriter writes the `status` subresource (controller-runtime keeps it as an alias too). */
export type StatusWriter = SubResourceWriter;

/** SubResourceClient knows how to read and write one subresource. */
export interface SubResourceClient extends SubResourceReader, SubResourceWriter {}

/** StatusClient knows how to write the `status` subresource of objects. */
export interface StatusClient {
  status(): StatusWriter;
}

/** SubResourceClientConstructor returns a client for a named subresource (`'scale'`, `'eviction'`, …). */
export interface SubResourceClientConstructor {
  subResource(subResource: string): SubResourceClient;
}

/**
 * A client that reads from an informer cache and writes to the API server: the manager's client
 * (controller-runtime's default client). Its reads are {@link Cached} (read-only); its writes take the mutable
 * object types, so a cached object goes through `deepCopy` before `update`.
 */
export interface CachedClient
  extends CacheReader,
    Writer,
    WatchClient,
    StatusClient,
    SubResourceClientConstructor {
  readonly restMapper: RESTMapper;
}

/** Client knows how to read, write and watch objects on one API server (controller-runtime `client.WithWatch`). */
export interface Client extends Reader, Writer, WatchClient, StatusClient, SubResourceClientConstructor {
  readonly restMapper: RESTMapper;
}

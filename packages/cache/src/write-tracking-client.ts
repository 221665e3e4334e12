/**
 * The writing side of read-your-own-writes: a {@link Client} that tells the cache's tracker about each write
 * and the resourceVersion the server returned for it.
 */
import type {
  ApplyConfiguration,
  ApplyOptions,
  Client,
  DeleteAllOfOptions,
  DeleteOptions,
  GetOptions,
  Kind,
  KubeObject,
  ListOptions,
  ObjectKey,
  ObjectList,
  Patch,
  PatchOptions,
  RESTMapper,
  StatusWriter,
  SubResourceClient,
  SubResourceUpdateOptions,
  WatchEvent,
  WatchOptions,
  WriteOptions,
} from '@kubeloop/client';

/** Starts a write of a kind; the returned function gets the object the server returned (nothing: failed). */
export type BeginWrite = (kind: Kind) => (written?: KubeObject) => void;

/**
 * Runs `write`, telling `begin` about it. `isObject` says whether the reply is the object itself (a
 * subresource such as `scale` replies with another object, whose resourceVersion is not one to wait for).
 */
async function tracked<R>(
  begin: BeginWrite,
  kind: Kind,
  write: () => Promise<R>,
  isObject: (r: R) => boolean = () => true,
): Promise<R> {
  const end = begin(kind);
  let written: KubeObject | undefined;
  try {
    const r = await write();
    if (isObject(r)) written = r as KubeObject;
    return r;
  } finally {
    end(written);
  }
}

/** A reply that is an object of `kind` (a subresource write that answers with the object, e.g. `status`). */
function isKindObject(kind: Kind) {
  return (r: unknown): boolean => {
    const k = (r as { kind?: unknown } | undefined)?.kind;
    return k === undefined || k === kind.kind;
  };
}

/**
 * Every call goes to `live`; create, update, patch, apply and writes of the `status` subresource (and of any
 * subresource that answers with the object itself) are reported to `begin`. Deletes are not: they return no
 * resourceVersion here.
 */
export class WriteTrackingClient implements Client {
  readonly #live: Client;
  readonly #begin: BeginWrite;

  constructor(live: Client, begin: BeginWrite) {
    this.#live = live;
    this.#begin = begin;
  }

  get restMapper(): RESTMapper {
    return this.#live.restMapper;
  }
  get<T extends KubeObject>(kind: Kind<T>, key: ObjectKey, options?: GetOptions): Promise<T> {
    return this.#live.get(kind, key, options);
  }
  list<T extends KubeObject>(kind: Kind<T>, options?: ListOptions): Promise<ObjectList<T>> {
    return this.#live.list(kind, options);
  }
  create<T extends KubeObject>(kind: Kind<T>, obj: T, options?: WriteOptions): Promise<T> {
    return tracked(this.#begin, kind, () => this.#live.create(kind, obj, options));
  }
  update<T extends KubeObject>(kind: Kind<T>, obj: T, options?: WriteOptions): Promise<T> {
    return tracked(this.#begin, kind, () => this.#live.update(kind, obj, options));
  }
  patch<T extends KubeObject>(
    kind: Kind<T>,
    key: ObjectKey,
    patch: Patch,
    options?: PatchOptions,
  ): Promise<T> {
    return tracked(this.#begin, kind, () => this.#live.patch(kind, key, patch, options));
  }
  apply<T extends KubeObject>(
    kind: Kind<T>,
    config: ApplyConfiguration<T>,
    options?: ApplyOptions,
  ): Promise<T> {
    return tracked(this.#begin, kind, () => this.#live.apply(kind, config, options));
  }
  delete<T extends KubeObject>(kind: Kind<T>, key: ObjectKey | T, options?: DeleteOptions): Promise<void> {
    return this.#live.delete(kind, key, options);
  }
  deleteAllOf<T extends KubeObject>(kind: Kind<T>, options?: DeleteAllOfOptions): Promise<void> {
    return this.#live.deleteAllOf(kind, options);
  }
  watch<T extends KubeObject>(kind: Kind<T>, options?: WatchOptions): AsyncIterable<WatchEvent<T>> {
    return this.#live.watch(kind, options);
  }
  status(): StatusWriter {
    return this.#subResource(this.#live.status());
  }
  subResource(name: string): SubResourceClient {
    return this.#subResource(this.#live.subResource(name));
  }

  #subResource<W extends StatusWriter | SubResourceClient>(inner: W): W {
    const begin = this.#begin;
    const writer: StatusWriter = {
      create: <T extends KubeObject, S extends object>(
        kind: Kind<T>,
        obj: T,
        sub: S,
        options?: WriteOptions,
      ): Promise<S> => inner.create(kind, obj, sub, options),
      update: <T extends KubeObject, S extends object = T>(
        kind: Kind<T>,
        obj: T,
        options?: SubResourceUpdateOptions<S>,
      ): Promise<S> => tracked(begin, kind, () => inner.update<T, S>(kind, obj, options), isKindObject(kind)),
      patch: <T extends KubeObject, S extends object = T>(
        kind: Kind<T>,
        key: ObjectKey,
        patch: Patch,
        options?: PatchOptions,
      ): Promise<S> =>
        tracked(begin, kind, () => inner.patch<T, S>(kind, key, patch, options), isKindObject(kind)),
      apply: <T extends KubeObject>(
        kind: Kind<T>,
        config: ApplyConfiguration<T>,
        options?: ApplyOptions,
      ): Promise<T> => tracked(begin, kind, () => inner.apply(kind, config, options)),
    };
    if (!('get' in inner)) return writer as W;
    const reader = inner as SubResourceClient;
    return {
      ...writer,
      get: <T extends KubeObject, S extends object = T>(
        kind: Kind<T>,
        key: ObjectKey,
        options?: GetOptions,
      ): Promise<S> => reader.get<T, S>(kind, key, options),
    } as W;
  }
}

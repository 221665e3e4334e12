/**
 * Cached reads, live writes: the client a controller manager hands to reconcilers.
 */
import type { ApplyConfiguration, ApplyOptions } from './apply.js';
import type { DeleteAllOfOptions } from './delete-all-of.js';
import type {
  CachedClient,
  CacheReader,
  Client,
  Reader,
  StatusWriter,
  SubResourceClient,
} from './interfaces.js';
import type { Kind, KubeObject, ObjectKey } from './kinds.js';
import type {
  DeleteOptions,
  GetOptions,
  ListOptions,
  Patch,
  PatchOptions,
  WatchOptions,
  WriteOptions,
} from './options.js';
import type { Cached, CachedList } from './readonly.js';
import type { RESTMapper } from './rest-mapper.js';
import type { WatchEvent } from './watch.js';

/**
 * A {@link CachedClient} whose reads (`get`, `list`) go to `reader` — usually an informer cache — and everything
 * else (writes, `watch`, `status()` and other subresources, the RESTMapper) to `live`, so writes always reach
 * the API server: controller-runtime's manager client (`client.New` with `Options.Cache.Reader`, formerly
 * `client.NewDelegatingClient`). Closing is the owner's business: `live` is not closed through it.
 */
export class DelegatingClient implements CachedClient {
  readonly #reader: CacheReader;
  readonly #live: Client;

  constructor(reader: CacheReader | Reader, live: Client) {
    // a Reader's fresh objects are valid Cached ones (mutable is more than read-only asks)
    this.#reader = reader as CacheReader;
    this.#live = live;
  }

  get restMapper(): RESTMapper {
    return this.#live.restMapper;
  }
  get<T extends KubeObject>(kind: Kind<T>, key: ObjectKey, options?: GetOptions): Promise<Cached<T>> {
    return this.#reader.get(kind, key, options);
  }
  list<T extends KubeObject>(kind: Kind<T>, options?: ListOptions): Promise<CachedList<T>> {
    return this.#reader.list(kind, options);
  }
  create<T extends KubeObject>(kind: Kind<T>, obj: T, options?: WriteOptions): Promise<T> {
    return this.#live.create(kind, obj, options);
  }
  update<T extends KubeObject>(kind: Kind<T>, obj: T, options?: WriteOptions): Promise<T> {
    return this.#live.update(kind, obj, options);
  }
  patch<T extends KubeObject>(
    kind: Kind<T>,
    key: ObjectKey,
    patch: Patch,
    options?: PatchOptions,
  ): Promise<T> {
    return this.#live.patch(kind, key, patch, options);
  }
  delete<T extends KubeObject>(kind: Kind<T>, key: ObjectKey | T, options?: DeleteOptions): Promise<void> {
    return this.#live.delete(kind, key, options);
  }
  deleteAllOf<T extends KubeObject>(kind: Kind<T>, options?: DeleteAllOfOptions): Promise<void> {
    return this.#live.deleteAllOf(kind, options);
  }
  apply<T extends KubeObject>(
    kind: Kind<T>,
    config: ApplyConfiguration<T>,
    options?: ApplyOptions,
  ): Promise<T> {
    return this.#live.apply(kind, config, options);
  }
  watch<T extends KubeObject>(kind: Kind<T>, options?: WatchOptions): AsyncIterable<WatchEvent<T>> {
    return this.#live.watch(kind, options);
  }
  status(): StatusWriter {
    return this.#live.status();
  }
  subResource(name: string): SubResourceClient {
    return this.#live.subResource(name);
  }
}

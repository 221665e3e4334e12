import type {
  ApiClient,
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
  Reader,
  StatusWriter,
  SubResourceClient,
  WatchEvent,
  WatchOptions,
  WriteOptions,
} from '@kubeloop/client';

/** Cached reads, live writes: controller-runtime's default manager client (`client.New` with `Cache.Reader`). */
export class DelegatingClient implements Client {
  constructor(
    private readonly reader: Reader,
    private readonly live: ApiClient,
  ) {}
  get restMapper(): RESTMapper {
    return this.live.restMapper;
  }
  get<T extends KubeObject>(kind: Kind<T>, key: ObjectKey, options?: GetOptions): Promise<T> {
    return this.reader.get(kind, key, options);
  }
  list<T extends KubeObject>(kind: Kind<T>, options?: ListOptions): Promise<ObjectList<T>> {
    return this.reader.list(kind, options);
  }
  create<T extends KubeObject>(kind: Kind<T>, obj: T, options?: WriteOptions): Promise<T> {
    return this.live.create(kind, obj, options);
  }
  update<T extends KubeObject>(kind: Kind<T>, obj: T, options?: WriteOptions): Promise<T> {
    return this.live.update(kind, obj, options);
  }
  patch<T extends KubeObject>(
    kind: Kind<T>,
    key: ObjectKey,
    patch: Patch,
    options?: PatchOptions,
  ): Promise<T> {
    return this.live.patch(kind, key, patch, options);
  }
  delete<T extends KubeObject>(kind: Kind<T>, key: ObjectKey | T, options?: DeleteOptions): Promise<void> {
    return this.live.delete(kind, key, options);
  }
  watch<T extends KubeObject>(kind: Kind<T>, options?: WatchOptions): AsyncIterable<WatchEvent<T>> {
    return this.live.watch(kind, options);
  }
  deleteAllOf<T extends KubeObject>(kind: Kind<T>, options?: DeleteAllOfOptions): Promise<void> {
    return this.live.deleteAllOf(kind, options);
  }
  apply<T extends KubeObject>(
    kind: Kind<T>,
    config: ApplyConfiguration<T>,
    options?: ApplyOptions,
  ): Promise<T> {
    return this.live.apply(kind, config, options);
  }
  status(): StatusWriter {
    return this.live.status();
  }
  subResource(name: string): SubResourceClient {
    return this.live.subResource(name);
  }
}

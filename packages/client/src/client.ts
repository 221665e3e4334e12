import { type ApplyConfiguration, type ApplyOptions, applyBody } from './apply.js';
import type { ClientOptions } from './client-options.js';
import { type DeleteAllOfOptions, deleteAllOf } from './delete-all-of.js';
import { DynamicRESTMapper } from './dynamic-rest-mapper.js';
import {
  InvalidRequestError,
  isUnsupportedMediaType,
  StatusError,
  UnsupportedPatchTypeError,
} from './errors.js';
import type { HttpRequest, HttpTransport } from './http.js';
import type { Client, StatusWriter, SubResourceClient } from './interfaces.js';
import type { ClientInternals } from './internal/client-internals.js';
import { jsonBody } from './internal/json-body.js';
import { mappingForRequest, objectNamespaceUse } from './internal/request-mapping.js';
import { deleteBody, listQuery } from './internal/request-params.js';
import {
  gvkOf,
  gvkString,
  isMetadataOnly,
  type Kind,
  type KubeObject,
  type ObjectKey,
  type ObjectList,
  objectKeyFromObject,
} from './kinds.js';
import { metadataAccept, PARTIAL_OBJECT_METADATA_ACCEPT, refuseMetadataOnly } from './metadata-only.js';
import type {
  DeleteOptions,
  GetOptions,
  ListOptions,
  Patch,
  PatchOptions,
  WatchOptions,
  WriteOptions,
} from './options.js';
import { type ListPage, type ListPagesOptions, listAll, listPages } from './pager.js';
import { preparePatch } from './patch-request.js';
import { collectionPath, objectPath, withQuery } from './paths.js';
import { asListReply, asObjectReply, readJsonListReply, readJsonReply, withTypeMeta } from './replies.js';
import { isResourceNotFound, type RESTMapper, type RESTMapping } from './rest-mapper.js';
import { ApiSubResourceClient } from './sub-resource.js';
import { checkMaxEventBytes, type WatchEvent } from './watch.js';
import { watchRequest } from './watch-request.js';

export type { ClientOptions } from './client-options.js';

/**
 * The live client: every call is an HTTP request to the API server (controller-runtime's `client.New`
 * without a cache). Kinds are resolved to resources through the RESTMapper.
 */
export class ApiClient implements Client {
  readonly restMapper: RESTMapper;
  readonly #transport: HttpTransport;
  readonly #fieldOwner: string | undefined;
  readonly #maxWatchEventBytes: number;
  readonly #streamLists: boolean;
  readonly #internals: ClientInternals;

  constructor(options: ClientOptions) {
    this.#transport = options.transport;
    this.restMapper = options.restMapper ?? new DynamicRESTMapper(options.transport);
    this.#fieldOwner = options.fieldOwner;
    this.#maxWatchEventBytes = checkMaxEventBytes(options.maxWatchEventBytes);
    if (
      options.listDecoding !== undefined &&
      options.listDecoding !== 'stream' &&
      options.listDecoding !== 'whole'
    )
      throw new InvalidRequestError(
        `listDecoding: must be 'stream' or 'whole', got ${JSON.stringify(options.listDecoding)}`,
      );
    this.#streamLists = options.listDecoding !== 'whole';
    this.#internals = {
      request: (kind, use, build) =>
        this.#fresh(kind, async () => this.#send(build(await mappingForRequest(this.restMapper, kind, use)))),
      writeQuery: (o) => this.#writeQuery(o),
    };
  }

  /**
   * Runs `fn` (which resolves the kind's mapping and sends); when the answer is a 404 for the resource, not
   * for an object — the kind's group version or the kind in it is gone (CRD deleted, version no longer
   * served) — tells the RESTMapper to forget that group version and runs `fn` once more, so the request is
   * sent with a fresh mapping or fails with a NoKindMatchError naming what is served (cases C31, C32).
   */
  async #fresh<R>(kind: Kind, fn: () => Promise<R>): Promise<R> {
    try {
      return await fn();
    } catch (err) {
      if (!isResourceNotFound(err) || !this.restMapper.invalidate) throw err;
      this.restMapper.invalidate(gvkOf(kind));
      return fn();
    }
  }

  /**
   * Closes the transport: requests in flight finish first, unless `force` (a shutdown past its grace
   * period), which destroys the connections at once and fails them.
   */
  close(options?: { force?: boolean }): Promise<void> {
    return this.#transport.close(options);
  }

  /** The path of one object, its mapping resolved for the key (a cached scope is checked first). */
  async #objectPath(kind: Kind, key: ObjectKey): Promise<{ path: string; mapping: RESTMapping }> {
    const mapping = await mappingForRequest(this.restMapper, kind, objectNamespaceUse(kind, key));
    return { path: objectPath(mapping, key), mapping };
  }

  async #send<R>(req: HttpRequest): Promise<R> {
    const res = await this.#transport.request({
      ...req,
      headers: { accept: 'application/json', ...req.headers },
    });
    return (await readJsonReply(res, `${req.method} ${req.path.split('?')[0]}`)) as R;
  }

  /**
   * {@link #send} for a reply that must be one object (get, create, update, patch): anything else — an empty
   * body, an array, a number, a string, null — is a broken reply, not an object (client-go fails to decode it
   * into the kind's struct). @throws UnexpectedResponseError naming the request and what came back.
   */
  async #sendObject<T>(req: HttpRequest): Promise<T> {
    return asObjectReply(await this.#send<unknown>(req), `${req.method} ${req.path.split('?')[0]}`) as T;
  }

  #writeQuery(options: WriteOptions | undefined): URLSearchParams {
    const q = new URLSearchParams();
    if (options?.dryRun) q.set('dryRun', 'All');
    const fm = options?.fieldManager ?? this.#fieldOwner;
    if (fm) q.set('fieldManager', fm);
    return q;
  }

  get<T extends KubeObject>(kind: Kind<T>, key: ObjectKey, options?: GetOptions): Promise<T> {
    return this.#fresh(kind, () => this.#get(kind, key, options));
  }

  list<T extends KubeObject>(kind: Kind<T>, options?: ListOptions): Promise<ObjectList<T>> {
    return this.#fresh(kind, () => this.#list(kind, options));
  }

  create<T extends KubeObject>(kind: Kind<T>, obj: T, options?: WriteOptions): Promise<T> {
    return this.#fresh(kind, () => this.#create(kind, obj, options));
  }

  update<T extends KubeObject>(kind: Kind<T>, obj: T, options?: WriteOptions): Promise<T> {
    return this.#fresh(kind, () => this.#update(kind, obj, options));
  }

  patch<T extends KubeObject>(
    kind: Kind<T>,
    key: ObjectKey,
    patch: Patch,
    options?: PatchOptions,
  ): Promise<T> {
    return this.#fresh(kind, () => this.#patch(kind, key, patch, options));
  }

  delete<T extends KubeObject>(
    kind: Kind<T>,
    keyOrObj: ObjectKey | T,
    options?: DeleteOptions,
  ): Promise<void> {
    return this.#fresh(kind, () => this.#delete(kind, keyOrObj, options));
  }

  /**
   * Deletes every object of a kind that matches the selectors, in one request (the `deletecollection` verb,
   * controller-runtime `DeleteAllOf`). Objects with finalizers are marked for deletion, as by `delete`.
   * @throws InvalidRequestError for a namespaced kind without `namespace` (before sending: kube-apiserver has
   *   no cross-namespace deletecollection), StatusError, NoKindMatchError.
   */
  async deleteAllOf<T extends KubeObject>(kind: Kind<T>, options?: DeleteAllOfOptions): Promise<void> {
    await deleteAllOf(this.#internals, kind, options);
  }

  /**
   * Server-side apply of an apply configuration (controller-runtime `Client.Apply`): a PATCH with
   * `application/apply-patch+yaml`, whose body carries only the fields the caller set — `undefined`/`null`
   * values and objects made only of them are left out, and so are `status` and server-set metadata
   * (`managedFields`, `creationTimestamp`, …). Afterwards the field manager owns exactly the fields in the
   * body (and no longer owns fields it applied before and left out now: the server removes those unless
   * another manager owns them). Applying unchanged intent is a no-op at the server (resourceVersion unchanged).
   * @throws InvalidRequestError (no field manager, no `metadata.name`), StatusError (409 Conflict naming the
   *   other manager's fields unless `force`; 422 Invalid).
   */
  async apply<T extends KubeObject>(
    kind: Kind<T>,
    config: ApplyConfiguration<T>,
    options?: ApplyOptions,
  ): Promise<T> {
    const body = applyBody(kind, config, 'object');
    return this.patch(kind, objectKeyFromObject(body), { type: 'apply', data: body }, options);
  }

  /**
   * The writer of the `status` subresource (controller-runtime `Client.Status()`): `update` (PUT), `patch`
   * and `apply` on `<object>/status`. The server takes only `.status` from these writes; spec and metadata
   * stay as stored.
   */
  status(): StatusWriter {
    return new ApiSubResourceClient(this.#internals, 'status');
  }

  /**
   * A client for the named subresource (controller-runtime `Client.SubResource(name)`): `scale` (get,
   * update with a `Scale` body, patch), `eviction` and `token` (create), `status`.
   * @throws InvalidRequestError for an empty name, `.`, `..` or one containing `/` or `%` (client-go `IsValidPathSegmentName`).
   */
  subResource(name: string): SubResourceClient {
    return new ApiSubResourceClient(this.#internals, name);
  }

  /**
   * The pages of a list, following `continue` (client-go `tools/pager`): one request per `pageSize`
   * objects (default 500); an expired continue token (410) is answered by one full list, the last page,
   * marked `restarted: true` — the pages before it belong to an abandoned snapshot (see `ListPage`).
   */
  listPages<T extends KubeObject>(kind: Kind<T>, options?: ListPagesOptions): AsyncIterable<ListPage<T>> {
    return listPages(this, kind, options);
  }

  /**
   * Every object of one consistent snapshot of a list, read page by page and yielded once the last page has
   * arrived (client-go `ListPager.List`): `for await (const pod of client.listAll(Pod, { namespace }))`.
   */
  listAll<T extends KubeObject>(kind: Kind<T>, options?: ListPagesOptions): AsyncIterable<T> {
    return listAll(this, kind, options);
  }

  async #get<T extends KubeObject>(kind: Kind<T>, key: ObjectKey, options?: GetOptions): Promise<T> {
    const { path } = await this.#objectPath(kind, key);
    const q = new URLSearchParams();
    if (options?.resourceVersion !== undefined) q.set('resourceVersion', options.resourceVersion);
    return withTypeMeta(
      kind,
      await this.#sendObject<T>({
        method: 'GET',
        path: withQuery(path, q),
        signal: options?.signal,
        ...metadataAccept(kind, false),
      }),
    );
  }

  async #list<T extends KubeObject>(kind: Kind<T>, options: ListOptions = {}): Promise<ObjectList<T>> {
    const mapping = await mappingForRequest(this.restMapper, kind, { namespace: options.namespace });
    const q = listQuery(kind, options);
    const path = withQuery(collectionPath(mapping, options.namespace), q);
    const what = `GET ${path.split('?')[0]}`;
    const req = metadataAccept(kind, true);
    const res = await this.#transport.request({
      method: 'GET',
      path,
      signal: options.signal,
      ...req,
      headers: { accept: 'application/json', ...req.headers },
    });
    // a caller's item decoder gets the item's own text; a metadata-only kind's items are rebuilt from the parse
    const decodeItem = isMetadataOnly(kind) ? undefined : options.decodeItem;
    const reply = this.#streamLists
      ? await readJsonListReply(res, what, decodeItem)
      : await readJsonReply(res, what);
    return asListReply(kind, reply, what);
  }

  async #create<T extends KubeObject>(kind: Kind<T>, obj: T, options?: WriteOptions): Promise<T> {
    refuseMetadataOnly(kind, 'create');
    const ns = obj.metadata?.namespace;
    const mapping = await mappingForRequest(this.restMapper, kind, {
      namespace: ns,
      required: `${kind.kind}: metadata.namespace is required to create a namespaced object`,
    });
    const path = withQuery(collectionPath(mapping, ns), this.#writeQuery(options));
    const body = jsonBody({ ...obj, apiVersion: kind.apiVersion, kind: kind.kind });
    return withTypeMeta(
      kind,
      await this.#sendObject<T>({
        method: 'POST',
        path,
        body,
        headers: { 'content-type': 'application/json' },
        signal: options?.signal,
      }),
    );
  }

  async #update<T extends KubeObject>(kind: Kind<T>, obj: T, options?: WriteOptions): Promise<T> {
    refuseMetadataOnly(kind, 'update');
    const key = { namespace: obj.metadata?.namespace, name: obj.metadata?.name ?? '' };
    const { path } = await this.#objectPath(kind, key);
    const body = jsonBody({ ...obj, apiVersion: kind.apiVersion, kind: kind.kind });
    return withTypeMeta(
      kind,
      await this.#sendObject<T>({
        method: 'PUT',
        path: withQuery(path, this.#writeQuery(options)),
        body,
        headers: { 'content-type': 'application/json' },
        signal: options?.signal,
      }),
    );
  }

  async #patch<T extends KubeObject>(
    kind: Kind<T>,
    key: ObjectKey,
    patch: Patch,
    options?: PatchOptions,
  ): Promise<T> {
    const q = this.#writeQuery(options);
    const contentType = preparePatch(patch, q, options);
    const { path } = await this.#objectPath(kind, key);
    try {
      return withTypeMeta(
        kind,
        await this.#sendObject<T>({
          method: 'PATCH',
          path: withQuery(path, q),
          body: jsonBody(patch.data),
          headers: {
            'content-type': contentType,
            ...(isMetadataOnly(kind) ? { accept: PARTIAL_OBJECT_METADATA_ACCEPT } : {}),
          },
          signal: options?.signal,
        }),
      );
    } catch (err) {
      // A custom resource has no strategic-merge metadata: the server answers 415. Say what to use instead.
      if (patch.type === 'strategic' && err instanceof StatusError && isUnsupportedMediaType(err))
        throw new UnsupportedPatchTypeError(err.status, patch.type, gvkString(gvkOf(kind)));
      throw err;
    }
  }

  async #delete<T extends KubeObject>(
    kind: Kind<T>,
    keyOrObj: ObjectKey | T,
    options?: DeleteOptions,
  ): Promise<void> {
    const key: ObjectKey =
      'metadata' in keyOrObj && keyOrObj.metadata
        ? { namespace: keyOrObj.metadata.namespace, name: keyOrObj.metadata.name ?? '' }
        : (keyOrObj as ObjectKey);
    const { path } = await this.#objectPath(kind, key);
    const body = deleteBody(options);
    await this.#send<unknown>({
      method: 'DELETE',
      path,
      signal: options?.signal,
      ...(body ? { body: jsonBody(body), headers: { 'content-type': 'application/json' } } : {}),
    });
  }

  watch<T extends KubeObject>(kind: Kind<T>, options: WatchOptions = {}): AsyncIterable<WatchEvent<T>> {
    return {
      [Symbol.asyncIterator]: () =>
        watchRequest(
          {
            transport: this.#transport,
            restMapper: this.restMapper,
            maxEventBytes: this.#maxWatchEventBytes,
          },
          kind,
          options,
        ),
    };
  }
}

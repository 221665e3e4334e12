import type { RestConfig } from '@kubeloop/config';
import { type ApplyConfiguration, type ApplyOptions, applyBody } from './apply.js';
import { type DeleteAllOfOptions, deleteAllOf } from './delete-all-of.js';
import { DynamicRESTMapper } from './dynamic-rest-mapper.js';
import {
  InvalidRequestError,
  isUnsupportedMediaType,
  StatusError,
  statusErrorFromResponse,
  UnexpectedResponseError,
  UnsupportedPatchTypeError,
} from './errors.js';
import { formatFieldSelector } from './field-selector.js';
import type { HttpRequest, HttpTransport } from './http.js';
import type { Client, StatusWriter, SubResourceClient } from './interfaces.js';
import type { ClientInternals } from './internal/client-internals.js';
import { describeJson, isJsonObject } from './internal/json-shape.js';
import { mappingForRequest, objectNamespaceUse } from './internal/request-mapping.js';
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
import { formatLabelSelector } from './label-selector.js';
import {
  PARTIAL_OBJECT_METADATA_ACCEPT,
  PARTIAL_OBJECT_METADATA_LIST_ACCEPT,
  toPartialObjectMetadata,
} from './metadata-only.js';
import {
  type DeleteOptions,
  type GetOptions,
  type ListOptions,
  PATCH_CONTENT_TYPES,
  type Patch,
  type PatchOptions,
  type WatchOptions,
  type WriteOptions,
} from './options.js';
import { type ListPage, type ListPagesOptions, listAll, listPages } from './pager.js';
import { collectionPath, objectPath, withQuery } from './paths.js';
import { isResourceNotFound, type RESTMapper, type RESTMapping } from './rest-mapper.js';
import { ApiSubResourceClient } from './sub-resource.js';
import { Transport, type TransportOptions } from './transport/index.js';
import {
  checkMaxEventBytes,
  type DEFAULT_MAX_WATCH_EVENT_BYTES,
  decodeWatchStream,
  type WatchEvent,
} from './watch.js';

/** Options for {@link ApiClient}. */
export interface ClientOptions {
  /** The transport to the API server (usually `new Transport(config)`). Closed by `close()`. */
  readonly transport: HttpTransport;
  /** @defaultValue a {@link DynamicRESTMapper} over the same transport. */
  readonly restMapper?: RESTMapper;
  /** Default `fieldManager` for writes (controller-runtime `client.WithFieldOwner`). */
  readonly fieldOwner?: string;
  /**
   * Bound on one watch event (one line of the stream), in bytes; a longer one ends the watch with a
   * `WatchEventTooLargeError`. @defaultValue 16 MiB ({@link DEFAULT_MAX_WATCH_EVENT_BYTES}, apimachinery's
   * streaming decoder limit)
   */
  readonly maxWatchEventBytes?: number;
}

/**
 * The live client: every call is an HTTP request to the API server (controller-runtime's `client.New`
 * without a cache). Kinds are resolved to resources through the RESTMapper.
 */
export class ApiClient implements Client {
  readonly restMapper: RESTMapper;
  readonly #transport: HttpTransport;
  readonly #fieldOwner: string | undefined;
  readonly #maxWatchEventBytes: number;
  readonly #internals: ClientInternals;

  constructor(options: ClientOptions) {
    this.#transport = options.transport;
    this.restMapper = options.restMapper ?? new DynamicRESTMapper(options.transport);
    this.#fieldOwner = options.fieldOwner;
    this.#maxWatchEventBytes = checkMaxEventBytes(options.maxWatchEventBytes);
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
    const text = await res.body.text();
    if (res.status < 200 || res.status >= 300) {
      throw statusErrorFromResponse(res.status, text, `${req.method} ${req.path.split('?')[0]}`);
    }
    if (text === '') return undefined as R;
    try {
      return JSON.parse(text) as R;
    } catch {
      throw new UnexpectedResponseError(`${req.method} ${req.path.split('?')[0]}: the reply is not JSON`);
    }
  }

  /**
   * {@link #send} for a reply that must be one object (get, create, update, patch): anything else — an empty
   * body, an array, a number, a string, null — is a broken reply, not an object (client-go fails to decode it
   * into the kind's struct). @throws UnexpectedResponseError naming the request and what came back.
   */
  async #sendObject<T>(req: HttpRequest): Promise<T> {
    const reply = await this.#send<unknown>(req);
    if (!isJsonObject(reply))
      throw new UnexpectedResponseError(
        `${req.method} ${req.path.split('?')[0]}: the reply is ${describeJson(reply)}, not an object`,
      );
    return reply as T;
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
   * @throws InvalidRequestError for an empty name or one containing `/`.
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
    const q = new URLSearchParams();
    const ls = formatLabelSelector(options.labelSelector);
    if (ls) q.set('labelSelector', ls);
    const fs = formatFieldSelector(options.fieldSelector);
    if (fs) q.set('fieldSelector', fs);
    if (options.limit !== undefined) {
      // 0 means "no limit" on the wire (apimachinery); anything else that is not a whole number is a mistake.
      if (!Number.isSafeInteger(options.limit) || options.limit < 0)
        throw new InvalidRequestError(
          `list ${kind.kind}: limit must be a whole number >= 0 (0 = unpaged), got ${options.limit}`,
        );
      if (options.limit > 0) q.set('limit', String(options.limit));
    }
    if (options.continue) q.set('continue', options.continue);
    if (options.resourceVersion !== undefined) q.set('resourceVersion', options.resourceVersion);
    if (options.resourceVersionMatch) q.set('resourceVersionMatch', options.resourceVersionMatch);
    const path = withQuery(collectionPath(mapping, options.namespace), q);
    const list = await this.#send<ObjectList<T>>({
      method: 'GET',
      path,
      signal: options.signal,
      ...metadataAccept(kind, true),
    });
    if (!list || typeof list !== 'object' || Array.isArray(list))
      throw new UnexpectedResponseError(
        `GET ${path.split('?')[0]}: the reply is not a list (empty or not an object)`,
      );
    // A list always carries `items` (null when empty: apimachinery has no omitempty on it). A 2xx whose body
    // lacks it — a Status, a proxy's JSON — must not read as "no objects": an informer would delete its cache.
    if (!('items' in list) || (list as { kind?: unknown }).kind === 'Status')
      throw new UnexpectedResponseError(
        `GET ${path.split('?')[0]}: the reply is not a list (kind ${JSON.stringify((list as { kind?: unknown }).kind ?? null)}, no items)`,
      );
    if (list.items === null) list.items = [];
    if (!Array.isArray(list.items))
      throw new UnexpectedResponseError(
        `GET ${path.split('?')[0]}: items is ${describeJson(list.items)}, not an array`,
      );
    // Every item must be an object: client-go fails to decode a list whose item does not unmarshal into the
    // kind's struct. `[1, "x", null]` must not reach a cache or a handler as objects.
    for (let i = 0; i < list.items.length; i++) {
      const item: unknown = list.items[i];
      if (!isJsonObject(item))
        throw new UnexpectedResponseError(
          `GET ${path.split('?')[0]}: items[${i}] is ${describeJson(item)}, not an object`,
        );
    }
    list.metadata ??= {};
    if (isMetadataOnly(kind)) list.items = list.items.map((item) => withTypeMeta(kind, item));
    else for (const item of list.items) withTypeMeta(kind, item);
    return list;
  }

  async #create<T extends KubeObject>(kind: Kind<T>, obj: T, options?: WriteOptions): Promise<T> {
    refuseMetadataOnly(kind, 'create');
    const ns = obj.metadata?.namespace;
    const mapping = await mappingForRequest(this.restMapper, kind, {
      namespace: ns,
      required: `${kind.kind}: metadata.namespace is required to create a namespaced object`,
    });
    const path = withQuery(collectionPath(mapping, ns), this.#writeQuery(options));
    const body = JSON.stringify({ ...obj, apiVersion: kind.apiVersion, kind: kind.kind });
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
    const body = JSON.stringify({ ...obj, apiVersion: kind.apiVersion, kind: kind.kind });
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
    const contentType = PATCH_CONTENT_TYPES[patch.type];
    if (!contentType) throw new InvalidRequestError(`unknown patch type ${JSON.stringify(patch.type)}`);
    const q = this.#writeQuery(options);
    if (patch.type === 'apply' && !q.get('fieldManager')) {
      throw new InvalidRequestError(
        'server-side apply needs a field manager (options.fieldManager or the client fieldOwner)',
      );
    }
    if (options?.force) {
      if (patch.type !== 'apply') throw new InvalidRequestError('force is only valid for server-side apply');
      q.set('force', 'true');
    }
    const { path } = await this.#objectPath(kind, key);
    try {
      return withTypeMeta(
        kind,
        await this.#sendObject<T>({
          method: 'PATCH',
          path: withQuery(path, q),
          body: JSON.stringify(patch.data),
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
    const body: Record<string, unknown> = {};
    if (options?.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = options.gracePeriodSeconds;
    if (options?.propagationPolicy) body.propagationPolicy = options.propagationPolicy;
    if (options?.preconditions) body.preconditions = options.preconditions;
    if (options?.dryRun) body.dryRun = ['All'];
    const hasBody = Object.keys(body).length > 0;
    await this.#send<unknown>({
      method: 'DELETE',
      path,
      signal: options?.signal,
      ...(hasBody ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}),
    });
  }

  watch<T extends KubeObject>(kind: Kind<T>, options: WatchOptions = {}): AsyncIterable<WatchEvent<T>> {
    return {
      [Symbol.asyncIterator]: () => this.#watch(kind, options, true),
    };
  }

  async *#watch<T extends KubeObject>(
    kind: Kind<T>,
    options: WatchOptions,
    retryStale: boolean,
  ): AsyncGenerator<WatchEvent<T>, void, undefined> {
    const mapping = await mappingForRequest(this.restMapper, kind, { namespace: options.namespace });
    const q = new URLSearchParams();
    q.set('watch', 'true');
    const ls = formatLabelSelector(options.labelSelector);
    if (ls) q.set('labelSelector', ls);
    const fs = formatFieldSelector(options.fieldSelector);
    if (fs) q.set('fieldSelector', fs);
    if (options.resourceVersion !== undefined) q.set('resourceVersion', options.resourceVersion);
    if (options.allowWatchBookmarks) q.set('allowWatchBookmarks', 'true');
    if (options.timeoutSeconds !== undefined)
      q.set('timeoutSeconds', String(Math.floor(options.timeoutSeconds)));
    if (options.sendInitialEvents !== undefined)
      q.set('sendInitialEvents', String(options.sendInitialEvents));
    if (options.resourceVersionMatch) q.set('resourceVersionMatch', options.resourceVersionMatch);
    const path = withQuery(collectionPath(mapping, options.namespace), q);
    const signal = options.signal;
    if (signal?.aborted) return;
    let res: Awaited<ReturnType<HttpTransport['request']>>;
    try {
      res = await this.#transport.request({
        method: 'GET',
        path,
        headers: { accept: isMetadataOnly(kind) ? PARTIAL_OBJECT_METADATA_ACCEPT : 'application/json' },
        stream: true,
        ...(signal ? { signal } : {}),
      });
    } catch (err) {
      if (signal?.aborted) return;
      throw err;
    }
    if (res.status < 200 || res.status >= 300) {
      const text = await res.body.text().catch(() => '');
      const err = statusErrorFromResponse(res.status, text, `GET ${path.split('?')[0]} (watch)`);
      // A 404 for the resource: forget the group version and open the watch once more with a fresh mapping.
      if (retryStale && isResourceNotFound(err) && this.restMapper.invalidate) {
        this.restMapper.invalidate(gvkOf(kind));
        yield* this.#watch(kind, options, false);
        return;
      }
      throw err;
    }
    try {
      const maxEventBytes = options.maxEventBytes ?? this.#maxWatchEventBytes;
      for await (const ev of decodeWatchStream<T>(res.body, { maxEventBytes })) {
        if (ev.type !== 'ERROR' && ev.type !== 'BOOKMARK') {
          if (isMetadataOnly(kind)) {
            yield { type: ev.type, object: withTypeMeta(kind, ev.object) };
            continue;
          }
          withTypeMeta(kind, ev.object);
        }
        yield ev;
      }
    } catch (err) {
      if (signal?.aborted) return;
      throw err;
    } finally {
      try {
        res.body.destroy?.();
      } catch {
        // already closed
      }
    }
  }
}

/** The Accept header of a metadata-only read (nothing for other kinds). */
function metadataAccept(kind: Kind, list: boolean): { headers?: Record<string, string> } {
  if (!isMetadataOnly(kind)) return {};
  return { headers: { accept: list ? PARTIAL_OBJECT_METADATA_LIST_ACCEPT : PARTIAL_OBJECT_METADATA_ACCEPT } };
}

/** controller-runtime refuses create/update of metadata-only objects: there is no whole object to send. */
function refuseMetadataOnly(kind: Kind, verb: 'create' | 'update'): void {
  if (isMetadataOnly(kind))
    throw new InvalidRequestError(
      `${kind.kind}: cannot ${verb} a metadata-only object (PartialObjectMetadata); did you mean to patch?`,
    );
}

/**
 * Fills `apiVersion`/`kind` when the server left them out (list items on real servers do). For a
 * metadata-only kind, returns a new object with only `apiVersion`/`kind` of the kind and `metadata`.
 */
function withTypeMeta<T extends KubeObject>(kind: Kind<T>, obj: T): T {
  if (isMetadataOnly(kind) && obj && typeof obj === 'object') return toPartialObjectMetadata(kind, obj) as T;
  if (obj && typeof obj === 'object' && !Object.isFrozen(obj)) {
    if (!obj.apiVersion) obj.apiVersion = kind.apiVersion;
    if (!obj.kind) obj.kind = kind.kind;
  }
  return obj;
}

/** Turns a watch ERROR event's Status into the error it stands for. */
export function errorFromWatchStatus(status: WatchEvent & { type: 'ERROR' }): StatusError {
  return new StatusError(status.object);
}

/** Options of {@link newClient}. */
export interface NewClientOptions {
  /** Transport options (rate limiter, retries, credentials). */
  readonly transport?: TransportOptions;
  readonly restMapper?: RESTMapper;
  readonly fieldOwner?: string;
  /** Bound on one watch event, in bytes (see {@link ClientOptions.maxWatchEventBytes}). @defaultValue 16 MiB */
  readonly maxWatchEventBytes?: number;
}

/**
 * A live client for `config`: one pooled {@link Transport} (throttling, retries, credential refresh) and a
 * lazy {@link DynamicRESTMapper} (controller-runtime `client.New(config, options)`). Call `close()` when done.
 */
export function newClient(config: RestConfig, options: NewClientOptions = {}): ApiClient {
  const transport = new Transport(config, options.transport);
  return new ApiClient({
    transport,
    ...(options.restMapper ? { restMapper: options.restMapper } : {}),
    ...(options.fieldOwner ? { fieldOwner: options.fieldOwner } : {}),
    ...(options.maxWatchEventBytes !== undefined ? { maxWatchEventBytes: options.maxWatchEventBytes } : {}),
  });
}

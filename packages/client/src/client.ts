import type { RestConfig } from '@kubeloop/config';
import {
  isUnsupportedMediaType,
  StatusError,
  statusErrorFromResponse,
  UnexpectedResponseError,
  UnsupportedPatchTypeError,
} from './errors.js';
import type { HttpRequest, HttpTransport } from './http.js';
import { gvkOf, gvkString, type Kind, type KubeObject, type ObjectKey, type ObjectList } from './kinds.js';
import {
  type FieldSelectorInput,
  formatFieldSelector,
  formatLabelSelector,
  type LabelSelectorInput,
} from './label-selector.js';
import { DynamicRESTMapper, type RESTMapper, type RESTMapping } from './rest-mapper.js';
import { Transport, type TransportOptions } from './transport/index.js';
import { decodeWatchStream, type WatchEvent } from './watch.js';

/** Options every call takes. */
export interface CallOptions {
  /** Aborts the request (and, for a watch, ends the stream). */
  readonly signal?: AbortSignal;
}

/** Options for `get`. */
export interface GetOptions extends CallOptions {
  /** `resourceVersion` query: `'0'` allows a cached answer. */
  readonly resourceVersion?: string;
}

/** Options for `list` (controller-runtime `ListOptions`, as one object). */
export interface ListOptions extends CallOptions {
  /** List in this namespace; absent or `''`: all namespaces (or a cluster-scoped kind). */
  readonly namespace?: string;
  readonly labelSelector?: LabelSelectorInput;
  readonly fieldSelector?: FieldSelectorInput;
  /** Page size; the server returns `metadata.continue` when more remain. */
  readonly limit?: number;
  /** The `metadata.continue` token of the previous page. */
  readonly continue?: string;
  /** `''` most recent (quorum read), `'0'` any (cache), `'N'` not older than N. */
  readonly resourceVersion?: string;
  readonly resourceVersionMatch?: 'NotOlderThan' | 'Exact';
}

/** Options for `watch`. */
export interface WatchOptions extends CallOptions {
  readonly namespace?: string;
  readonly labelSelector?: LabelSelectorInput;
  readonly fieldSelector?: FieldSelectorInput;
  /** Start after this resourceVersion; `''`/`'0'`/absent: synthetic ADDED events for current state first. */
  readonly resourceVersion?: string;
  /** Ask for BOOKMARK events. @defaultValue false */
  readonly allowWatchBookmarks?: boolean;
  /** Server-side watch timeout, in seconds. */
  readonly timeoutSeconds?: number;
  /** Streaming list (KEP-3157): initial state as ADDED events, then a bookmark marking their end. */
  readonly sendInitialEvents?: boolean;
  readonly resourceVersionMatch?: 'NotOlderThan';
}

/** Options for writes. */
export interface WriteOptions extends CallOptions {
  /** `dryRun=All`: validate, do not persist. */
  readonly dryRun?: boolean;
  /** `fieldManager` query; falls back to the client's `fieldOwner`. */
  readonly fieldManager?: string;
}

/** Options for `delete` (DeleteOptions body). */
export interface DeleteOptions extends CallOptions {
  /** Grace period, in seconds. */
  readonly gracePeriodSeconds?: number;
  readonly propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  readonly preconditions?: { readonly uid?: string; readonly resourceVersion?: string };
  readonly dryRun?: boolean;
}

/**
 * A patch: `merge` (RFC 7386), `json` (RFC 6902 operations), `strategic` (built-in kinds only) or
 * `apply` (server-side apply; needs a field manager). `data` is serialised as JSON.
 */
export interface Patch {
  readonly type: 'merge' | 'json' | 'strategic' | 'apply';
  readonly data: unknown;
}

/** Options for `patch`. */
export interface PatchOptions extends WriteOptions {
  /** Server-side apply only: take ownership of conflicting fields. */
  readonly force?: boolean;
}

/** Content-Type per patch type (what the API server requires; it answers 415 otherwise). */
export const PATCH_CONTENT_TYPES: Readonly<Record<Patch['type'], string>> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
};

/** Thrown before sending a request that cannot be valid (e.g. apply without a field manager). Code `'ERR_INVALID_REQUEST'`. */
export class InvalidRequestError extends Error {
  readonly code = 'ERR_INVALID_REQUEST' as const;
  override readonly name = 'InvalidRequestError';
}

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

/** Writer knows how to create, update, patch and delete objects. Writes always go to the API server. */
export interface Writer {
  /** Creates `obj`; resolves to the object the server stored. @throws StatusError (`isAlreadyExists`). */
  create<T extends KubeObject>(kind: Kind<T>, obj: T, options?: WriteOptions): Promise<T>;
  /** Replaces `obj` (PUT); its `resourceVersion` is a precondition. @throws StatusError (`isConflict`). */
  update<T extends KubeObject>(kind: Kind<T>, obj: T, options?: WriteOptions): Promise<T>;
  /**
   * Patches the object named by `key`, with the Content-Type of `patch.type` ({@link PATCH_CONTENT_TYPES}).
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

/** Client knows how to read, write and watch objects on one API server (controller-runtime `client.WithWatch`). */
export interface Client extends Reader, Writer, WatchClient {
  readonly restMapper: RESTMapper;
}

/** Options for {@link ApiClient}. */
export interface ClientOptions {
  /** The transport to the API server (usually `new Transport(config)`). Closed by `close()`. */
  readonly transport: HttpTransport;
  /** @defaultValue a {@link DynamicRESTMapper} over the same transport. */
  readonly restMapper?: RESTMapper;
  /** Default `fieldManager` for writes (controller-runtime `client.WithFieldOwner`). */
  readonly fieldOwner?: string;
}

function encodeSeg(s: string): string {
  return encodeURIComponent(s);
}

/** The collection path for a mapping (`/api/v1/namespaces/ns/pods` or `/apis/apps/v1/deployments`). */
export function collectionPath(mapping: RESTMapping, namespace: string | undefined): string {
  const r = mapping.resource;
  const prefix = r.group === '' ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
  if (mapping.scope === 'Namespaced' && namespace) {
    return `${prefix}/namespaces/${encodeSeg(namespace)}/${r.resource}`;
  }
  return `${prefix}/${r.resource}`;
}

function withQuery(path: string, q: URLSearchParams): string {
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

/**
 * The live client: every call is an HTTP request to the API server (controller-runtime's `client.New`
 * without a cache). Kinds are resolved to resources through the RESTMapper.
 */
export class ApiClient implements Client {
  readonly restMapper: RESTMapper;
  readonly #transport: HttpTransport;
  readonly #fieldOwner: string | undefined;

  constructor(options: ClientOptions) {
    this.#transport = options.transport;
    this.restMapper = options.restMapper ?? new DynamicRESTMapper(options.transport);
    this.#fieldOwner = options.fieldOwner;
  }

  /** Closes the transport. */
  close(): Promise<void> {
    return this.#transport.close();
  }

  async #mapping(kind: Kind): Promise<RESTMapping> {
    return this.restMapper.restMapping(gvkOf(kind));
  }

  async #objectPath(kind: Kind, key: ObjectKey): Promise<{ path: string; mapping: RESTMapping }> {
    if (!key.name) throw new InvalidRequestError(`${kind.kind}: a name is required`);
    const mapping = await this.#mapping(kind);
    if (mapping.scope === 'Namespaced' && !key.namespace) {
      throw new InvalidRequestError(
        `${kind.kind} "${key.name}": a namespace is required for a namespaced kind`,
      );
    }
    return { path: `${collectionPath(mapping, key.namespace)}/${encodeSeg(key.name)}`, mapping };
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

  #writeQuery(options: WriteOptions | undefined): URLSearchParams {
    const q = new URLSearchParams();
    if (options?.dryRun) q.set('dryRun', 'All');
    const fm = options?.fieldManager ?? this.#fieldOwner;
    if (fm) q.set('fieldManager', fm);
    return q;
  }

  async get<T extends KubeObject>(kind: Kind<T>, key: ObjectKey, options?: GetOptions): Promise<T> {
    const { path } = await this.#objectPath(kind, key);
    const q = new URLSearchParams();
    if (options?.resourceVersion !== undefined) q.set('resourceVersion', options.resourceVersion);
    return withTypeMeta(
      kind,
      await this.#send<T>({ method: 'GET', path: withQuery(path, q), signal: options?.signal }),
    );
  }

  async list<T extends KubeObject>(kind: Kind<T>, options: ListOptions = {}): Promise<ObjectList<T>> {
    const mapping = await this.#mapping(kind);
    const q = new URLSearchParams();
    const ls = formatLabelSelector(options.labelSelector);
    if (ls) q.set('labelSelector', ls);
    const fs = formatFieldSelector(options.fieldSelector);
    if (fs) q.set('fieldSelector', fs);
    if (options.limit !== undefined && options.limit > 0) q.set('limit', String(options.limit));
    if (options.continue) q.set('continue', options.continue);
    if (options.resourceVersion !== undefined) q.set('resourceVersion', options.resourceVersion);
    if (options.resourceVersionMatch) q.set('resourceVersionMatch', options.resourceVersionMatch);
    const path = withQuery(collectionPath(mapping, options.namespace), q);
    const list = await this.#send<ObjectList<T>>({ method: 'GET', path, signal: options.signal });
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
    if (!Array.isArray(list.items)) throw new UnexpectedResponseError(`GET ${path}: items is not an array`);
    list.metadata ??= {};
    for (const item of list.items) withTypeMeta(kind, item);
    return list;
  }

  async create<T extends KubeObject>(kind: Kind<T>, obj: T, options?: WriteOptions): Promise<T> {
    const mapping = await this.#mapping(kind);
    const ns = obj.metadata?.namespace;
    if (mapping.scope === 'Namespaced' && !ns) {
      throw new InvalidRequestError(
        `${kind.kind}: metadata.namespace is required to create a namespaced object`,
      );
    }
    const path = withQuery(collectionPath(mapping, ns), this.#writeQuery(options));
    const body = JSON.stringify({ ...obj, apiVersion: kind.apiVersion, kind: kind.kind });
    return withTypeMeta(
      kind,
      await this.#send<T>({
        method: 'POST',
        path,
        body,
        headers: { 'content-type': 'application/json' },
        signal: options?.signal,
      }),
    );
  }

  async update<T extends KubeObject>(kind: Kind<T>, obj: T, options?: WriteOptions): Promise<T> {
    const key = { namespace: obj.metadata?.namespace, name: obj.metadata?.name ?? '' };
    const { path } = await this.#objectPath(kind, key);
    const body = JSON.stringify({ ...obj, apiVersion: kind.apiVersion, kind: kind.kind });
    return withTypeMeta(
      kind,
      await this.#send<T>({
        method: 'PUT',
        path: withQuery(path, this.#writeQuery(options)),
        body,
        headers: { 'content-type': 'application/json' },
        signal: options?.signal,
      }),
    );
  }

  async patch<T extends KubeObject>(
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
        await this.#send<T>({
          method: 'PATCH',
          path: withQuery(path, q),
          body: JSON.stringify(patch.data),
          headers: { 'content-type': contentType },
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

  async delete<T extends KubeObject>(
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
      [Symbol.asyncIterator]: () => this.#watch(kind, options),
    };
  }

  async *#watch<T extends KubeObject>(
    kind: Kind<T>,
    options: WatchOptions,
  ): AsyncGenerator<WatchEvent<T>, void, undefined> {
    const mapping = await this.#mapping(kind);
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
        headers: { accept: 'application/json' },
        stream: true,
        ...(signal ? { signal } : {}),
      });
    } catch (err) {
      if (signal?.aborted) return;
      throw err;
    }
    if (res.status < 200 || res.status >= 300) {
      const text = await res.body.text().catch(() => '');
      throw statusErrorFromResponse(res.status, text, `GET ${path.split('?')[0]} (watch)`);
    }
    try {
      for await (const ev of decodeWatchStream<T>(res.body)) {
        if (ev.type !== 'ERROR' && ev.type !== 'BOOKMARK') withTypeMeta(kind, ev.object);
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

/** Fills `apiVersion`/`kind` when the server left them out (list items on real servers do). */
function withTypeMeta<T extends KubeObject>(kind: Kind<T>, obj: T): T {
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
  });
}

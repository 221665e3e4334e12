import type { RestConfig } from '@kubeloop/config';
import {
  InvalidRequestError,
  isUnsupportedMediaType,
  StatusError,
  statusErrorFromResponse,
  UnexpectedResponseError,
  UnsupportedPatchTypeError,
} from './errors.js';
import type { HttpRequest, HttpTransport } from './http.js';
import type { Client } from './interfaces.js';
import { gvkOf, gvkString, type Kind, type KubeObject, type ObjectKey, type ObjectList } from './kinds.js';
import { formatFieldSelector, formatLabelSelector } from './label-selector.js';
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
import { DynamicRESTMapper, type RESTMapper, type RESTMapping } from './rest-mapper.js';
import { Transport, type TransportOptions } from './transport/index.js';
import { decodeWatchStream, type WatchEvent } from './watch.js';

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

/**
 * `newFakeClient`: the real `@kubeloop/client` `ApiClient`, talking to an in-process envtest API server through
 * an in-process transport. Nothing about the API's behaviour is re-implemented here: status subresources,
 * generation, finalizers and deletion, selectors, server-side apply and managedFields, validation, defaulting,
 * paging and watch are envtest's own code, reached through the same request path as over HTTPS.
 */
import {
  ApiClient,
  type ApplyConfiguration,
  type ApplyOptions,
  type Client,
  type DeleteAllOfOptions,
  type DeleteOptions,
  type GetOptions,
  type GroupVersionKind,
  isNotFound,
  type Kind,
  type KubeObject,
  type ListOptions,
  Namespace,
  type ObjectKey,
  type ObjectList,
  type Patch,
  type PatchOptions,
  type RESTMapper,
  type StatusWriter,
  type SubResourceClient,
  type WatchEvent,
  type WatchOptions,
  type WriteOptions,
} from '@kubeloop/client';
import { gvkOf } from '@kubeloop/client/apiutil';
import {
  type ApiServer,
  createInProcessApiServer,
  type FaultInjector,
  type InProcessApiServerOptions,
  type RequestQuery,
  type RequestRecord,
} from '@kubeloop/envtest';
import { type Interceptor, interceptClient } from './interceptor.js';
import { InProcessTransport } from './transport.js';

/** The verbs a {@link FakeCall} records. */
export type FakeVerb =
  | 'get'
  | 'list'
  | 'create'
  | 'update'
  | 'patch'
  | 'apply'
  | 'delete'
  | 'deleteAllOf'
  | 'watch';

/** One call made through the fake client, as its caller made it (interceptors see the same calls). */
export interface FakeCall {
  readonly verb: FakeVerb;
  readonly kind: GroupVersionKind;
  /** `'status'`, `'scale'`, … for a subresource call. */
  readonly subResource?: string;
  readonly namespace?: string;
  readonly name?: string;
  /** What was sent: the object (create, update), the patch (patch), the apply configuration (apply). */
  readonly body?: unknown;
  readonly options?: unknown;
  /** What came back (an object, a list), once the call resolved. */
  result?: unknown;
  /** Why it failed, once the call rejected. */
  error?: unknown;
  /** True once the call resolved or rejected. */
  done: boolean;
}

/** Options of {@link newFakeClient}. */
export interface FakeClientOptions {
  /**
   * Objects the server holds before the first call, each with `apiVersion` and `kind`, created in order
   * (CustomResourceDefinitions first) through the API, so they get a uid, resourceVersion, generation and
   * defaults. A missing namespace is created; `status` is written through the status subresource; an object
   * with `metadata.deletionTimestamp` and finalizers is deleted after it is created (it stays, terminating).
   */
  readonly objects?: readonly KubeObject[];
  /** Interceptors, outermost first (controller-runtime `WithInterceptorFuncs`). */
  readonly interceptors?: Interceptor | readonly Interceptor[];
  /** Default `fieldManager` of writes (controller-runtime `client.WithFieldOwner`). */
  readonly fieldOwner?: string;
  /** `User-Agent`; the server names the default field manager after it. @defaultValue `defaultUserAgent()` */
  readonly userAgent?: string;
  /**
   * Serve from this in-process (or listening) server instead of a new one — e.g. to give several fakes one
   * store. It is not stopped by `close()`.
   */
  readonly server?: ApiServer;
  /** Options of the new server (`clock`, `garbageCollection`, …), when `server` is not given. */
  readonly serverOptions?: InProcessApiServerOptions;
}

/** A `Client` that logs the calls made through it (see {@link recordCalls}). */
export interface RecordingClient extends Client {
  /** Calls made through this client since it was made (or {@link RecordingClient.clearCalls}), oldest first. */
  calls(): readonly FakeCall[];
  /** The calls that write: create, update, patch, apply, delete, deleteAllOf (subresources included). */
  writes(): readonly FakeCall[];
  clearCalls(): void;
  /** The client below the log (for a fake, below its interceptors too): calls on it are not logged. */
  readonly unintercepted: Client;
}

/**
 * `client` with a call log: every call, as its caller made it, with its result or error once it settles
 * ({@link FakeCall}). Works on any `Client` — a fake, or a live client on envtest or a real cluster — which is
 * what lets `testReconciler` report the writes of a reconcile on every test target.
 */
export function recordCalls(client: Client): RecordingClient {
  const log: FakeCall[] = [];
  return new LoggedClient(interceptClient(client, recorder(log)), log, client);
}

/** A `Client` served in-process by an envtest API server, with its call log, request log and fault rules. */
export interface FakeClient extends RecordingClient {
  /** The API server behind the fake (its `registry`, `store`, `resources`). */
  readonly server: ApiServer;
  /** envtest's fault rules (`failRequests`, `expire`, `endWatches`, `delayRequests`, …) on this server. */
  readonly faults: FaultInjector;
  /** The server's request log (HTTP-level: verb, resource, path, status), filtered by `query`. */
  requests(query?: RequestQuery): RequestRecord[];
  /** Stops the server when the fake made it. */
  close(): Promise<void>;
}

const WRITE_VERBS: ReadonlySet<FakeVerb> = new Set([
  'create',
  'update',
  'patch',
  'apply',
  'delete',
  'deleteAllOf',
]);

function keyOf(k: ObjectKey | KubeObject | undefined): { namespace?: string; name?: string } {
  if (!k) return {};
  const meta = (k as KubeObject).metadata;
  const ns = meta ? meta.namespace : (k as ObjectKey).namespace;
  const name = meta ? meta.name : (k as ObjectKey).name;
  return { ...(ns ? { namespace: ns } : {}), ...(name !== undefined ? { name } : {}) };
}

/** An interceptor that logs every call passing through it and what it came to. */
function recorder(log: FakeCall[]): Interceptor {
  const track = <R>(call: Omit<FakeCall, 'done' | 'result' | 'error'>, run: () => Promise<R>): Promise<R> => {
    const entry: FakeCall = { ...call, done: false };
    log.push(entry);
    return run().then(
      (r) => {
        entry.result = r;
        entry.done = true;
        return r;
      },
      (e: unknown) => {
        entry.error = e;
        entry.done = true;
        throw e;
      },
    );
  };
  const base = (verb: FakeVerb, kind: Kind, subResource?: string) => ({
    verb,
    kind: gvkOf(kind),
    ...(subResource !== undefined ? { subResource } : {}),
  });
  const opt = (o: unknown) => (o !== undefined ? { options: o } : {});
  return {
    get: (c, kind, key, o) =>
      track({ ...base('get', kind), ...keyOf(key), ...opt(o) }, () => c.get(kind, key, o)),
    list: (c, kind, o) =>
      track({ ...base('list', kind), ...(o?.namespace ? { namespace: o.namespace } : {}), ...opt(o) }, () =>
        c.list(kind, o),
      ),
    create: (c, kind, obj, o) =>
      track({ ...base('create', kind), ...keyOf(obj), body: obj, ...opt(o) }, () => c.create(kind, obj, o)),
    update: (c, kind, obj, o) =>
      track({ ...base('update', kind), ...keyOf(obj), body: obj, ...opt(o) }, () => c.update(kind, obj, o)),
    patch: (c, kind, key, p, o) =>
      track({ ...base('patch', kind), ...keyOf(key), body: p, ...opt(o) }, () => c.patch(kind, key, p, o)),
    apply: (c, kind, cfg, o) =>
      track({ ...base('apply', kind), ...keyOf(cfg as KubeObject), body: cfg, ...opt(o) }, () =>
        c.apply(kind, cfg, o),
      ),
    delete: (c, kind, key, o) =>
      track({ ...base('delete', kind), ...keyOf(key), ...opt(o) }, () => c.delete(kind, key, o)),
    deleteAllOf: (c, kind, o) =>
      track(
        { ...base('deleteAllOf', kind), ...(o?.namespace ? { namespace: o.namespace } : {}), ...opt(o) },
        () => c.deleteAllOf(kind, o),
      ),
    watch: (c, kind, o) => {
      log.push({
        ...base('watch', kind),
        ...(o?.namespace ? { namespace: o.namespace } : {}),
        ...opt(o),
        done: true,
      });
      return c.watch(kind, o);
    },
    subResourceGet: (c, sub, kind, key, o) =>
      track({ ...base('get', kind, sub), ...keyOf(key), ...opt(o) }, () => subOf(c, sub).get(kind, key, o)),
    subResourceCreate: (c, sub, kind, obj, body, o) =>
      track({ ...base('create', kind, sub), ...keyOf(obj), body, ...opt(o) }, () =>
        subOf(c, sub).create(kind, obj, body, o),
      ),
    subResourceUpdate: (c, sub, kind, obj, o) =>
      track({ ...base('update', kind, sub), ...keyOf(obj), body: o?.subResourceBody ?? obj, ...opt(o) }, () =>
        subOf(c, sub).update(kind, obj, o),
      ),
    subResourcePatch: (c, sub, kind, key, p, o) =>
      track({ ...base('patch', kind, sub), ...keyOf(key), body: p, ...opt(o) }, () =>
        subOf(c, sub).patch(kind, key, p, o),
      ),
    subResourceApply: (c, sub, kind, cfg, o) =>
      track({ ...base('apply', kind, sub), ...keyOf(cfg as KubeObject), body: cfg, ...opt(o) }, () =>
        subOf(c, sub).apply(kind, cfg, o),
      ),
  };
}

function subOf(c: Client, sub: string): SubResourceClient {
  return sub === 'status' ? (c.status() as SubResourceClient) : c.subResource(sub);
}

class LoggedClient implements RecordingClient {
  readonly unintercepted: Client;
  readonly #outer: Client;
  readonly #log: FakeCall[];

  constructor(outer: Client, log: FakeCall[], unintercepted: Client) {
    this.#outer = outer;
    this.#log = log;
    this.unintercepted = unintercepted;
  }

  get restMapper(): RESTMapper {
    return this.unintercepted.restMapper;
  }

  calls(): readonly FakeCall[] {
    return [...this.#log];
  }

  writes(): readonly FakeCall[] {
    return this.#log.filter((c) => WRITE_VERBS.has(c.verb));
  }

  clearCalls(): void {
    this.#log.length = 0;
  }

  get<T extends KubeObject>(kind: Kind<T>, key: ObjectKey, options?: GetOptions): Promise<T> {
    return this.#outer.get(kind, key, options);
  }
  list<T extends KubeObject>(kind: Kind<T>, options?: ListOptions): Promise<ObjectList<T>> {
    return this.#outer.list(kind, options);
  }
  create<T extends KubeObject>(kind: Kind<T>, obj: T, options?: WriteOptions): Promise<T> {
    return this.#outer.create(kind, obj, options);
  }
  update<T extends KubeObject>(kind: Kind<T>, obj: T, options?: WriteOptions): Promise<T> {
    return this.#outer.update(kind, obj, options);
  }
  patch<T extends KubeObject>(
    kind: Kind<T>,
    key: ObjectKey,
    patch: Patch,
    options?: PatchOptions,
  ): Promise<T> {
    return this.#outer.patch(kind, key, patch, options);
  }
  apply<T extends KubeObject>(
    kind: Kind<T>,
    config: ApplyConfiguration<T>,
    options?: ApplyOptions,
  ): Promise<T> {
    return this.#outer.apply(kind, config, options);
  }
  delete<T extends KubeObject>(kind: Kind<T>, key: ObjectKey | T, options?: DeleteOptions): Promise<void> {
    return this.#outer.delete(kind, key, options);
  }
  deleteAllOf<T extends KubeObject>(kind: Kind<T>, options?: DeleteAllOfOptions): Promise<void> {
    return this.#outer.deleteAllOf(kind, options);
  }
  watch<T extends KubeObject>(kind: Kind<T>, options?: WatchOptions): AsyncIterable<WatchEvent<T>> {
    return this.#outer.watch(kind, options);
  }
  status(): StatusWriter {
    return this.#outer.status();
  }
  subResource(subResource: string): SubResourceClient {
    return this.#outer.subResource(subResource);
  }
}

class InProcessFakeClient extends LoggedClient implements FakeClient {
  readonly server: ApiServer;
  readonly faults: FaultInjector;
  readonly #base: ApiClient;
  readonly #ownsServer: boolean;

  constructor(server: ApiServer, ownsServer: boolean, base: ApiClient, interceptors: readonly Interceptor[]) {
    const log: FakeCall[] = [];
    let c: Client = base;
    for (let i = interceptors.length - 1; i >= 0; i--) c = interceptClient(c, interceptors[i]!);
    super(interceptClient(c, recorder(log)), log, base);
    this.server = server;
    this.faults = server.faults;
    this.#base = base;
    this.#ownsServer = ownsServer;
  }

  requests(query?: RequestQuery): RequestRecord[] {
    return this.faults.requests(query);
  }

  async close(): Promise<void> {
    await this.#base.close();
    if (this.#ownsServer) await this.server.stop();
  }
}

const CRD_GROUP = 'apiextensions.k8s.io';

function kindOfObject(o: KubeObject, at: string): Kind {
  if (typeof o?.apiVersion !== 'string' || typeof o.kind !== 'string' || !o.apiVersion || !o.kind)
    throw new TypeError(
      `${at}: apiVersion and kind are required (the fake creates the object through the API)`,
    );
  if (typeof o.metadata?.name !== 'string' || o.metadata.name === '')
    throw new TypeError(`${at}.metadata.name: required`);
  return { apiVersion: o.apiVersion, kind: o.kind };
}

/** Server-set metadata a seed object may carry (e.g. copied from a real cluster) that a create refuses or ignores. */
function createBody(o: KubeObject): KubeObject {
  const {
    resourceVersion: _rv,
    uid: _uid,
    creationTimestamp: _ct,
    deletionTimestamp: _dt,
    ...meta
  } = o.metadata ?? {};
  return { ...o, metadata: meta };
}

async function seed(client: ApiClient, objects: readonly KubeObject[]): Promise<void> {
  const indexed = objects.map((o, i) => ({ o, at: `objects[${i}]`, kind: kindOfObject(o, `objects[${i}]`) }));
  // CRDs first, so objects of their kinds can be created after them
  indexed.sort((a, b) => Number(isCrd(b.kind)) - Number(isCrd(a.kind)));
  const namespaces = new Set<string>();
  for (const { o, kind } of indexed) {
    const ns = o.metadata?.namespace;
    if (ns && !namespaces.has(ns)) {
      namespaces.add(ns);
      try {
        await client.get(Namespace, { name: ns });
      } catch (e) {
        if (!isNotFound(e)) throw e;
        if (
          !indexed.some(
            (x) => x.kind.kind === 'Namespace' && x.kind.apiVersion === 'v1' && x.o.metadata?.name === ns,
          )
        )
          await client.create(Namespace, { metadata: { name: ns } });
      }
    }
    if (kind.kind === 'Namespace' && kind.apiVersion === 'v1') {
      // the system namespaces exist already
      const exists = await client.get(Namespace, { name: o.metadata!.name! }).then(
        () => true,
        (e: unknown) => (isNotFound(e) ? false : Promise.reject(e)),
      );
      if (exists) continue;
    }
    const created = await client.create(kind, createBody(o));
    let current = created;
    const status = (o as { status?: unknown }).status;
    if (
      status !== undefined &&
      JSON.stringify((created as { status?: unknown }).status) !== JSON.stringify(status)
    ) {
      try {
        current = await client.status().update(kind, { ...created, status } as KubeObject);
      } catch (e) {
        // a kind without a status subresource stores status with the object (already done by create)
        if (!isNotFound(e)) throw e;
      }
    }
    if (o.metadata?.deletionTimestamp) {
      if (!o.metadata.finalizers?.length)
        throw new TypeError(
          `objects: ${kind.kind} ${o.metadata.name} has a deletionTimestamp but no finalizers: the server would delete it at once`,
        );
      await client.delete(kind, current);
    }
  }
}

function isCrd(k: Kind): boolean {
  return k.kind === 'CustomResourceDefinition' && k.apiVersion.startsWith(`${CRD_GROUP}/`);
}

/**
 * A `Client` with envtest's semantics and no sockets (controller-runtime `fake.NewClientBuilder()
 * .WithObjects(…).WithInterceptorFuncs(…).Build()`, but not a second implementation of the API: the real
 * `ApiClient` over an {@link InProcessTransport} to an in-process envtest `ApiServer`). Resolves once
 * `objects` are stored; the server's request log starts empty after that.
 *
 * Where controller-runtime's fake departs from a real server — field selectors need a registered index,
 * status is written by `update`, server-side apply is approximated — this one answers as envtest does over
 * HTTPS, which `test/fake-conformance.test.ts` checks case by case.
 *
 * @throws TypeError naming `objects[i]` when an object lacks `apiVersion`, `kind` or `metadata.name`, or has a
 *   deletionTimestamp without finalizers; a `StatusError` when the server refuses a seed object (invalid,
 *   duplicate).
 */
export async function newFakeClient(options: FakeClientOptions = {}): Promise<FakeClient> {
  const server = options.server ?? createInProcessApiServer(options.serverOptions ?? {});
  const transport = new InProcessTransport(server, {
    ...(options.userAgent !== undefined ? { userAgent: options.userAgent } : {}),
  });
  const base = new ApiClient({
    transport,
    ...(options.fieldOwner !== undefined ? { fieldOwner: options.fieldOwner } : {}),
  });
  try {
    if (options.objects?.length) await seed(base, options.objects);
  } catch (e) {
    if (!options.server) await server.stop();
    throw e;
  }
  if (!options.server) server.faults.clearRequests();
  const interceptors =
    options.interceptors === undefined ? [] : ([] as Interceptor[]).concat(options.interceptors);
  return new InProcessFakeClient(server, !options.server, base, interceptors);
}

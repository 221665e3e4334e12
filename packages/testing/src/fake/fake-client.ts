/**
 * `newFakeClient`: the real `@kubeloop/client` `ApiClient`, talking to an in-process envtest API server through
 * an in-process transport. Nothing about the API's behaviour is re-implemented here: status subresources,
 * generation, finalizers and deletion, selectors, server-side apply and managedFields, validation, defaulting,
 * paging and watch are envtest's own code, reached through the same request path as over HTTPS.
 */
import { ApiClient, type Client, isNotFound, type Kind, type KubeObject, Namespace } from '@kubeloop/client';
import { type Interceptor, interceptClient } from '@kubeloop/client/interceptor';
import {
  type ApiServer,
  createInProcessApiServer,
  type FaultInjector,
  type InProcessApiServerOptions,
  type RequestQuery,
  type RequestRecord,
} from '@kubeloop/envtest';
import { type FakeCall, LoggedClient, type RecordingClient } from './recording.js';
import { InProcessTransport } from './transport.js';

export { type FakeCall, type FakeVerb, type RecordingClient, recordCalls } from './recording.js';

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

class InProcessFakeClient extends LoggedClient implements FakeClient {
  readonly server: ApiServer;
  readonly faults: FaultInjector;
  readonly #base: ApiClient;
  readonly #ownsServer: boolean;

  constructor(server: ApiServer, ownsServer: boolean, base: ApiClient, interceptors: readonly Interceptor[]) {
    const log: FakeCall[] = [];
    let c: Client = base;
    for (let i = interceptors.length - 1; i >= 0; i--) c = interceptClient(c, interceptors[i]!);
    super(c, log, base);
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

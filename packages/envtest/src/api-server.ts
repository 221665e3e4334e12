/**
 * The in-process API server (made by api-server-start.ts): HTTPS on loopback with a CA it generates, bearer-token and client-certificate
 * authentication, discovery, OpenAPI v3, the resource endpoints, and the hooks tests drive (fault
 * injection, compaction, restart, connection counting, request log).
 */

import { createHash, randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2SecureServer } from 'node:http2';
import type { Socket } from 'node:net';
import { realClock } from '@kubeloop/core';
import { WebhookAdmission } from './admission/webhook-admission.js';
import type { ApiServerOptions } from './api-server-options.js';
import { Authenticator, type UserInfo } from './auth.js';
import { authorizeRBAC, authorizeRestricted } from './authorization.js';
import type { CertificateAuthority, CertificatePair } from './certs.js';
import type { CrdHost } from './crd-lifecycle.js';
import { ApiStatusError, EnvtestError, unauthorized } from './errors.js';
import { appendRequest, FaultInjector, LogRecord, type RequestRecord } from './faults/index.js';
import { sendStatus, statusFromUnknown } from './http.js';
import { closeHttps, listenHttps } from './https-listener.js';
import {
  asServerResponse,
  type InProcessRequest,
  type InProcessResponse,
  InProcessServerResponse,
  inProcessIncoming,
} from './in-process.js';
import { writeKubeconfig } from './kubeconfig.js';
import { serveNonResource } from './non-resource.js';
import type { Registry } from './registry.js';
import { isPublicPath, requestContext } from './request-context.js';
import { parseRequestInfo, type RequestInfo } from './request-info.js';
import { answerUnknownResource, handleResource } from './resource-handler.js';
import { ResourceTable } from './resource-table.js';
import type { ReviewEnv } from './reviews.js';
import { newServerRegistry } from './server-registry.js';
import { Store } from './store.js';
import { WatchSet } from './watch-set.js';

export type { ApiServerOptions } from './api-server-options.js';

/** etcd's default `--experimental-watch-progress-notify-interval` (envtest of controller-runtime sets none). */
const ETCD_PROGRESS_NOTIFY_INTERVAL_MS = 600_000;

/** One served request, for tests that count requests at the server (the one request log's record). */
export type RequestLogEntry = RequestRecord;

/**
 * How api-server-start.ts makes and starts a server, kept off the public surface (not exported from the package;
 * filled in by the class's static block, which may call the private constructor and `#` members).
 */
export const serverLifecycle = {} as {
  /** A new server; without `serving` it has no listener and starts etcd's progress notifications at once. */
  create(
    o: ApiServerOptions,
    ca?: CertificateAuthority,
    serving?: CertificatePair,
    kubeconfig?: string,
    tmp?: string,
  ): ApiServer;
  /** Listens on `port` (0: any), HTTP/2 and HTTP/1.1 on one port. @throws EnvtestError `ENVTEST_NO_TLS` without TLS. */
  listen(server: ApiServer, port: number): Promise<void>;
};

/** The in-process API server. Create it with {@link startApiServer}. */
export class ApiServer {
  /** Base URL, e.g. `https://127.0.0.1:41234`. */
  url = '';
  /** PEM of the CA that signed the serving certificate (`''` for a server made by {@link createInProcessApiServer}). */
  readonly caPem: string;
  /** The admin bearer token (full access). Secret: never logged. */
  readonly token: string;
  /** Path of the kubeconfig written for this server (mode 0600; `''` for an in-process-only server). */
  readonly kubeconfigPath: string;
  /** The runtime token table. */
  readonly auth = new Authenticator();
  /** Served resource types (built-ins plus established CRDs). */
  readonly resources = new ResourceTable();
  /**
   * Every request, logged when it arrives (status filled in when the response starts): at least the last
   * 100,000 (trimmed back to that when it passes 110,000). The fault injector's `requests()` queries it.
   */
  readonly requestLog: RequestLogEntry[] = [];
  /** The fault injector every request and watch event goes through. */
  readonly faults: FaultInjector;
  /** Admission webhooks of this server; `admission.faults` makes webhooks slow, failing or refusing. */
  readonly admission: WebhookAdmission;
  store: Store;
  registry: Registry;

  readonly #options: ApiServerOptions;
  readonly #ca: CertificateAuthority | undefined;
  readonly #serving: CertificatePair | undefined;
  #server: Http2SecureServer | undefined;
  #port = 0;
  readonly #sockets = new Set<Socket>();
  readonly #watches = new WatchSet();
  readonly #crdHost: CrdHost = {
    resources: this.resources,
    store: () => this.store,
    registry: () => this.registry,
    watches: this.#watches,
  };
  #aggregatedDiscovery: boolean;
  #requestId = 0;
  #tempDir: string | undefined;
  readonly #defaultTimeoutMs: number | undefined;
  #progressTimer: { cancel(): void } | undefined;

  // use startApiServer or createInProcessApiServer (through serverLifecycle.create)
  private constructor(
    options: ApiServerOptions,
    ca: CertificateAuthority | undefined,
    serving: CertificatePair | undefined,
    kubeconfigPath: string,
  ) {
    this.#options = options;
    this.#ca = ca;
    this.#serving = serving;
    this.caPem = ca?.certPem ?? '';
    this.kubeconfigPath = kubeconfigPath;
    this.token = randomBytes(24).toString('base64url');
    this.auth.addToken(this.token, { user: 'envtest-admin', groups: ['system:masters'] });
    for (const t of options.tokens ?? []) {
      if (typeof t === 'string') this.auth.addToken(t, { user: 'envtest-user', groups: ['system:masters'] });
      else {
        const { token, ...rest } = t;
        this.auth.addToken(token, { groups: ['system:masters'], ...rest });
      }
    }
    this.#defaultTimeoutMs = options.defaultWatchTimeoutMs;
    this.#aggregatedDiscovery = options.aggregatedDiscovery ?? true;
    this.store = new Store({ historyLimit: options.watchHistoryLimit });
    this.registry = this.#newRegistry();
    this.#seed();
    this.store.startWatchCaches();
    this.faults = new FaultInjector(this);
    this.admission = new WebhookAdmission(() => this.registry, this.resources, options.webhooks);
  }

  static {
    serverLifecycle.create = (options, ca, serving, kubeconfigPath, tempDir) => {
      const server = new ApiServer(options, ca, serving, kubeconfigPath ?? '');
      server.#tempDir = tempDir;
      // etcd's progress notifications move quiet resources' watch-cache RVs as on a listening server
      if (!serving) server.#scheduleProgressNotify();
      return server;
    };
    serverLifecycle.listen = (server, port) => server.#listen(port);
  }

  /** A registry on the current store, with this server's validation, admission, CRD and GC hooks. */
  #newRegistry(): Registry {
    return newServerRegistry(this.store, {
      resources: this.resources,
      crdHost: this.#crdHost,
      registry: () => this.registry,
      garbageCollection: this.#options.garbageCollection === true,
    });
  }

  /** The system namespaces a real cluster has. */
  #seed(): void {
    const ns = this.resources.lookup('', 'v1', 'namespaces')!;
    for (const name of ['default', 'kube-system', 'kube-public', 'kube-node-lease'])
      this.registry.create(
        ns,
        undefined,
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
        { fieldManager: 'kube-apiserver' },
      );
  }

  /**
   * Issue a client certificate signed by the server's CA (CN = user, O = groups).
   * @throws EnvtestError `ENVTEST_NO_TLS` on a server made by {@link createInProcessApiServer} (it has no CA).
   */
  issueClientCertificate(user: string, groups: readonly string[] = []): Promise<CertificatePair> {
    if (!this.#ca) return Promise.reject(noTls('issue client certificates'));
    return this.#ca.issueClient(user, groups);
  }

  /** Number of open TCP connections to the server. */
  openConnections(): number {
    return this.#sockets.size;
  }

  /** Turn aggregated discovery on or off (off: /api and /apis answer with the legacy documents only). */
  setAggregatedDiscovery(enabled: boolean): void {
    this.#aggregatedDiscovery = enabled;
  }

  /** Number of watch streams currently open. */
  activeWatches(): number {
    return this.#watches.size;
  }

  /** Port the server listens on. */
  get port(): number {
    return this.#port;
  }

  async #listen(port: number): Promise<void> {
    if (!this.#serving || !this.#ca) throw noTls('listen');
    const host = this.#options.host ?? '127.0.0.1';
    const listening = await listenHttps({
      host,
      port,
      keyPem: this.#serving.keyPem,
      certPem: this.#serving.certPem,
      caPem: this.caPem,
      sockets: this.#sockets,
      onRequest: (req, res) => void this.#handle(req, res),
    });
    this.#server = listening.server;
    this.#port = listening.port;
    this.url = `https://${host}:${this.#port}`;
    this.#scheduleProgressNotify();
  }

  /** etcd's periodic watch progress notification, which moves quiet resources' watch-cache RVs (store.ts). */
  #scheduleProgressNotify(): void {
    const clock = this.#options.clock ?? realClock;
    this.#progressTimer?.cancel();
    this.#progressTimer = clock.setTimer(() => {
      this.store.progressNotify();
      this.#scheduleProgressNotify();
    }, ETCD_PROGRESS_NOTIFY_INTERVAL_MS);
  }

  async #close(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    this.#progressTimer?.cancel();
    this.#progressTimer = undefined;
    this.#watches.stopAll();
    if (server) await closeHttps(server, this.#sockets);
  }

  /** Stop serving; ends every watch and connection, and removes the kubeconfig's temp dir if it made one. */
  async stop(): Promise<void> {
    await this.#close();
    if (this.#tempDir) {
      await rm(this.#tempDir, { recursive: true, force: true });
      this.#tempDir = undefined;
    }
  }

  /**
   * Drop every connection (watches included) and listen again on the same port with the same CA and tokens.
   * `keepState: false` also starts from an empty store (fresh system namespaces, CRDs forgotten); with state kept,
   * the watch history is dropped as a restarted server's watch cache is (watches from older RVs get 410).
   */
  async restart(options: { keepState?: boolean } = {}): Promise<void> {
    await this.#close();
    // One turn of the event loop, so a client in this process handles the close of its pooled keep-alive
    // connections before it is told the server is back: a write sent on one would fail ("other side closed").
    await new Promise<void>((resolve) => setImmediate(resolve));
    // A restarted kube-apiserver keeps etcd's objects and resourceVersions but starts with an empty watch cache.
    if (options.keepState !== false) this.store.dropWatchHistory();
    if (options.keepState === false) {
      this.store = new Store({ historyLimit: this.store.watchHistoryLimit, initialRv: this.store.rv + 1 });
      this.registry = this.#newRegistry();
      for (const t of this.resources.all()) if (t.crdName !== undefined) this.resources.removeCrd(t.crdName);
      this.#seed();
      this.store.startWatchCaches();
    }
    if (this.#serving) await this.#listen(this.#port);
    else this.#scheduleProgressNotify();
  }

  /** Write (or rewrite) the kubeconfig for this server. */
  async writeKubeconfig(path = this.kubeconfigPath): Promise<void> {
    await writeKubeconfig(path, { server: this.url, caPem: this.caPem, token: this.token });
  }

  /**
   * Serve one HTTP-shaped request in this process, without a socket: it goes through the same code as a request
   * over HTTPS (authentication — send `authorization: Bearer <token>`, e.g. {@link ApiServer.token} —, fault
   * rules, the request log, the handlers), and the answer comes back as status, lower-case headers and a body
   * streamed as the server writes it (a watch's events arrive one by one; aborting `signal` or destroying the
   * body ends the watch at the server). Resolves when the server starts its answer.
   * @throws whatever `signal` aborts with (before the answer), or an `ECONNRESET` Error when a fault drops the
   *   request before answering. API errors are answers (status >= 400), not throws.
   */
  serveInProcess(request: InProcessRequest): Promise<InProcessResponse> {
    const res = new InProcessServerResponse(request.signal);
    void this.#handle(inProcessIncoming(request), asServerResponse(res));
    return res.head;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://localhost');
    const path = url.pathname.length > 1 ? url.pathname.replace(/\/+$/, '') : url.pathname;
    const q = url.searchParams;
    const method = (req.method ?? 'GET').toUpperCase();
    let user: UserInfo | undefined;
    let info: RequestInfo | undefined;
    const record = new LogRecord(++this.#requestId, method, path, url.search.replace(/^\?/, ''));
    record.track(res);
    appendRequest(this.requestLog, record);
    try {
      if (!isPublicPath(path)) {
        user = this.auth.authenticate(req);
        if (!user) throw unauthorized();
        record.user = user.name;
      }
      info = parseRequestInfo(method, path, q, (g, v, r) => this.resources.lookup(g, v, r));
      const ctx = requestContext(record.id, method, path, q, info);
      record.classify(ctx);
      const faultId = await this.faults.onRequest(ctx, req, res);
      if (faultId !== undefined) {
        record.faultId = faultId;
        return;
      }
      if (!info.isResourceRequest) {
        serveNonResource(
          {
            served: () => this.resources.served(),
            port: this.#port,
            ...(this.#options.gitVersion !== undefined ? { gitVersion: this.#options.gitVersion } : {}),
            aggregatedDiscovery: this.#aggregatedDiscovery,
            openApiHash: (gv) => this.#openApiHash(gv),
          },
          req,
          res,
          path,
          q,
        );
        return;
      }
      const rt = this.resources.lookup(info.group, info.version, info.resource!);
      if (!rt) {
        answerUnknownResource(info, res);
        return;
      }
      if (user?.restrictions) authorizeRestricted(user, info, rt, q);
      const reviews: ReviewEnv = {
        registry: this.registry,
        authenticateToken: (token) => this.auth.authenticateToken(token),
        authorization: this.#options.authorization ?? 'AlwaysAllow',
        lookup: (g, v, r) => this.resources.lookup(g, v, r),
      };
      if (user && reviews.authorization === 'RBAC') await authorizeRBAC(reviews, user, info, rt);
      await handleResource(
        {
          reviews,
          registry: this.registry,
          faults: this.faults,
          watches: this.#watches,
          bookmarkIntervalMs: this.#options.bookmarkIntervalMs ?? 60_000,
          defaultWatchTimeoutMs: this.#defaultTimeoutMs ?? Math.floor(1800_000 * (1 + Math.random())),
          ...(this.#options.clock !== undefined ? { clock: this.#options.clock } : {}),
          tokens: { addToken: (token, o) => this.auth.addToken(token, o), issuer: this.url },
          admission: this.admission,
          ...(user ? { user } : {}),
          ...(this.#options.watchBufferBytes !== undefined
            ? { watchBufferBytes: this.#options.watchBufferBytes }
            : {}),
        },
        rt,
        info,
        ctx,
        req,
        res,
        q,
      );
    } catch (e) {
      if (res.headersSent) {
        if (!res.writableEnded) res.end();
        return;
      }
      const err = statusFromUnknown(e);
      // responsewriters.ErrorNegotiated: Retry-After from details.retryAfterSeconds when it is > 0
      const retryAfter = Number(err.status.details?.retryAfterSeconds ?? 0);
      if (retryAfter > 0 && !err.headers['Retry-After']) {
        sendStatus(
          res,
          new ApiStatusError(err.status, err.httpCode, { ...err.headers, 'Retry-After': String(retryAfter) }),
        );
        return;
      }
      sendStatus(res, err);
    }
  }

  #openApiHash(gv: string): string {
    return createHash('sha512').update(`${gv}:${this.resources.version}`).digest('hex').toUpperCase();
  }
}

function noTls(what: string): EnvtestError {
  return new EnvtestError(
    'ENVTEST_NO_TLS',
    `an in-process API server (createInProcessApiServer) cannot ${what}: it has no listener or CA; use startApiServer`,
  );
}

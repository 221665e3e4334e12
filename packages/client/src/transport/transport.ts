import { readFile } from 'node:fs/promises';
import {
  type CredentialProvider,
  credentialProviderFor,
  type RequestCredentials,
  type RestConfig,
} from '@kubeloop/config';
import { Agent, type Dispatcher, EnvHttpProxyAgent, ProxyAgent, Socks5ProxyAgent } from 'undici';
import { type Clock, realClock, sleep } from '../clock.js';
import { type Deadline, withDeadline } from '../deadline.js';
import {
  channels,
  type RequestDiagnostic,
  type RetryDiagnostic,
  type ThrottleDiagnostic,
  type WarningDiagnostic,
} from './diagnostics.js';
import { gunzipInterceptor } from './gunzip-interceptor.js';
import { type RateLimiter, TokenBucketRateLimiter } from './token-bucket-rate-limiter.js';

/** One HTTP request to the API server. */
export interface TransportRequest {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path and query, relative to `config.host` (a path prefix in `host` is kept). */
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Uint8Array;
  readonly signal?: AbortSignal;
  /**
   * A watch or other long stream: not throttled, no timeout, no 429/5xx or reset retries (client-go). The one
   * retry it can get is after a 401 that refreshed the credentials.
   */
  readonly stream?: boolean;
}

/** The answer; `body` must be consumed (or dumped) exactly once. */
export interface TransportResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Dispatcher.ResponseData['body'];
}

/** Options of {@link Transport}. */
export interface TransportOptions {
  /**
   * Client-side limiter. Default: a {@link TokenBucketRateLimiter} from `config.qps`/`config.burst`, or none
   * when `config.qps` is negative or 0 … `null` turns throttling off explicitly.
   */
  readonly rateLimiter?: RateLimiter | null;
  /** Retries after 429/5xx with `Retry-After` (and GET connection resets). Default 10 (client-go). */
  readonly maxRetries?: number;
  /** Credentials for every request. Default `credentialProviderFor(config)`. */
  readonly credentials?: CredentialProvider;
  /** Clock for retry waits. Default the real one. */
  readonly clock?: Clock;
  /** How often CA and client certificate files are re-read (ms). Default 300 000 (client-go's 5 minutes). */
  readonly tlsReloadIntervalMs?: number;
  /** Proxy environment (`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`, lower case too). Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * Receives each server `Warning:` header message (code 299), as client-go's `WarningHandler`. They are
   * also published on `kubeloop:client:warning`. Default: none.
   */
  readonly onWarning?: (message: string) => void;
}

/** The messages of `Warning: 299 - "…"` headers (RFC 7234 warn-text, as the API server sends them). */
export function parseWarningHeaders(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  const out: string[] = [];
  for (const header of Array.isArray(value) ? value : [value]) {
    const re = /(\d{3})\s+\S+\s+"((?:[^"\\]|\\.)*)"(?:\s+"[^"]*")?\s*(?:,\s*|$)/g;
    for (const m of header.matchAll(re)) {
      if (m[1] === '299') out.push((m[2] ?? '').replace(/\\(.)/g, '$1'));
    }
  }
  return out;
}

/** A request failed without an HTTP answer (after any retries). Its message never has headers or a body. */
export class TransportError extends Error {
  override readonly name = 'TransportError';
  /** Stable code: `Timeout`, `Aborted`, `ConnectionFailed`, `TLSFailed`, `Credentials`, `InvalidConfig`. */
  readonly code: 'Timeout' | 'Aborted' | 'ConnectionFailed' | 'TLSFailed' | 'Credentials' | 'InvalidConfig';
  constructor(code: TransportError['code'], message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

function errorCode(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function isConnectionReset(e: unknown): boolean {
  const code = errorCode(e);
  if (code && RESET_CODES.has(code)) return true;
  const cause = (e as { cause?: unknown } | null)?.cause;
  return cause !== undefined && cause !== e && isConnectionReset(cause);
}

function isTlsError(e: unknown): boolean {
  const code = errorCode(e) ?? '';
  return /CERT|SSL|TLS|SELF_SIGNED|ERR_TLS|HOSTNAME|UNABLE_TO_VERIFY|ALTNAME/.test(code);
}

/** Integer seconds of a `Retry-After` header, or undefined (HTTP-date is not supported, as in client-go). */
export function retryAfterSeconds(value: string | string[] | undefined): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || !/^\s*\d+\s*$/.test(v)) return undefined;
  return Number.parseInt(v, 10);
}

/** `path` with client-go's `timeout=<duration>` query parameter (Go duration syntax), unless it has one. */
function withTimeoutQuery(path: string, timeoutMs: number): string {
  if (/[?&]timeout=/.test(path)) return path;
  const value = timeoutMs % 1000 === 0 ? `${timeoutMs / 1000}s` : `${timeoutMs}ms`;
  return `${path}${path.includes('?') ? '&' : '?'}timeout=${value}`;
}

function timeoutOrAbort(e: unknown, req: TransportRequest, url: string, timeoutMs: number, when: string) {
  const reason = (req.signal?.reason ?? e) as { name?: string } | undefined;
  if (reason?.name === 'TimeoutError') {
    return new TransportError('Timeout', `${req.method} ${url}: timed out after ${timeoutMs} ms ${when}`, {
      cause: e,
    });
  }
  return new TransportError('Aborted', `${req.method} ${url}: aborted ${when}`, { cause: e });
}

function proxyEnv(env: Readonly<Record<string, string | undefined>>) {
  const httpsProxy = env.https_proxy ?? env.HTTPS_PROXY;
  const httpProxy = env.http_proxy ?? env.HTTP_PROXY;
  const noProxy = env.no_proxy ?? env.NO_PROXY;
  return { httpsProxy, httpProxy, noProxy };
}

/**
 * The HTTP transport to one API server, on one pooled undici dispatcher (keep-alive, TLS from
 * `config.tlsClientConfig`, proxy from `config.proxyUrl` — http, https or socks5 — else `HTTPS_PROXY`/
 * `NO_PROXY`). Follows client-go's `rest.Request`:
 * - the limiter is taken once before the first attempt of every non-stream request, and again before every
 *   retry; streams (watches) are never throttled, timed out or retried;
 * - a 429 or ≥ 500 answer with an integer `Retry-After` is retried (at most `maxRetries`), waiting at least
 *   `Retry-After` seconds; a GET that fails on a connection reset is retried as a 500 with `Retry-After: 1`;
 * - credentials come from the {@link CredentialProvider} on every attempt; after a 401 the request is retried
 *   once when the provider says new credentials exist (token file re-read, exec plugin re-run);
 * - `User-Agent` from the config, `Accept-Encoding: gzip` (decoded here) unless `disableCompression`;
 * - `config.timeoutMs` bounds each non-stream attempt including reading the body.
 * Diagnostics go to `node:diagnostics_channel` (`kubeloop:client:*`, see `channels`).
 */
export class Transport {
  readonly config: RestConfig;
  private readonly base: URL;
  private readonly basePath: string;
  private readonly limiter: RateLimiter | null;
  private readonly maxRetries: number;
  private readonly credentials: CredentialProvider;
  private readonly clock: Clock;
  private readonly env: Readonly<Record<string, string | undefined>>;
  private readonly onWarning: ((message: string) => void) | undefined;
  private pool: { dispatcher: Dispatcher; root: Dispatcher };
  private readonly owned: Dispatcher[] = [];
  /** The PEMs in use (they change when the CA or client certificate files are re-read). */
  private pem: { caData?: string; certData?: string; keyData?: string };
  private readonly tlsReloadIntervalMs: number;
  private nextTlsCheck: number;
  private tlsCheck: Promise<void> | undefined;
  private certDispatcher: { certData: string; dispatcher: Dispatcher; root: Dispatcher } | undefined;
  private closed = false;

  /**
   * @throws {TransportError} `InvalidConfig` when `config.host` is not an http(s) URL, or when a CA is given
   *   together with `insecure` (client-go: a root CA with the insecure flag is not allowed).
   */
  constructor(config: RestConfig, options: TransportOptions = {}) {
    this.config = config;
    try {
      this.base = new URL(config.host);
    } catch {
      throw new TransportError('InvalidConfig', 'config.host is not a valid URL');
    }
    if (this.base.protocol !== 'https:' && this.base.protocol !== 'http:') {
      throw new TransportError('InvalidConfig', `config.host has unsupported scheme ${this.base.protocol}`);
    }
    if (config.tlsClientConfig.insecure && config.tlsClientConfig.caData) {
      throw new TransportError(
        'InvalidConfig',
        'tlsClientConfig: caData and insecure are mutually exclusive (a root CA with the insecure flag is not allowed)',
      );
    }
    this.basePath = this.base.pathname.replace(/\/+$/, '');
    this.limiter =
      options.rateLimiter !== undefined
        ? options.rateLimiter
        : config.qps > 0
          ? new TokenBucketRateLimiter(config.qps, Math.max(1, config.burst), options.clock)
          : null;
    this.maxRetries = options.maxRetries ?? 10;
    this.credentials = options.credentials ?? credentialProviderFor(config);
    this.clock = options.clock ?? realClock;
    this.env = options.env ?? process.env;
    this.onWarning = options.onWarning;
    const t = config.tlsClientConfig;
    this.pem = {
      ...(t.caData ? { caData: t.caData } : {}),
      ...(t.certData ? { certData: t.certData } : {}),
      ...(t.keyData ? { keyData: t.keyData } : {}),
    };
    this.tlsReloadIntervalMs = options.tlsReloadIntervalMs ?? 5 * 60_000;
    this.nextTlsCheck = this.clock.now() + this.tlsReloadIntervalMs;
    this.pool = this.createDispatcher(undefined);
  }

  /**
   * Every `tlsReloadIntervalMs`, re-read `caFile` and `certFile`/`keyFile` (when the config names them); on a
   * change, new requests use a new pool with the new PEMs and the old pool is closed once idle (client-go's CA
   * rotation and `ReloadTLSFiles`). A failed read keeps the current PEMs.
   */
  private maybeReloadTls(): Promise<void> {
    const t = this.config.tlsClientConfig;
    if (!t.caFile && !(t.certFile && t.keyFile)) return Promise.resolve();
    if (this.tlsCheck) return this.tlsCheck;
    if (this.clock.now() < this.nextTlsCheck) return Promise.resolve();
    this.tlsCheck = (async () => {
      const read = async (f: string | undefined) =>
        f ? await readFile(f, 'utf8').catch(() => undefined) : undefined;
      const [ca, cert, key] = await Promise.all([read(t.caFile), read(t.certFile), read(t.keyFile)]);
      const next = { ...this.pem };
      if (ca) next.caData = ca;
      if (cert && key) {
        next.certData = cert;
        next.keyData = key;
      }
      if (
        next.caData !== this.pem.caData ||
        next.certData !== this.pem.certData ||
        next.keyData !== this.pem.keyData
      ) {
        this.pem = next;
        const old = this.pool;
        this.pool = this.createDispatcher(undefined);
        this.owned.splice(this.owned.indexOf(old.root), 1);
        void old.root.close().catch(() => undefined);
        if (channels.warning.hasSubscribers) {
          channels.warning.publish({
            message: 'TLS files changed; new connections use them',
          } satisfies WarningDiagnostic);
        }
      }
    })().finally(() => {
      this.nextTlsCheck = this.clock.now() + this.tlsReloadIntervalMs;
      this.tlsCheck = undefined;
    });
    return this.tlsCheck;
  }

  private createDispatcher(clientCert: { certData: string; keyData: string } | undefined): {
    dispatcher: Dispatcher;
    root: Dispatcher;
  } {
    const t = this.config.tlsClientConfig;
    const certData = clientCert?.certData ?? this.pem.certData;
    const keyData = clientCert?.keyData ?? this.pem.keyData;
    const tls = {
      ...(this.pem.caData ? { ca: this.pem.caData } : {}),
      ...(certData && keyData ? { cert: certData, key: keyData } : {}),
      ...(t.serverName ? { servername: t.serverName } : {}),
      rejectUnauthorized: !t.insecure,
    };
    const common = { keepAliveTimeout: 30_000, connections: 25 };
    let root: Dispatcher;
    if (this.config.proxyUrl) {
      const proxy = new URL(this.config.proxyUrl);
      if (proxy.protocol === 'socks5:') {
        root = new Socks5ProxyAgent(this.config.proxyUrl, { requestTls: tls } as ConstructorParameters<
          typeof Socks5ProxyAgent
        >[1]);
      } else {
        root = new ProxyAgent({ ...common, uri: this.config.proxyUrl, requestTls: tls });
      }
    } else {
      const { httpsProxy, httpProxy, noProxy } = proxyEnv(this.env);
      if (httpsProxy || httpProxy) {
        root = new EnvHttpProxyAgent({
          ...common,
          connect: tls,
          requestTls: tls,
          ...(httpProxy ? { httpProxy } : {}),
          ...(httpsProxy ? { httpsProxy } : {}),
          noProxy: noProxy ?? '',
        });
      } else {
        root = new Agent({ ...common, connect: tls });
      }
    }
    this.owned.push(root);
    return {
      root,
      dispatcher: this.config.disableCompression ? root : root.compose(gunzipInterceptor()),
    };
  }

  private dispatcherFor(creds: RequestCredentials): Dispatcher {
    const cert = creds.clientCertificate;
    if (!cert) return this.pool.dispatcher;
    if (this.certDispatcher?.certData !== cert.certData) {
      // A rotated exec client certificate: new connections with it, the old pool is closed (client-go
      // closes tracked connections on rotation).
      const old = this.certDispatcher;
      this.certDispatcher = { certData: cert.certData, ...this.createDispatcher(cert) };
      if (old) {
        this.owned.splice(this.owned.indexOf(old.root), 1);
        void old.root.close().catch(() => undefined);
      }
    }
    return this.certDispatcher.dispatcher;
  }

  private buildHeaders(req: TransportRequest, creds: RequestCredentials): Record<string, string | string[]> {
    const h: Record<string, string | string[]> = {};
    h['user-agent'] = this.config.userAgent;
    if (!this.config.disableCompression) h['accept-encoding'] = 'gzip';
    for (const [k, v] of Object.entries(req.headers ?? {})) h[k.toLowerCase()] = v;
    for (const [k, v] of Object.entries(creds.headers)) {
      const key = k.toLowerCase();
      // A request that already carries Authorization keeps it (client-go's bearer round-tripper rule).
      if (key === 'authorization' && h.authorization !== undefined) continue;
      h[key] = v;
    }
    for (const [k, v] of Object.entries(creds.multiHeaders ?? {})) h[k.toLowerCase()] = [...v];
    return h;
  }

  private urlForDiagnostics(path: string): string {
    const q = path.indexOf('?');
    return `${this.base.host}${this.basePath}${q >= 0 ? path.slice(0, q) : path}`;
  }

  /**
   * Send one request (with the throttling, retries and credential refresh described on the class).
   * @throws {TransportError} when no HTTP answer was obtained (timeout, abort, connection or TLS failure,
   *   credentials unavailable). HTTP error statuses are returned, not thrown.
   */
  async request(req: TransportRequest): Promise<TransportResponse> {
    if (this.closed) throw new TransportError('ConnectionFailed', 'transport is closed');
    const url = this.urlForDiagnostics(req.path);
    if (!req.stream && this.limiter) await this.throttle(req, url, 'client-side throttling');
    // client-go starts the request timeout after the first throttle and lets it bound every attempt and
    // every retry wait; it also tells the server with `?timeout=`.
    const timeoutMs = req.stream ? 0 : this.config.timeoutMs;
    // One timer-backed deadline per request, disposed when the body closes (it bounds reading the body too).
    const deadline = timeoutMs > 0 ? withDeadline(req.signal, timeoutMs, this.clock) : undefined;
    const signal = deadline?.signal ?? req.signal;
    try {
      const res = await this.attempts(req, url, timeoutMs, signal, deadline);
      if (deadline) {
        if (res.body.closed || res.body.destroyed) deadline.dispose();
        else res.body.once('close', deadline.dispose);
      }
      return res;
    } catch (e) {
      deadline?.dispose();
      throw e;
    }
  }

  private async attempts(
    req: TransportRequest,
    url: string,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    deadline: Deadline | undefined,
  ): Promise<TransportResponse> {
    const original = req;
    req = {
      ...req,
      path: timeoutMs > 0 ? withTimeoutQuery(req.path, timeoutMs) : req.path,
      ...(signal ? { signal } : {}),
    };

    let retries = 0;
    let unauthorizedRetried = false;
    for (let attempt = 1; ; attempt++) {
      let creds: RequestCredentials;
      try {
        creds = await this.credentials.get();
      } catch (e) {
        throw new TransportError('Credentials', `cannot get credentials: ${(e as Error).message}`, {
          cause: e,
        });
      }
      await this.maybeReloadTls();
      const started = performance.now();
      let res: Dispatcher.ResponseData;
      try {
        res = await this.send(req, creds);
      } catch (e) {
        const code = errorCode(e) ?? 'error';
        this.publishRequest({
          method: req.method,
          url,
          status: 0,
          attempt,
          durationMs: performance.now() - started,
          errorCode: code,
        });
        const canRetry =
          req.method === 'GET' && !req.stream && retries < this.maxRetries && isConnectionReset(e);
        if (canRetry && !req.signal?.aborted) {
          retries++;
          await this.waitForRetry(req, url, {
            status: 500,
            retry: retries,
            waitMs: 1000,
            reason: `connection reset (${code})`,
          });
          continue;
        }
        throw this.wrapError(e, original, deadline?.signal);
      }
      this.publishRequest({
        method: req.method,
        url,
        status: res.statusCode,
        attempt,
        durationMs: performance.now() - started,
      });
      this.publishWarnings(res.headers.warning);

      if (res.statusCode === 401 && !unauthorizedRetried && !req.signal?.aborted) {
        unauthorizedRetried = true;
        let again = false;
        try {
          again = await this.credentials.onUnauthorized(creds);
        } catch {
          again = false;
        }
        if (again) {
          await res.body.dump().catch(() => undefined);
          continue;
        }
      }
      const retryAfter = retryAfterSeconds(res.headers['retry-after']);
      if (
        !req.stream &&
        (res.statusCode === 429 || res.statusCode >= 500) &&
        retryAfter !== undefined &&
        retries < this.maxRetries
      ) {
        retries++;
        await res.body.dump().catch(() => undefined);
        const fs = res.headers['x-kubernetes-pf-flowschema-uid'];
        await this.waitForRetry(req, url, {
          status: res.statusCode,
          retry: retries,
          waitMs: retryAfter * 1000,
          reason: `retries: ${retries}, retry-after: ${retryAfter}s - retry-reason: ${
            res.statusCode === 429
              ? `due to server-side throttling, FlowSchema UID: "${String(fs ?? '')}"`
              : `${res.statusCode}`
          }`,
        });
        continue;
      }
      return { status: res.statusCode, headers: res.headers, body: res.body };
    }
  }

  private async send(req: TransportRequest, creds: RequestCredentials): Promise<Dispatcher.ResponseData> {
    const signal = req.signal;
    const opts: Dispatcher.RequestOptions = {
      origin: this.base.origin,
      path: `${this.basePath}${req.path.startsWith('/') ? '' : '/'}${req.path}`,
      method: req.method,
      headers: this.buildHeaders(req, creds),
      ...(req.body !== undefined ? { body: req.body } : {}),
      ...(signal ? { signal } : {}),
      ...(req.stream ? { bodyTimeout: 0 } : {}),
    };
    return this.dispatcherFor(creds).request(opts);
  }

  private wrapError(e: unknown, req: TransportRequest, deadline?: AbortSignal): TransportError {
    const what = `${req.method} ${this.urlForDiagnostics(req.path)}`;
    if (e instanceof TransportError) return e;
    if (req.signal?.aborted) return new TransportError('Aborted', `${what}: aborted`, { cause: e });
    const name = (e as { name?: string } | null)?.name;
    if (
      deadline?.aborted ||
      name === 'TimeoutError' ||
      errorCode(e) === 'UND_ERR_HEADERS_TIMEOUT' ||
      errorCode(e) === 'UND_ERR_BODY_TIMEOUT'
    ) {
      return new TransportError('Timeout', `${what}: timed out after ${this.config.timeoutMs} ms`, {
        cause: e,
      });
    }
    if (isTlsError(e)) {
      return new TransportError('TLSFailed', `${what}: TLS failed: ${(e as Error).message}`, { cause: e });
    }
    return new TransportError('ConnectionFailed', `${what}: ${(e as Error)?.message ?? String(e)}`, {
      cause: e,
    });
  }

  private async throttle(req: TransportRequest, url: string, _why: string): Promise<void> {
    const limiter = this.limiter;
    if (!limiter) return;
    const started = performance.now();
    try {
      await limiter.wait(req.signal);
    } catch (e) {
      throw timeoutOrAbort(e, req, url, this.config.timeoutMs, 'while throttled');
    }
    const waitedMs = performance.now() - started;
    if (waitedMs > 1 && channels.throttle.hasSubscribers) {
      const d: ThrottleDiagnostic = {
        method: req.method,
        url,
        waitedMs,
        reason: 'client-side throttling, not priority and fairness',
      };
      channels.throttle.publish(d);
    }
  }

  private async waitForRetry(
    req: TransportRequest,
    url: string,
    d: Omit<RetryDiagnostic, 'method' | 'url'>,
  ): Promise<void> {
    if (channels.retry.hasSubscribers)
      channels.retry.publish({ method: req.method, url, ...d } satisfies RetryDiagnostic);
    try {
      await sleep(d.waitMs, req.signal, this.clock);
    } catch (e) {
      throw timeoutOrAbort(e, req, url, this.config.timeoutMs, 'while waiting to retry');
    }
    if (this.limiter) await this.throttle(req, url, 'retry');
  }

  private publishWarnings(header: string | string[] | undefined): void {
    if (header === undefined) return;
    for (const message of parseWarningHeaders(header)) {
      if (channels.warning.hasSubscribers) channels.warning.publish({ message } satisfies WarningDiagnostic);
      this.onWarning?.(message);
    }
  }

  private publishRequest(d: RequestDiagnostic): void {
    if (channels.request.hasSubscribers) channels.request.publish(d);
  }

  /** Close every pooled connection. Requests in flight finish; new ones are refused. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(this.owned.map((d) => d.close().catch(() => undefined)));
  }
}

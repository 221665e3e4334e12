import {
  type CredentialProvider,
  credentialProviderFor,
  type RequestCredentials,
  type RestConfig,
} from '@kubeloop/config';
import type { Dispatcher } from 'undici';
import { type Clock, realClock, sleep } from '../clock.js';
import { type Deadline, withDeadline } from '../deadline.js';
import { discardLogger, type Logger } from '../logger.js';
import {
  channels,
  type RequestDiagnostic,
  type RetryDiagnostic,
  type ThrottleDiagnostic,
  type WarningDiagnostic,
} from './diagnostics.js';
import { createPool, type Pool, type PoolSpec } from './dispatcher.js';
import { errorCode, isConnectionReset, TransportError, toTransportError } from './errors.js';
import {
  parseWarningHeaders,
  requestHeaders,
  retryAfterSeconds,
  timeoutSecondsOf,
  withTimeoutQuery,
} from './headers.js';
import { afterAnswer, afterFailure, type NextStep, streamIdleBoundMs } from './request-policy.js';
import { STREAM_IDLE_MS } from './stream-errors.js';
import { TlsFiles } from './tls-files.js';
import { type RateLimiter, TokenBucketRateLimiter } from './token-bucket-rate-limiter.js';
import { newWarningLogger, type WarningHandler } from './warning-handler.js';

/** One HTTP request to the API server. */
export interface TransportRequest {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path and query, relative to `config.host` (a path prefix in `host` is kept). */
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Uint8Array;
  readonly signal?: AbortSignal;
  /**
   * A watch or other long stream: not throttled, no request timeout, no 429/5xx or reset retries
   * (client-go); cut by the idle watchdog when no byte arrives within its bound. The one retry it can get is
   * after a 401 that refreshed the credentials.
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
  /** Clock for throttling, retry waits, the request deadline and TLS re-reads. Default the real one. */
  readonly clock?: Clock;
  /** How often CA and client certificate files are re-read (ms). Default 300 000 (client-go's 5 minutes). */
  readonly tlsReloadIntervalMs?: number;
  /** Proxy environment (`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`, lower case too) and `DISABLE_HTTP2`. Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * Where the transport logs (warnings from the server, TLS verification disabled — once per transport, at
   * construction —, TLS re-read and credential refresh failures). Default none.
   */
  readonly logger?: Logger;
  /**
   * Receives each server `Warning:` header text (code 299), as client-go's `WarningHandler`; they are also
   * published on `kubeloop:client:warning`. Default: {@link newWarningLogger}(`logger`) — each distinct
   * text logged once.
   */
  readonly warningHandler?: WarningHandler;
  /**
   * Idle bound of streams (watches), in ms: a stream that receives no byte (headers included) for this long
   * is cut with `TransportError('IdleTimeout')`. Never more than the watch's `timeoutSeconds` + 30 s. 0 turns
   * the watchdog off. Default 120 000 (kube-apiserver sends a bookmark about once a minute).
   */
  readonly watchIdleTimeoutMs?: number;
  /**
   * Offer HTTP/2 (ALPN) on direct https connections; on h2 every request and watch shares one connection.
   * A non-empty `DISABLE_HTTP2` in `env` (client-go's switch) forces HTTP/1.1 even when true. Default false
   * (see the transport README: a write right after a server restart can fail on the dying h2 session).
   */
  readonly http2?: boolean;
  /** h2 PING interval in ms (connection liveness). Default 30 000 (client-go's `ReadIdleTimeout`); 0 off. */
  readonly pingIntervalMs?: number;
}

/**
 * The HTTP transport to one API server (client-go `rest.Request` over one `http.Transport`): one pooled
 * undici dispatcher — one h2 connection when `http2` is on and the server offers h2, else an HTTP/1.1 pool — with TLS from
 * `config.tlsClientConfig` and proxies from `config.proxyUrl` or the environment:
 * - the limiter is taken once before the first attempt of every non-stream request, and again before every
 *   retry; streams (watches) are never throttled or timed out, nor retried after an answer;
 * - a 429 or ≥ 500 answer with an integer `Retry-After` is retried (at most `maxRetries`), waiting at least
 *   `Retry-After` seconds; a GET that fails on a connection reset before any answer (a stale keep-alive or h2
 *   connection after an API server restart: "other side closed") is retried as a 500 with `Retry-After: 1`,
 *   a watch once, on a new connection; writes never are;
 * - credentials come from the {@link CredentialProvider} on every attempt; after a 401 the request is retried
 *   once when the provider says new credentials exist (token file re-read, exec plugin re-run);
 * - `config.timeoutMs` bounds each non-stream request including reading its body (a timer-backed deadline);
 * - streams have an idle watchdog (`watchIdleTimeoutMs`).
 * Diagnostics go to `node:diagnostics_channel` (`kubeloop:client:*`, see `channels`).
 */
export class Transport {
  readonly config: RestConfig;
  readonly #base: URL;
  readonly #basePath: string;
  readonly #limiter: RateLimiter | null;
  readonly #maxRetries: number;
  readonly #credentials: CredentialProvider;
  readonly #clock: Clock;
  readonly #env: Readonly<Record<string, string | undefined>>;
  readonly #log: Logger;
  readonly #warnings: WarningHandler;
  readonly #idleMs: number;
  readonly #http2: boolean;
  readonly #pingIntervalMs: number;
  readonly #tls: TlsFiles;
  /** Every pool not closed yet. */
  readonly #owned = new Set<Pool>();
  #pool: Promise<Pool> | undefined;
  #certPool: { certData: string; pool: Promise<Pool> } | undefined;
  #closed = false;

  /**
   * @throws {TransportError} `InvalidConfig` when `config.host` is not an http(s) URL, or when a CA is given
   *   together with `insecure` (client-go: a root CA with the insecure flag is not allowed).
   */
  constructor(config: RestConfig, options: TransportOptions = {}) {
    this.config = config;
    let base: URL;
    try {
      base = new URL(config.host);
    } catch {
      throw new TransportError('InvalidConfig', 'config.host is not a valid URL');
    }
    if (base.protocol !== 'https:' && base.protocol !== 'http:') {
      throw new TransportError('InvalidConfig', `config.host has unsupported scheme ${base.protocol}`);
    }
    if (config.tlsClientConfig.insecure && config.tlsClientConfig.caData) {
      throw new TransportError(
        'InvalidConfig',
        'tlsClientConfig: caData and insecure are mutually exclusive (a root CA with the insecure flag is not allowed)',
      );
    }
    this.#base = base;
    this.#basePath = base.pathname.replace(/\/+$/, '');
    this.#clock = options.clock ?? realClock;
    this.#limiter =
      options.rateLimiter !== undefined
        ? options.rateLimiter
        : config.qps > 0
          ? new TokenBucketRateLimiter(config.qps, Math.max(1, config.burst), this.#clock)
          : null;
    this.#maxRetries = options.maxRetries ?? 10;
    this.#credentials = options.credentials ?? credentialProviderFor(config);
    this.#env = options.env ?? process.env;
    this.#log = options.logger ?? discardLogger;
    this.#warnings = options.warningHandler ?? newWarningLogger(this.#log);
    this.#idleMs = options.watchIdleTimeoutMs ?? 120_000;
    this.#http2 = options.http2 ?? false;
    this.#pingIntervalMs = options.pingIntervalMs ?? 30_000;
    this.#tls = new TlsFiles(config, this.#clock, options.tlsReloadIntervalMs ?? 5 * 60_000, (message) =>
      this.#warn(message),
    );
    // Verification off is worth one warning per transport, here and never again (not per pool, connection
    // or request): client-go's transport logs once when it builds a TLS config with InsecureSkipVerify.
    if (base.protocol === 'https:' && config.tlsClientConfig.insecure) {
      this.#warn(
        'TLS verification is disabled (tlsClientConfig.insecure): the API server certificate is not checked, so the connection is not protected against an impostor',
      );
    }
  }

  /**
   * The protocol of the shared pool once a request has connected (`'h2'` or `'http/1.1'`), else undefined.
   */
  async protocol(): Promise<Pool['protocol'] | undefined> {
    return this.#pool ? (await this.#pool.catch(() => undefined))?.protocol : undefined;
  }

  /** Connections (h2) or agents (HTTP/1.1) the shared pool has opened; 0 before the first request. */
  async connections(): Promise<number> {
    return this.#pool ? ((await this.#pool.catch(() => undefined))?.size() ?? 0) : 0;
  }

  #spec(pem: PoolSpec['pem']): PoolSpec {
    return {
      config: this.config,
      pem,
      env: this.#env,
      http2: this.#http2,
      pingIntervalMs: this.#pingIntervalMs,
    };
  }

  /** A new pool, tracked for close(); refused once the transport is closed. */
  #newPool(pem: PoolSpec['pem']): Promise<Pool> {
    if (this.#closed) return Promise.reject(new TransportError('ConnectionFailed', 'transport is closed'));
    const p = createPool(this.#spec(pem)).then((pool) => {
      if (this.#closed) {
        void pool.close(true).catch(() => undefined);
        throw new TransportError('ConnectionFailed', 'transport is closed');
      }
      this.#owned.add(pool);
      return pool;
    });
    p.catch(() => undefined);
    return p;
  }

  /**
   * Closes a replaced pool once its requests finish; it stays in `#owned` until then, so a forced
   * `close()` still destroys what it carries.
   */
  #retire(pool: Promise<Pool> | undefined): void {
    void pool
      ?.then(async (p) => {
        await p.close();
        this.#owned.delete(p);
      })
      .catch(() => undefined);
  }

  async #poolFor(creds: RequestCredentials): Promise<Pool> {
    if (await this.#tls.maybeReload()) {
      // New PEMs: new requests go to a new pool, the old one closes once idle (client-go's CA rotation).
      const old = this.#pool;
      this.#pool = undefined;
      this.#retire(old);
      this.#warn('TLS files changed; new connections use them');
    }
    const cert = creds.clientCertificate;
    if (!cert) {
      if (!this.#pool) {
        const pool = this.#newPool(this.#tls.pem);
        this.#pool = pool;
        // A failed connection (the ALPN probe) is not remembered: the next request tries again.
        pool.catch(() => {
          if (this.#pool === pool) this.#pool = undefined;
        });
      }
      return this.#pool;
    }
    if (this.#certPool?.certData !== cert.certData) {
      // A rotated exec client certificate: new connections with it, the old pool is closed (client-go
      // closes tracked connections on rotation).
      const old = this.#certPool?.pool;
      this.#certPool = {
        certData: cert.certData,
        pool: this.#newPool({ ...this.#tls.pem, certData: cert.certData, keyData: cert.keyData }),
      };
      this.#retire(old);
    }
    return this.#certPool.pool;
  }

  #urlForDiagnostics(path: string): string {
    const q = path.indexOf('?');
    return `${this.#base.host}${this.#basePath}${q >= 0 ? path.slice(0, q) : path}`;
  }

  /**
   * Send one request (with the throttling, retries and credential refresh described on the class).
   * @throws {TransportError} when no HTTP answer was obtained (timeout, abort, idle stream, connection or TLS
   *   failure, credentials unavailable). HTTP error statuses are returned, not thrown.
   */
  async request(req: TransportRequest): Promise<TransportResponse> {
    if (this.#closed) throw new TransportError('ConnectionFailed', 'transport is closed');
    const url = this.#urlForDiagnostics(req.path);
    const stream = req.stream === true;
    if (!stream && this.#limiter) {
      try {
        await this.#throttle(req.method, url, req.signal);
      } catch (e) {
        throw new TransportError('Aborted', `${req.method} ${url}: aborted while throttled`, { cause: e });
      }
    }
    // client-go starts the request timeout after the first throttle and lets it bound every attempt, every
    // retry wait and reading the body; it also tells the server with `?timeout=`. A stream never gets it.
    const timeoutMs = stream ? 0 : this.config.timeoutMs;
    const deadline = timeoutMs > 0 ? withDeadline(req.signal, timeoutMs, this.#clock) : undefined;
    try {
      const res = await this.#attempts(req, url, stream, timeoutMs, deadline);
      if (deadline) {
        // The deadline lives until the body is read (or dumped), then lets go of the caller's signal.
        if (res.body.closed || res.body.destroyed || res.body.readableEnded) deadline.dispose();
        else res.body.once('end', deadline.dispose).once('close', deadline.dispose);
      }
      return res;
    } catch (e) {
      deadline?.dispose();
      throw e;
    }
  }

  async #attempts(
    req: TransportRequest,
    url: string,
    stream: boolean,
    timeoutMs: number,
    deadline: Deadline | undefined,
  ): Promise<TransportResponse> {
    const signal = deadline?.signal ?? req.signal;
    const path = timeoutMs > 0 ? withTimeoutQuery(req.path, timeoutMs) : req.path;
    const idleMs = stream ? streamIdleBoundMs(this.#idleMs, timeoutSecondsOf(req.path)) : 0;
    const fail = (e: unknown) =>
      toTransportError(e, {
        what: `${req.method} ${url}`,
        stream,
        callerAborted: req.signal?.aborted === true,
        timedOut: deadline?.timedOut === true,
        timeoutMs,
        idleTimeoutMs: idleMs,
      });
    let retries = 0;
    let unauthorizedRetried = false;
    for (let attempt = 1; ; attempt++) {
      let creds: RequestCredentials;
      try {
        creds = await this.#credentials.get();
      } catch (e) {
        throw new TransportError('Credentials', `cannot get credentials: ${(e as Error).message}`, {
          cause: e,
        });
      }
      const started = performance.now();
      let res: Dispatcher.ResponseData;
      try {
        const pool = await this.#poolFor(creds);
        const opts: Dispatcher.RequestOptions & { [STREAM_IDLE_MS]?: number } = {
          origin: this.#base.origin,
          path: `${this.#basePath}${path.startsWith('/') ? '' : '/'}${path}`,
          method: req.method,
          headers: requestHeaders(this.config, req.headers, creds),
          ...(req.body !== undefined ? { body: req.body } : {}),
          ...(signal ? { signal } : {}),
          // The idle watchdog: undici's headers and body timeouts bound the silence between bytes.
          ...(stream ? { bodyTimeout: idleMs, headersTimeout: idleMs, [STREAM_IDLE_MS]: idleMs } : {}),
        };
        res = await pool.request(opts);
      } catch (e) {
        const code = errorCode(e) ?? 'error';
        this.#publishRequest({
          method: req.method,
          url,
          status: 0,
          attempt,
          durationMs: performance.now() - started,
          errorCode: code,
        });
        const next = afterFailure({
          method: req.method,
          stream,
          connectionReset: isConnectionReset(e),
          errorCode: code,
          retries,
          maxRetries: this.#maxRetries,
          aborted: signal?.aborted === true,
        });
        if (next.kind !== 'retry') throw fail(e);
        retries++;
        await this.#waitForRetry(req.method, url, signal, next, retries, fail, stream);
        continue;
      }
      this.#publishRequest({
        method: req.method,
        url,
        status: res.statusCode,
        attempt,
        durationMs: performance.now() - started,
      });
      this.#publishWarnings(res.headers.warning);
      const fs = res.headers['x-kubernetes-pf-flowschema-uid'];
      const next = afterAnswer({
        status: res.statusCode,
        retryAfterSeconds: retryAfterSeconds(res.headers['retry-after']),
        flowSchemaUid: fs === undefined ? undefined : String(fs),
        stream,
        retries,
        maxRetries: this.#maxRetries,
        unauthorizedRetried,
        aborted: signal?.aborted === true,
      });
      if (next.kind === 'refresh-credentials') {
        unauthorizedRetried = true;
        let again = false;
        try {
          again = await this.#credentials.onUnauthorized(creds);
        } catch (e) {
          this.#warn(`refreshing credentials after a 401 failed: ${(e as Error)?.message ?? String(e)}`);
        }
        if (again) {
          await res.body.dump().catch(() => undefined);
          continue;
        }
      } else if (next.kind === 'retry') {
        retries++;
        await res.body.dump().catch(() => undefined);
        await this.#waitForRetry(req.method, url, signal, next, retries, fail);
        continue;
      }
      return { status: res.statusCode, headers: res.headers, body: res.body };
    }
  }

  async #throttle(method: string, url: string, signal: AbortSignal | undefined): Promise<void> {
    const limiter = this.#limiter;
    if (!limiter) return;
    const started = this.#clock.now();
    await limiter.wait(signal);
    const waitedMs = this.#clock.now() - started;
    if (waitedMs > 1 && channels.throttle.hasSubscribers) {
      channels.throttle.publish({
        method,
        url,
        waitedMs,
        reason: 'client-side throttling, not priority and fairness',
      } satisfies ThrottleDiagnostic);
    }
  }

  async #waitForRetry(
    method: string,
    url: string,
    signal: AbortSignal | undefined,
    next: NextStep & { kind: 'retry' },
    retry: number,
    fail: (e: unknown) => TransportError,
    stream = false,
  ): Promise<void> {
    if (channels.retry.hasSubscribers) {
      channels.retry.publish({
        method,
        url,
        status: next.status,
        retry,
        waitMs: next.waitMs,
        reason: next.reason,
      } satisfies RetryDiagnostic);
    }
    try {
      await sleep(next.waitMs, signal, this.#clock);
      // Streams are never throttled, their retry neither.
      if (!stream) await this.#throttle(method, url, signal);
    } catch (e) {
      throw fail(e);
    }
  }

  #warn(message: string): void {
    if (channels.warning.hasSubscribers) channels.warning.publish({ message } satisfies WarningDiagnostic);
    this.#log.warn({ host: this.#base.host }, message);
  }

  #publishWarnings(header: string | string[] | undefined): void {
    if (header === undefined) return;
    for (const message of parseWarningHeaders(header)) {
      if (channels.warning.hasSubscribers) channels.warning.publish({ message } satisfies WarningDiagnostic);
      try {
        this.#warnings.handleWarning(message);
      } catch {
        // a handler must not break the request
      }
    }
  }

  #publishRequest(d: RequestDiagnostic): void {
    if (channels.request.hasSubscribers) channels.request.publish(d);
  }

  /**
   * Close every pooled connection. Requests in flight finish; new ones are refused (no pool is created after
   * this). `{ force: true }` destroys the connections at once (in-flight requests and streams fail with a
   * `ConnectionFailed` TransportError), for a shutdown past its grace period — also when a graceful close
   * has already started and is still waiting for them, and for pools retired by a certificate rotation.
   */
  async close(options: { force?: boolean } = {}): Promise<void> {
    if (this.#closed && !options.force) return;
    this.#closed = true;
    const pending = [this.#pool, this.#certPool?.pool].filter((p) => p !== undefined);
    await Promise.all(pending.map((p) => p.catch(() => undefined)));
    const owned = [...this.#owned];
    await Promise.all(owned.map((p) => p.close(options.force).catch(() => undefined)));
    for (const p of owned) this.#owned.delete(p);
  }
}

import {
  type CredentialProvider,
  credentialProviderFor,
  type RequestCredentials,
  type RestConfig,
} from '@kubeloop/config';
import {
  type Clock,
  type Deadline,
  discardLogger,
  type Logger,
  realClock,
  sleep,
  withDeadline,
} from '@kubeloop/core';
import type { Dispatcher } from 'undici';
import { ConnectionPools } from './connection-pools.js';
import {
  channels,
  type RequestDiagnostic,
  type RetryDiagnostic,
  type ThrottleDiagnostic,
  type WarningDiagnostic,
} from './diagnostics.js';
import type { Pool } from './dispatcher.js';
import { errorCode, isConnectionReset, isRefusedStream, TransportError, toTransportError } from './errors.js';
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
import type { TransportOptions, TransportRequest, TransportResponse } from './transport-options.js';
import { newWarningLogger, type WarningHandler } from './warning-handler.js';

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
  readonly #pools: ConnectionPools;

  /**
   * @throws {TransportError} `InvalidConfig` when `config.host` is not an http(s) URL, or when a CA is given
   *   together with `insecure` (client-go: a root CA with the insecure flag is not allowed).
   */
  constructor(config: RestConfig, options: TransportOptions = {}) {
    // A config built by hand in JavaScript may lack tlsClientConfig: no TLS options, as Go's zero value.
    if (config && !config.tlsClientConfig) config = { ...config, tlsClientConfig: {} };
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
      options.rateLimiter !== undefined ? options.rateLimiter : defaultLimiter(config, this.#clock);
    this.#maxRetries = options.maxRetries ?? 10;
    this.#credentials = options.credentials ?? credentialProviderFor(config);
    this.#env = options.env ?? process.env;
    this.#log = options.logger ?? discardLogger;
    this.#warnings = options.warningHandler ?? newWarningLogger(this.#log);
    this.#idleMs = options.watchIdleTimeoutMs ?? 120_000;
    const warn = (message: string) => this.#warn(message);
    const tls = new TlsFiles(config, this.#clock, options.tlsReloadIntervalMs ?? 5 * 60_000, warn);
    this.#pools = new ConnectionPools(
      {
        config,
        env: this.#env,
        http2: options.http2 ?? false,
        pingIntervalMs: options.pingIntervalMs ?? 30_000,
      },
      tls,
      warn,
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
    return (await this.#pools.shared())?.protocol;
  }

  /** Connections (h2) or agents (HTTP/1.1) the shared pool has opened; 0 before the first request. */
  async connections(): Promise<number> {
    return (await this.#pools.shared())?.size() ?? 0;
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
    if (this.#pools.closed) throw new TransportError('ConnectionFailed', 'transport is closed');
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
        const pool = await this.#pools.forCredentials(creds);
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
          refusedStream: isRefusedStream(e),
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
  close(options: { force?: boolean } = {}): Promise<void> {
    return this.#pools.close(options);
  }
}

/**
 * The token bucket of a config, as client-go's `rest.RESTClientFor` builds it: `qps` 0 (or absent) means
 * client-go's `DefaultQPS` 5 and `burst` 0 its `DefaultBurst` 10; a negative `qps` means no limiter.
 */
function defaultLimiter(config: RestConfig, clock: Clock): RateLimiter | null {
  const qps = config.qps === undefined || config.qps === 0 ? 5 : config.qps;
  const burst = config.burst === undefined || config.burst === 0 ? 10 : config.burst;
  if (!(qps > 0) || !Number.isFinite(qps)) return null;
  return new TokenBucketRateLimiter(qps, Math.max(1, burst), clock);
}

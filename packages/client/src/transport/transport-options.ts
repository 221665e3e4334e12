/**
 * The shapes of the `Transport` API: its options, its request (the client's `HttpRequest`) and its
 * answer (an undici body).
 */
import type { CredentialProvider } from '@kubeloop/config';
import type { Clock, Logger } from '@kubeloop/core';
import type { Dispatcher } from 'undici';
import type { HttpRequest } from '../http.js';
import type { RateLimiter, TokenBucketRateLimiter } from './token-bucket-rate-limiter.js';
import type { newWarningLogger, WarningHandler } from './warning-handler.js';

/** One HTTP request to the API server: the {@link HttpRequest} the client sends through its transport seam. */
export type TransportRequest = HttpRequest;

/** The answer; `body` must be consumed (or dumped) exactly once. */
export interface TransportResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Dispatcher.ResponseData['body'];
}

/** Options of `Transport`. */
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

/** Stable codes of {@link TransportError}. */
export type TransportErrorCode =
  | 'Timeout'
  | 'Aborted'
  | 'ConnectionFailed'
  | 'TLSFailed'
  | 'Credentials'
  | 'InvalidConfig'
  | 'IdleTimeout';

import { BrandedError } from '@kubeloop/core';

/**
 * A request failed without an HTTP answer (after any retries), or a stream stopped. Its message never has
 * headers or a body. `code`:
 * - `Timeout`: `config.timeoutMs` ran out (client-go's request timeout);
 * - `Aborted`: the caller's signal aborted;
 * - `IdleTimeout`: a stream (watch) received no byte within its idle bound — headers or body — and was cut;
 *   resume it from the last resourceVersion (see the transport README);
 * - `ConnectionFailed`, `TLSFailed`, `Credentials`, `InvalidConfig`.
 *
 * `instanceof TransportError` also holds for an error made by another installed copy of this package.
 */
export class TransportError extends BrandedError {
  static override readonly brandName: string = 'client.TransportError';
  override readonly name = 'TransportError';
  readonly code: TransportErrorCode;
  constructor(code: TransportErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

/** The string `code` of an error (Node's and undici's), if any. @internal */
export function errorCode(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** A connection reset or closed under the request, anywhere in the `cause` chain. @internal */
export function isConnectionReset(e: unknown): boolean {
  const code = errorCode(e);
  if (code && RESET_CODES.has(code)) return true;
  const cause = (e as { cause?: unknown } | null)?.cause;
  return cause !== undefined && cause !== e && isConnectionReset(cause);
}

/**
 * An h2 stream the server refused before processing it (RST_STREAM REFUSED_STREAM, RFC 9113 §8.7: "the client
 * can safely retry"), e.g. sent past the server's SETTINGS_MAX_CONCURRENT_STREAMS before that frame arrived.
 * @internal
 */
export function isRefusedStream(e: unknown): boolean {
  for (let x = e, depth = 0; x && depth < 8; x = (x as { cause?: unknown }).cause, depth++) {
    if (/\bNGHTTP2_REFUSED_STREAM\b/.test(String((x as { message?: unknown }).message ?? ''))) return true;
  }
  return false;
}

/** @internal */
export function isTlsError(e: unknown): boolean {
  return /CERT|SSL|TLS|SELF_SIGNED|ERR_TLS|HOSTNAME|UNABLE_TO_VERIFY|ALTNAME/.test(errorCode(e) ?? '');
}

/** undici's "no byte for bodyTimeout / no headers for headersTimeout" errors. @internal */
export function isIdleTimeout(e: unknown): boolean {
  const code = errorCode(e);
  return code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT';
}

/** What failed, for {@link toTransportError}. @internal */
export interface FailureContext {
  /** `GET host/path`, no query. */
  readonly what: string;
  readonly stream: boolean;
  readonly callerAborted: boolean;
  readonly timedOut: boolean;
  readonly timeoutMs: number;
  readonly idleTimeoutMs: number;
}

/** Maps any failure of an attempt to a {@link TransportError} (pure). @internal */
export function toTransportError(e: unknown, c: FailureContext): TransportError {
  if (e instanceof TransportError) return e;
  if (c.callerAborted) return new TransportError('Aborted', `${c.what}: aborted`, { cause: e });
  if (c.stream && isIdleTimeout(e)) {
    return new TransportError('IdleTimeout', `${c.what}: no data for ${c.idleTimeoutMs} ms`, { cause: e });
  }
  if (c.timedOut || (e as { name?: string } | null)?.name === 'TimeoutError' || isIdleTimeout(e)) {
    return new TransportError('Timeout', `${c.what}: timed out after ${c.timeoutMs} ms`, { cause: e });
  }
  if (isTlsError(e)) {
    return new TransportError('TLSFailed', `${c.what}: TLS failed: ${(e as Error).message}`, { cause: e });
  }
  return new TransportError('ConnectionFailed', `${c.what}: ${(e as Error)?.message ?? String(e)}`, {
    cause: e,
  });
}

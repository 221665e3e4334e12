import type { KubeObject } from '@kubeloop/client';
import { asStatusError, isExpired, isTimeout, isTooManyRequests } from '@kubeloop/client/errors';
import { TransportError } from '@kubeloop/client/transport';

// How the reflector tells apart the ways a list or watch ends (client-go reflector.go's error handling).

/** A list or watch with a resourceVersion the server has not reached (client-go `isTooLargeResourceVersionError`). */
export function isTooLargeResourceVersionError(err: unknown): boolean {
  const se = asStatusError(err);
  if (!se || !isTimeout(se)) return false;
  const causes = se.status.details?.causes ?? [];
  if (causes.some((c) => c.reason === 'ResourceVersionTooLarge')) return true;
  return /too large resource version/i.test(se.message);
}

/** A watch closed within a second without delivering an event: treated as a failure (backoff). Code `'ERR_VERY_SHORT_WATCH'`. */
export class VeryShortWatchError extends Error {
  readonly code = 'ERR_VERY_SHORT_WATCH' as const;
  override readonly name = 'VeryShortWatchError';
}

/** A streaming list that ended before its end bookmark (the reflector then falls back to list and watch). */
export class WatchListEndedError extends Error {
  override readonly name = 'WatchListEndedError';
}

/**
 * The transport's idle watchdog cut the watch: no byte (not even a bookmark) within its bound. A quiet watch is
 * normal on kube-apiserver — its cacher sends no bookmark for a resource type that saw no event since it started —
 * so this is resumed from the last resourceVersion, never relisted.
 */
export function isWatchIdleTimeout(err: unknown): boolean {
  return err instanceof TransportError && err.code === 'IdleTimeout';
}

/** A connection refused: no server listening; says nothing about what a server supports. */
export function isConnectionRefused(err: unknown): boolean {
  return causeChainHasCode(err, (code) => code === 'ECONNREFUSED');
}

const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

/**
 * A connection that was open and was cut (reset, closed by the other side), anywhere in the `cause` chain (the
 * transport reports it as a `ConnectionFailed` whose cause is the socket's error).
 */
export function isConnectionReset(err: unknown): boolean {
  return causeChainHasCode(err, (code) => RESET_CODES.has(code));
}

function causeChainHasCode(err: unknown, test: (code: string) => boolean): boolean {
  for (let e = err, depth = 0; e && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && test(code)) return true;
  }
  return false;
}

/**
 * What a failed streaming list says, for the reflector (client-go reflector.go `watchList` and its
 * `isErrorRetriableWithSideEffectsFn`):
 * - `'stopped'`: the reflector is stopping;
 * - `'unavailable'`: 410 Expired or "too large resource version": retried from the most recent state;
 * - `'retry'`: 429, or a connection refused or failed without a reset: back off and try WatchList again;
 * - `'reset'`: a connection cut under the stream: retried like `'retry'`, but only up to the reflector's
 *   `watchListResetLimit` in a row (client-go would retry it forever);
 * - `'refused'`: anything else — any other HTTP status, an ERROR event, a stream that ended or broke before
 *   its end bookmark, no end bookmark in time: list + watch instead.
 */
export type WatchListFailure = 'stopped' | 'unavailable' | 'retry' | 'reset' | 'refused';

export function watchListFailureOf(err: unknown, aborted: boolean): WatchListFailure {
  if (aborted) return 'stopped';
  if (isExpired(err) || isTooLargeResourceVersionError(err)) return 'unavailable';
  if (isTooManyRequests(err)) return 'retry';
  if (!isConnectionError(err)) return 'refused';
  return isConnectionReset(err) && !isConnectionRefused(err) ? 'reset' : 'retry';
}

export function isConnectionError(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return (
    code === 'ECONNREFUSED' ||
    code === 'ECONNRESET' ||
    code === 'UND_ERR_SOCKET' ||
    code === 'UND_ERR_CLOSED' ||
    code === 'EPIPE' ||
    code === 'ConnectionFailed'
  );
}

/** `namespace/name`, or `name` for a cluster-scoped object. */
export function keyOf(o: KubeObject): string {
  const ns = o.metadata?.namespace;
  return ns ? `${ns}/${o.metadata?.name ?? ''}` : (o.metadata?.name ?? '');
}

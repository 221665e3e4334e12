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
 * A streaming list that waited `timeoutMs` without its end bookmark (a server that ignores `sendInitialEvents`
 * streams on without one).
 */
export class WatchListTimeoutError extends Error {
  override readonly name = 'WatchListTimeoutError';
}

/**
 * Whether a failed streaming list is the server saying it does not serve streaming lists: an answer that a plain
 * list + watch of the same resource would not get, so it is about the server, not this request or resource:
 * - 400 or 422 naming `sendInitialEvents` or `resourceVersionMatch`: kube-apiserver with the WatchList feature gate
 *   off (422 "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"), or one older
 *   than 1.27 (422 "resourceVersionMatch is forbidden for watch"). A parameter refused this way is a 422 (field
 *   Forbidden), never an HTTP 403: a 403 is authorization, about the resource.
 * - 500 saying its storage cannot serve a watch stream: kube-apiserver 1.32 on an etcd without progress
 *   notifications (etcd 3.4) sends every streaming list one ERROR event "a watch stream was requested by the
 *   client but the required storage feature RequestWatchProgress is disabled".
 */
export function isWatchListRefusal(err: unknown): boolean {
  const se = asStatusError(err);
  if (!se) return false;
  if (se.httpStatus === 400 || se.httpStatus === 422) {
    const fields = (se.status.details?.causes ?? []).map((c) => c.field ?? '').join(' ');
    return /sendInitialEvents|resourceVersionMatch/.test(`${se.message} ${fields}`);
  }
  return se.httpStatus === 500 && /RequestWatchProgress|watch stream was requested/i.test(se.message);
}

/**
 * What a failed streaming list says, for the reflector. client-go (reflector.go `watchList` with
 * `isWatchErrorRetriable`, and `ListAndWatch`) retries 429, a connection refused, 410 and "too large resource
 * version", and falls back to list + watch on anything else, trying WatchList again on its next relist. Here the
 * fallback is split by what the answer says, because a refusal is remembered for the whole server:
 * - `'stopped'`: the reflector is stopping;
 * - `'unavailable'`: 410 Expired or "too large resource version": retried from the most recent state;
 * - `'retry'`: 429, or a connection refused or failed without a reset: back off and try WatchList again;
 * - `'reset'`: a connection cut under the stream: retried like `'retry'`, but only up to the reflector's
 *   `watchListResetLimit` in a row (client-go would retry it forever), then a refusal;
 * - `'refused'`: the server does not serve streaming lists ({@link isWatchListRefusal}), or no end bookmark came
 *   within the time bound ({@link WatchListTimeoutError}): list + watch, and remember it for the server;
 * - `'failed'`: this request failed and says nothing about streaming lists — the resource is not served (404, a
 *   CRD deleted or not created yet), the client is not allowed (401, 403), the server is failing or overloaded
 *   (any other 5xx, 405, other 400/422), an ERROR event with such a status, a stream that ends or breaks before
 *   its end bookmark, any other error (a timeout, a decode error): list + watch in this attempt as client-go does
 *   (a list that fails the same way is retried after the backoff), and try WatchList again on the next attempt.
 */
export type WatchListFailure = 'stopped' | 'unavailable' | 'retry' | 'reset' | 'refused' | 'failed';

export function watchListFailureOf(err: unknown, aborted: boolean): WatchListFailure {
  if (aborted) return 'stopped';
  if (isExpired(err) || isTooLargeResourceVersionError(err)) return 'unavailable';
  if (isTooManyRequests(err)) return 'retry';
  if (isConnectionError(err)) return isConnectionReset(err) && !isConnectionRefused(err) ? 'reset' : 'retry';
  if (err instanceof WatchListTimeoutError || isWatchListRefusal(err)) return 'refused';
  return 'failed';
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

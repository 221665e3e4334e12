/**
 * The small decisions of the request loop, as pure functions (client-go `rest/request.go`,
 * `rest/with_retry.go`): each takes what happened and says what to do next.
 */

/** What to do after an attempt. */
export type NextStep =
  | { readonly kind: 'return' }
  | { readonly kind: 'refresh-credentials' }
  | { readonly kind: 'retry'; readonly status: number; readonly waitMs: number; readonly reason: string };

/** What an attempt that got an HTTP answer saw. */
export interface AnsweredAttempt {
  readonly status: number;
  /** Integer seconds of `Retry-After`, if any. */
  readonly retryAfterSeconds: number | undefined;
  /** The `X-Kubernetes-PF-FlowSchema-UID` header, for the retry reason. */
  readonly flowSchemaUid: string | undefined;
  readonly stream: boolean;
  readonly retries: number;
  readonly maxRetries: number;
  readonly unauthorizedRetried: boolean;
  readonly aborted: boolean;
}

/**
 * After an answer: a 401 asks the credential provider once; a 429 or ≥ 500 with an integer `Retry-After`
 * is retried (non-stream only, at most `maxRetries`, waiting at least `Retry-After`); anything else is
 * returned as it is.
 */
export function afterAnswer(a: AnsweredAttempt): NextStep {
  if (a.status === 401 && !a.unauthorizedRetried && !a.aborted) return { kind: 'refresh-credentials' };
  if (
    !a.stream &&
    (a.status === 429 || a.status >= 500) &&
    a.retryAfterSeconds !== undefined &&
    a.retries < a.maxRetries
  ) {
    const retry = a.retries + 1;
    const why =
      a.status === 429
        ? `due to server-side throttling, FlowSchema UID: "${a.flowSchemaUid ?? ''}"`
        : `${a.status}`;
    return {
      kind: 'retry',
      status: a.status,
      waitMs: a.retryAfterSeconds * 1000,
      reason: `retries: ${retry}, retry-after: ${a.retryAfterSeconds}s - retry-reason: ${why}`,
    };
  }
  return { kind: 'return' };
}

/** What an attempt that failed without an answer saw. */
export interface FailedAttempt {
  readonly method: string;
  readonly stream: boolean;
  readonly connectionReset: boolean;
  /** The h2 stream was refused unprocessed (REFUSED_STREAM). */
  readonly refusedStream?: boolean;
  readonly errorCode: string;
  readonly retries: number;
  readonly maxRetries: number;
  readonly aborted: boolean;
}

/** How many times a stream (watch) is retried after a connection reset before any answer. */
export const STREAM_RESET_RETRIES = 1;

/**
 * After a failure without an answer: only a GET that hit a connection reset is retried, as a 500 with
 * `Retry-After: 1` (client-go `IsRetryableError` for idempotent verbs; a watch too, as client-go's
 * `Request.Watch` retries a connection reset or probable EOF). A plain GET is retried up to `maxRetries`, a
 * stream (watch) once ({@link STREAM_RESET_RETRIES}): that is what a stale connection needs (an h2 session
 * or keep-alive socket the API server dropped on a restart: "other side closed"), and a server that stays
 * away is the Reflector's to back off from. Writes are never retried (they may have been applied).
 */
export function afterFailure(f: FailedAttempt): NextStep {
  // Refused unprocessed: safe for any method (RFC 9113 §8.7), as Go's HTTP/2 transport retries it.
  if (f.refusedStream && !f.aborted && f.retries < f.maxRetries)
    return {
      kind: 'retry',
      status: 500,
      waitMs: 0,
      reason: 'h2 stream refused unprocessed (REFUSED_STREAM)',
    };
  if (f.method !== 'GET' || !f.connectionReset || f.aborted) return { kind: 'return' };
  const max = f.stream ? Math.min(STREAM_RESET_RETRIES, f.maxRetries) : f.maxRetries;
  if (f.retries < max) {
    return { kind: 'retry', status: 500, waitMs: 1000, reason: `connection reset (${f.errorCode})` };
  }
  return { kind: 'return' };
}

/** Client-go's watch idle grace over the server's `timeoutSeconds` before the client gives up. */
export const WATCH_IDLE_GRACE_MS = 30_000;

/**
 * The idle bound of a stream: `defaultMs` (0 = off), never more than `timeoutSeconds` (the server's own
 * end of the watch) plus {@link WATCH_IDLE_GRACE_MS}.
 */
export function streamIdleBoundMs(defaultMs: number, timeoutSeconds: number | undefined): number {
  if (!(defaultMs > 0)) return 0;
  if (timeoutSeconds === undefined || !(timeoutSeconds > 0)) return defaultMs;
  return Math.min(defaultMs, timeoutSeconds * 1000 + WATCH_IDLE_GRACE_MS);
}

import { BrandedError } from '@kubeloop/core';
import type { V1Status } from './models/generated.js';

/**
 * The `reason` values apimachinery defines (`metav1.StatusReason`). Matching is by reason first; the
 * HTTP code is consulted only when the reason is absent or unknown (apimachinery `pkg/api/errors`).
 */
export type StatusReason =
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Invalid'
  | 'ServerTimeout'
  | 'StoreReadError'
  | 'Timeout'
  | 'TooManyRequests'
  | 'BadRequest'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'RequestEntityTooLarge'
  | 'UnsupportedMediaType'
  | 'InternalError'
  | 'Expired'
  | 'ServiceUnavailable';

const knownReasons = new Set<string>([
  'Unauthorized',
  'Forbidden',
  'NotFound',
  'AlreadyExists',
  'Conflict',
  'Gone',
  'Invalid',
  'ServerTimeout',
  'StoreReadError',
  'Timeout',
  'TooManyRequests',
  'BadRequest',
  'MethodNotAllowed',
  'NotAcceptable',
  'RequestEntityTooLarge',
  'UnsupportedMediaType',
  'InternalError',
  'Expired',
  'ServiceUnavailable',
]);

/**
 * An API error: the server answered with (or the client synthesised) a `Status` object. Stable
 * `code` `'ERR_KUBE_STATUS'`; `httpStatus` is the HTTP code, `reason` the Status reason.
 */
export class StatusError extends BrandedError {
  static override readonly brandName: string = 'client.StatusError';
  readonly code = 'ERR_KUBE_STATUS' as const;
  override readonly name: string = 'client.StatusError';
  /** The Status object; `status.code` is the HTTP code. */
  readonly status: V1Status;

  constructor(status: V1Status) {
    super(status.message || `the server responded with HTTP ${status.code ?? 'unknown'}`);
    this.status = status;
  }

  /** HTTP status code (0 when unknown). */
  get httpStatus(): number {
    return this.status.code ?? 0;
  }

  /** The Status reason, `''` when the server gave none. */
  get reason(): string {
    return this.status.reason ?? '';
  }
}

/** The error a watch stream (or a reflector) sees when the wire data cannot be decoded. Code `'ERR_WATCH_DECODE'`. */
export class WatchDecodeError extends BrandedError {
  static override readonly brandName: string = 'client.WatchDecodeError';
  readonly code = 'ERR_WATCH_DECODE' as const;
  override readonly name: string = 'client.WatchDecodeError';
}

/**
 * A watch stream carried one event (one frame: one line of newline-delimited JSON) longer than the decoder's
 * limit, `limitBytes` (bytes of UTF-8 on the wire). The line is refused as soon as the limit is passed, so at
 * most `limitBytes` of it are ever held; the stream must be treated as broken (a Reflector re-watches or
 * relists). apimachinery's streaming decoder does the same with its 16 MiB `maxBytes` (`ErrObjectTooLarge`).
 * A {@link WatchDecodeError} (code `'ERR_WATCH_DECODE'`).
 */
export class WatchEventTooLargeError extends WatchDecodeError {
  static override readonly brandName: string = 'client.WatchEventTooLargeError';
  override readonly name: string = 'client.WatchEventTooLargeError';
  /** The limit that was passed, in bytes. */
  readonly limitBytes: number;
  constructor(limitBytes: number) {
    super(
      `watch stream: an event is too large — longer than the ${limitBytes}-byte limit (maxWatchEventBytes); the watch is ended instead of buffering it`,
    );
    this.limitBytes = limitBytes;
  }
}

/** Thrown when a reply is not what the protocol promises (e.g. a list body without `items`). Code `'ERR_UNEXPECTED_RESPONSE'`. */
export class UnexpectedResponseError extends BrandedError {
  static override readonly brandName: string = 'client.UnexpectedResponseError';
  readonly code = 'ERR_UNEXPECTED_RESPONSE' as const;
  override readonly name = 'client.UnexpectedResponseError';
}

/** The HTTP code → reason table apimachinery uses when a response body is not a Status (`newUnstructuredResponseError`). */
function reasonForHttpCode(code: number): StatusReason | '' {
  switch (code) {
    case 400:
      return 'BadRequest';
    case 401:
      return 'Unauthorized';
    case 403:
      return 'Forbidden';
    case 404:
      return 'NotFound';
    case 405:
      return 'MethodNotAllowed';
    case 406:
      return 'NotAcceptable';
    case 409:
      return 'Conflict';
    case 410:
      return 'Gone';
    case 413:
      return 'RequestEntityTooLarge';
    case 415:
      return 'UnsupportedMediaType';
    case 422:
      return 'Invalid';
    case 429:
      return 'TooManyRequests';
    case 500:
      return 'InternalError';
    case 503:
      return 'ServiceUnavailable';
    case 504:
      return 'Timeout';
    default:
      return '';
  }
}

/**
 * Builds a StatusError from an HTTP reply: the body when it is a `Status`, otherwise a synthesised one
 * (reason from the code, message naming what was requested). The body text is cut to 200 characters
 * and only used when it is not JSON.
 */
export function statusErrorFromResponse(httpStatus: number, bodyText: string, what: string): StatusError {
  try {
    const parsed = JSON.parse(bodyText) as unknown;
    if (parsed && typeof parsed === 'object' && (parsed as { kind?: unknown }).kind === 'Status') {
      const status = parsed as V1Status;
      return new StatusError({ ...status, code: status.code ?? httpStatus });
    }
  } catch {
    // not JSON: fall through
  }
  const reason = reasonForHttpCode(httpStatus);
  const snippet = bodyText.trim().slice(0, 200);
  return new StatusError({
    apiVersion: 'v1',
    kind: 'Status',
    status: 'Failure',
    code: httpStatus,
    ...(reason ? { reason } : {}),
    message: `the server responded with HTTP ${httpStatus} to ${what}${snippet ? `: ${snippet}` : ''}`,
  });
}

/** A NotFound StatusError for `<resource> "<name>"`, as the API server phrases it (used by the cache reader). */
export function newNotFound(resource: { group: string; resource: string }, name: string): StatusError {
  const qualified = resource.group ? `${resource.resource}.${resource.group}` : resource.resource;
  return new StatusError({
    apiVersion: 'v1',
    kind: 'Status',
    status: 'Failure',
    code: 404,
    reason: 'NotFound',
    message: `${qualified} "${name}" not found`,
    details: { name, kind: resource.resource, ...(resource.group ? { group: resource.group } : {}) },
  });
}

/** The StatusError inside `err` (following `cause` chains), or undefined. */
export function asStatusError(err: unknown): StatusError | undefined {
  let cur: unknown = err;
  for (let depth = 0; depth < 8 && cur; depth++) {
    if (cur instanceof StatusError) return cur;
    cur = (cur as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The reason of an API error (`''` if `err` is not one), apimachinery `ReasonForError`. */
export function reasonForError(err: unknown): string {
  return asStatusError(err)?.reason ?? '';
}

function matches(err: unknown, reason: StatusReason, httpCode: number): boolean {
  const se = asStatusError(err);
  if (!se) return false;
  if (se.reason === reason) return true;
  // apimachinery: fall back to the code only when the reason is unknown.
  return !knownReasons.has(se.reason) && se.httpStatus === httpCode;
}

/** The object does not exist (reason NotFound, or HTTP 404 with no known reason). */
export function isNotFound(err: unknown): boolean {
  return matches(err, 'NotFound', 404);
}
/** Create of an object that exists (reason AlreadyExists). */
export function isAlreadyExists(err: unknown): boolean {
  return matches(err, 'AlreadyExists', 409);
}
/** Write with a stale resourceVersion or failed precondition (reason Conflict, or a 409 with no known reason). */
export function isConflict(err: unknown): boolean {
  return matches(err, 'Conflict', 409);
}
/** Reason Gone (HTTP 410). */
export function isGone(err: unknown): boolean {
  return matches(err, 'Gone', 410);
}
/** Reason Expired: a resourceVersion or continue token too old (410 on the wire). */
export function isResourceExpired(err: unknown): boolean {
  return matches(err, 'Expired', 410);
}
/** Either `isGone` or `isResourceExpired`: the caller must relist. */
export function isExpired(err: unknown): boolean {
  return isGone(err) || isResourceExpired(err);
}
/** Reason Invalid (422). */
export function isInvalid(err: unknown): boolean {
  return matches(err, 'Invalid', 422);
}
/** Reason BadRequest (400). */
export function isBadRequest(err: unknown): boolean {
  return matches(err, 'BadRequest', 400);
}
/** Reason Forbidden (403). */
export function isForbidden(err: unknown): boolean {
  return matches(err, 'Forbidden', 403);
}
/** Reason Unauthorized (401). */
export function isUnauthorized(err: unknown): boolean {
  return matches(err, 'Unauthorized', 401);
}
/** Reason UnsupportedMediaType (415). */
export function isUnsupportedMediaType(err: unknown): boolean {
  return matches(err, 'UnsupportedMediaType', 415);
}
/** Reason InternalError (500). */
export function isInternalError(err: unknown): boolean {
  return matches(err, 'InternalError', 500);
}
/** Reason ServiceUnavailable (503). */
export function isServiceUnavailable(err: unknown): boolean {
  return matches(err, 'ServiceUnavailable', 503);
}
/** Reason Timeout (504). */
export function isTimeout(err: unknown): boolean {
  return matches(err, 'Timeout', 504);
}
/** 429 always matches by code too (apimachinery's exception). */
export function isTooManyRequests(err: unknown): boolean {
  const se = asStatusError(err);
  return !!se && (se.reason === 'TooManyRequests' || se.httpStatus === 429);
}

/** `undefined` when `err` is a NotFound error, else `err` (controller-runtime `client.IgnoreNotFound`). */
export function ignoreNotFound<E>(err: E): E | undefined {
  return isNotFound(err) ? undefined : err;
}
/** `undefined` when `err` is an AlreadyExists error, else `err`. */
export function ignoreAlreadyExists<E>(err: E): E | undefined {
  return isAlreadyExists(err) ? undefined : err;
}

/**
 * The server refused a patch type for this kind with 415 UnsupportedMediaType — most often a strategic merge
 * patch on a custom resource, which has no strategic-merge metadata (the API server accepts only merge, JSON
 * and apply patches there). Still a {@link StatusError} (`isUnsupportedMediaType(err)` is true); the message
 * names the kind and suggests `suggestedPatchType`.
 */
export class UnsupportedPatchTypeError extends StatusError {
  static override readonly brandName: string = 'client.UnsupportedPatchTypeError';
  override readonly name: string = 'client.UnsupportedPatchTypeError';
  /** The patch type that was refused. */
  readonly patchType: string;
  /** The patch type to use instead: `'merge'` (RFC 7386) for a refused strategic merge patch. */
  readonly suggestedPatchType: 'merge';

  constructor(status: V1Status, patchType: string, kind: string) {
    super({
      ...status,
      message: `${status.message ?? 'unsupported media type'}: ${kind} does not support a ${patchType} patch (custom resources have no strategic merge metadata); use a merge patch ({ type: 'merge' }) or a JSON patch instead`,
    });
    this.patchType = patchType;
    this.suggestedPatchType = 'merge';
  }
}

/** Thrown before sending a request that cannot be valid (e.g. apply without a field manager). Code `'ERR_INVALID_REQUEST'`. */
export class InvalidRequestError extends BrandedError {
  static override readonly brandName: string = 'client.InvalidRequestError';
  readonly code = 'ERR_INVALID_REQUEST' as const;
  override readonly name = 'client.InvalidRequestError';
}

/** The `meta/v1` Status objects and raw replies the fault rules answer with. */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { StatusSpec } from './spec.js';

const DEFAULT_REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Expired',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

const DEFAULT_MESSAGES: Record<number, string> = {
  403: 'forbidden by an injected fault',
  410: 'the requested resource version is too old (injected fault)',
  429: 'Too many requests, please try again later.',
  500: 'Internal error occurred: injected fault',
  503: 'the server is currently unable to handle the request',
  504: 'the server was unable to return a response in the time allotted',
};

/** What the API server says for a list at a compacted resourceVersion. */
export const LIST_EXPIRED_MESSAGE = 'The resourceVersion for the provided list is too old.';
/** What the API server says for a continue token from before a compaction. */
export const CONTINUE_EXPIRED_MESSAGE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.';

/**
 * A `meta/v1` Status object for an HTTP code, with Kubernetes' key order
 * (kind, apiVersion, metadata, status, message, reason, details, code). Unset reason/message default to the
 * code's usual ones (e.g. 503 → `ServiceUnavailable`).
 */
export function statusFor(code: number, spec: StatusSpec = {}): Record<string, unknown> {
  const status: Record<string, unknown> = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: code >= 200 && code < 300 ? 'Success' : 'Failure',
    message: spec.message ?? DEFAULT_MESSAGES[code] ?? `injected fault (HTTP ${code})`,
  };
  const reason = spec.reason ?? DEFAULT_REASONS[code];
  if (reason !== undefined) status.reason = reason;
  if (spec.details !== undefined && Object.keys(spec.details).length > 0) status.details = spec.details;
  status.code = code;
  return status;
}

/** Only the reason and message of a step or rule (what {@link statusFor} takes from it). */
export function pickStatus(s: { reason?: string | undefined; message?: string | undefined }): StatusSpec {
  const out: StatusSpec = {};
  if (s.reason !== undefined) out.reason = s.reason;
  if (s.message !== undefined) out.message = s.message;
  return out;
}

/** The headers every injected reply carries, as the API server's. */
export function baseHeaders(): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'Cache-Control': 'no-cache, private',
    'Audit-Id': randomUUID(),
  };
}

/** Send `body` as JSON with a Content-Length. */
export function sendJson(
  res: ServerResponse,
  code: number,
  body: unknown,
  headers: Record<string, string>,
): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { ...headers, 'Content-Length': String(Buffer.byteLength(text)) });
  res.end(text);
}

/** Building blocks of admission answers (controller-runtime `admission.Allowed`, `Denied`, `Errored`, `PatchResponseFromRaw`). */
import jsonpatch from 'fast-json-patch';
import type { JsonPatchOperation, Status } from './types.js';

/**
 * What a handler answers; the webhook adds the request's `uid` and encodes `patch` (controller-runtime
 * `admission.Response`). `patch` is a list of JSON Patch operations against the request's `object`.
 */
export interface AdmissionResult {
  readonly allowed: boolean;
  readonly result?: Status;
  readonly patch?: readonly JsonPatchOperation[];
  readonly warnings?: readonly string[];
  readonly auditAnnotations?: Readonly<Record<string, string>>;
}

/** Allows the request; `message` goes into `result.message` with code 200. */
export function allowed(message = '', warnings: readonly string[] = []): AdmissionResult {
  return {
    allowed: true,
    result: { code: 200, ...(message ? { message } : {}) },
    ...(warnings.length ? { warnings } : {}),
  };
}

/** Denies the request with `code` (default 403 Forbidden) and `message`. */
export function denied(message: string, code = 403, reason = 'Forbidden'): AdmissionResult {
  return { allowed: false, result: { status: 'Failure', code, reason, message } };
}

/** Denies the request because handling it failed (controller-runtime `Errored`): `code` 500 unless given. */
export function errored(message: string, code = 500): AdmissionResult {
  return {
    allowed: false,
    result: { status: 'Failure', code, reason: code >= 500 ? 'InternalError' : 'BadRequest', message },
  };
}

/**
 * Allows the request with the JSON Patch that turns `original` into `current` (controller-runtime
 * `PatchResponseFromRaw`, computed here with fast-json-patch's `compare`). No patch when they are equal.
 */
export function patchResponseFromObjects(
  original: unknown,
  current: unknown,
  warnings: readonly string[] = [],
): AdmissionResult {
  const ops = jsonpatch.compare(original as object, current as object) as JsonPatchOperation[];
  return {
    allowed: true,
    result: { code: 200 },
    ...(ops.length ? { patch: ops } : {}),
    ...(warnings.length ? { warnings } : {}),
  };
}

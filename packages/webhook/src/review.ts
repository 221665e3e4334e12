/**
 * What admission and conversion webhooks share on the wire: the HTTP answer, the `Status` body of a 4xx/5xx,
 * and the review envelope check (JSON object, known `apiVersion`, `kind`, `request` with a non-empty `uid`),
 * as controller-runtime's `admission.Webhook` and `conversion.Webhook` both decode.
 */

/** An HTTP answer: status code and JSON body. */
export interface WebhookReply {
  readonly status: number;
  readonly body: unknown;
}

/** A `metav1.Status` body for a 4xx/5xx HTTP answer that is not an AdmissionReview. */
export function statusBody(code: number, message: string): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Status',
    status: 'Failure',
    code,
    reason: code === 400 ? 'BadRequest' : code === 413 ? 'RequestEntityTooLarge' : 'InternalError',
    message,
  };
}

/** Whether `v` is a JSON object (not null, not an array). */
export function isObj(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Checks the envelope of a `kind` review (`AdmissionReview`, `ConversionReview`): the body is a JSON object with
 * one of `apiVersions`, that `kind`, and a `request` object with a non-empty `uid`. Returns the parsed review
 * and its request, or the message of a 400 answer.
 */
export function decodeReview(
  body: string | Uint8Array,
  kind: string,
  apiVersions: readonly string[],
): { readonly review: Record<string, unknown>; readonly request: Record<string, unknown> } | string {
  // a view on the caller's bytes, not a copy (Buffer.from(uint8Array) copies)
  const text =
    typeof body === 'string'
      ? body
      : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  if (text.length === 0) return 'request body is empty';
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return `couldn't parse the ${kind}: ${(e as Error).message}`;
  }
  if (!isObj(parsed)) return `the ${kind} must be a JSON object`;
  if (typeof parsed.apiVersion !== 'string' || !apiVersions.includes(parsed.apiVersion))
    return `unsupported ${kind} apiVersion ${JSON.stringify(parsed.apiVersion)}: expected ${apiVersions.map((v) => JSON.stringify(v)).join(' or ')}`;
  if (parsed.kind !== kind) return `kind: expected "${kind}", got ${JSON.stringify(parsed.kind)}`;
  const request = parsed.request;
  if (!isObj(request)) return 'request: required, must be an object';
  if (typeof request.uid !== 'string' || request.uid === '')
    return 'request.uid: required, must be a non-empty string';
  return { review: parsed, request };
}

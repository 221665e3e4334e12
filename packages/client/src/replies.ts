/**
 * What the client makes of the API server's replies: a JSON body or a typed error, and the shape checks of
 * one object and of a list (client-go fails to decode what does not fit the kind's struct, and so does the
 * client), with `apiVersion`/`kind` filled in where real servers leave them out.
 */
import { statusErrorFromResponse, UnexpectedResponseError } from './errors.js';
import type { HttpResponse } from './http.js';
import { describeJson, isJsonObject } from './internal/json-shape.js';
import { ListStreamDecoder } from './internal/list-stream.js';
import { isMetadataOnly, type Kind, type KubeObject, type ObjectList } from './kinds.js';
import { toPartialObjectMetadata } from './metadata-only.js';

/**
 * Reads the body: a non-2xx answer becomes its typed error; an empty body is `undefined`; anything else
 * must be JSON. `what` names the request in errors (`GET /api/v1/pods`).
 * @throws StatusError, UnexpectedResponseError (not JSON; or a body longer than a JavaScript string can hold,
 *   about 512 MiB — an unpaged list of a large cluster — with the `ERR_STRING_TOO_LONG` error as `cause`,
 *   see {@link isReplyTooLarge}).
 */
export async function readJsonReply(res: HttpResponse, what: string): Promise<unknown> {
  let text: string;
  try {
    text = await res.body.text();
  } catch (err) {
    if ((err as { code?: unknown } | null)?.code !== 'ERR_STRING_TOO_LONG') throw err;
    throw new UnexpectedResponseError(
      `${what}: the reply is larger than a JavaScript string can hold; list it in pages (limit)`,
      { cause: err },
    );
  }
  if (res.status < 200 || res.status >= 300) throw statusErrorFromResponse(res.status, text, what);
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new UnexpectedResponseError(`${what}: the reply is not JSON`);
  }
}

/**
 * {@link readJsonReply} for a list: a 2xx body is decoded as its bytes arrive, each item parsed on its own
 * (`ListStreamDecoder`), so the reply is never held as one string beside its parsed form — kube-apiserver
 * answers a `resourceVersion=0` list from its watch cache in one piece, whatever the `limit` — and a reply
 * longer than a JavaScript string can hold decodes like any other. The result is the whole-text
 * `JSON.parse`'s (each item through `decodeItem` when given); a non-2xx answer becomes its typed error as before.
 * @throws StatusError, UnexpectedResponseError (not JSON).
 */
export async function readJsonListReply(
  res: HttpResponse,
  what: string,
  decodeItem?: (json: string) => unknown,
): Promise<unknown> {
  if (res.status < 200 || res.status >= 300) return readJsonReply(res, what);
  const decoder = new ListStreamDecoder(decodeItem);
  try {
    for await (const chunk of res.body) decoder.push(chunk);
    return decoder.end();
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    res.body.destroy?.(err);
    throw new UnexpectedResponseError(`${what}: the reply is not JSON`);
  }
}

/**
 * A reply that must be one object (get, create, update, patch): anything else — an empty body, an array, a
 * number, a string, null — is a broken reply. @throws UnexpectedResponseError naming `what` and what came.
 */
export function asObjectReply(reply: unknown, what: string): Record<string, unknown> {
  if (!isJsonObject(reply))
    throw new UnexpectedResponseError(`${what}: the reply is ${describeJson(reply)}, not an object`);
  return reply;
}

/**
 * A list reply: an object with `items` (null when empty: apimachinery has no omitempty on it) holding only
 * objects, each given the kind's `apiVersion`/`kind` (or reduced to its metadata for a metadata-only kind).
 * A 2xx whose body lacks `items` — a Status, a proxy's JSON — must not read as "no objects": an informer
 * would delete its cache; and `[1, "x", null]` must not reach a cache or a handler as objects.
 * @throws UnexpectedResponseError naming `what` and the first bad part.
 */
export function asListReply<T extends KubeObject>(
  kind: Kind<T>,
  reply: unknown,
  what: string,
): ObjectList<T> {
  if (!isJsonObject(reply))
    throw new UnexpectedResponseError(`${what}: the reply is not a list (empty or not an object)`);
  if (!('items' in reply) || reply.kind === 'Status')
    throw new UnexpectedResponseError(
      `${what}: the reply is not a list (kind ${JSON.stringify(reply.kind ?? null)}, no items)`,
    );
  const list = reply as unknown as ObjectList<T>;
  if (list.items === null) list.items = [];
  if (!Array.isArray(list.items))
    throw new UnexpectedResponseError(`${what}: items is ${describeJson(list.items)}, not an array`);
  for (let i = 0; i < list.items.length; i++) {
    const item: unknown = list.items[i];
    if (!isJsonObject(item))
      throw new UnexpectedResponseError(`${what}: items[${i}] is ${describeJson(item)}, not an object`);
  }
  list.metadata ??= {};
  if (isMetadataOnly(kind)) list.items = list.items.map((item) => withTypeMeta(kind, item));
  else for (const item of list.items) withTypeMeta(kind, item);
  return list;
}

/**
 * Fills `apiVersion`/`kind` when the server left them out (list items on real servers do). For a
 * metadata-only kind, returns a new object with only `apiVersion`/`kind` of the kind and `metadata`.
 */
export function withTypeMeta<T extends KubeObject>(kind: Kind<T>, obj: T): T {
  if (isMetadataOnly(kind) && obj && typeof obj === 'object') return toPartialObjectMetadata(kind, obj) as T;
  if (obj && typeof obj === 'object' && !Object.isFrozen(obj)) {
    if (!obj.apiVersion) obj.apiVersion = kind.apiVersion;
    if (!obj.kind) obj.kind = kind.kind;
  }
  return obj;
}

/**
 * Whether `err` (or an error in its `cause` chain) is a reply too large to decode in one piece: Node's
 * `ERR_STRING_TOO_LONG` (a string of more than 2^29 - 24 characters), e.g. an unpaged list of hundreds of
 * thousands of objects. A reflector then lists in pages instead.
 */
export function isReplyTooLarge(err: unknown): boolean {
  for (let e = err, depth = 0; e && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    if ((e as { code?: unknown }).code === 'ERR_STRING_TOO_LONG') return true;
  }
  return false;
}

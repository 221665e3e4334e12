import { Buffer } from 'node:buffer';
import { InvalidRequestError, StatusError, WatchDecodeError, WatchEventTooLargeError } from './errors.js';
import { describeJson, isJsonObject } from './internal/json-shape.js';
import type { KubeObject } from './kinds.js';
import type { V1Status } from './models/generated.js';
import { withRawJson } from './raw-json.js';

/** Watch event types (apimachinery `watch.EventType`). */
export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/**
 * One decoded watch event. `ERROR` carries the server's `Status` (e.g. 410 Expired); the stream ends
 * after it. `BOOKMARK` carries an object whose only meaningful field is `metadata.resourceVersion`.
 */
export type WatchEvent<T extends KubeObject = KubeObject> =
  | { readonly type: 'ADDED' | 'MODIFIED' | 'DELETED'; readonly object: T }
  | { readonly type: 'BOOKMARK'; readonly object: T }
  | { readonly type: 'ERROR'; readonly object: V1Status };

/**
 * The seconds a `Status` asks the client to wait before retrying (`details.retryAfterSeconds`, as
 * apimachinery's `SuggestsClientDelay` reads it), for a {@link StatusError} or a bare `Status`;
 * `undefined` when it names none (absent, negative, or not a finite number).
 */
export function retryAfterSecondsOf(errOrStatus: unknown): number | undefined {
  const status =
    errOrStatus instanceof StatusError ? errOrStatus.status : (errOrStatus as V1Status | undefined);
  const s = status?.details?.retryAfterSeconds as unknown;
  return typeof s === 'number' && Number.isFinite(s) && s >= 0 ? s : undefined;
}

/**
 * A watch stream carried a bare `Status` line — the server (or a proxy) ended the stream with an error
 * object that is not wrapped in an `ERROR` event, e.g. a 429 TooManyRequests with
 * `details.retryAfterSeconds` (case C40). It is a {@link StatusError} (so `isTooManyRequests`, `isExpired`
 * … work), never a decode error; `retryAfterSeconds` is the server's requested delay in seconds, or
 * `undefined`. A reflector re-watches no earlier than that (the larger of its backoff and Retry-After).
 */
export class WatchStatusError extends StatusError {
  override readonly name: string = 'WatchStatusError';
  /** `details.retryAfterSeconds` of the Status, in seconds; `undefined` when it names none. */
  readonly retryAfterSeconds: number | undefined;

  constructor(status: V1Status) {
    super(status);
    this.retryAfterSeconds = retryAfterSecondsOf(status);
  }
}

function isEventType(t: unknown): t is WatchEventType {
  switch (t) {
    case 'ADDED':
    case 'MODIFIED':
    case 'DELETED':
    case 'BOOKMARK':
    case 'ERROR':
      return true;
    default:
      return false;
  }
}

/** True for a line that holds only JSON whitespace (space, tab, CR, LF). */
function isBlank(line: string): boolean {
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d && c !== 0x0a) return false;
  }
  return true;
}

/**
 * The object's JSON inside an event line of kube-apiserver's shape — `{"type":"…","object":{…}}`, the two
 * members in that order and nothing else — or `undefined` for any other shape (whitespace, extra members).
 */
function objectJsonOf(line: string, ev: { type: string }, members: number): string | undefined {
  if (members !== 2) return undefined;
  const head = `{"type":"${ev.type}","object":`;
  if (!line.startsWith(head)) return undefined;
  let end = line.length;
  while (end > head.length && isJsonSpace(line.charCodeAt(end - 1))) end--;
  if (line.charCodeAt(end - 1) !== 0x7d || line.charCodeAt(head.length) !== 0x7b) return undefined;
  return line.slice(head.length, end - 1);
}

function isJsonSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a;
}

/**
 * Decodes one complete line; `undefined` for a blank line. `keepJson`: the object carries its JSON text
 * under `RAW_JSON` when the line has kube-apiserver's shape.
 */
function decodeLine<T extends KubeObject>(line: string, keepJson = false): WatchEvent<T> | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch (err) {
    if (isBlank(line)) return undefined;
    throw new WatchDecodeError(
      `watch stream: a line is not JSON (${(err as Error).message}); starts with ${JSON.stringify(line.trim().slice(0, 40))}`,
    );
  }
  if (!parsed || typeof parsed !== 'object')
    throw new WatchDecodeError('watch stream: an event is not an object');
  const ev = parsed as { type?: unknown; object?: unknown; kind?: unknown };
  if (!isEventType(ev.type)) {
    // A bare Status instead of an event: the server's error for this stream (C40), not garbage.
    if (ev.type === undefined && ev.kind === 'Status') throw new WatchStatusError(parsed as V1Status);
    throw new WatchDecodeError(`watch stream: unknown event type ${JSON.stringify(ev.type)}`);
  }
  // client-go fails to decode an event whose object does not unmarshal into the kind's struct: an array, a
  // number, a string or null is never an object, and must not reach a Reflector's store.
  if (!isJsonObject(ev.object)) {
    throw new WatchDecodeError(
      `watch stream: ${ev.type} event whose object is ${describeJson(ev.object)}, not an object`,
    );
  }
  if (keepJson && (ev.type === 'ADDED' || ev.type === 'MODIFIED' || ev.type === 'DELETED')) {
    let members = 0;
    for (const _ in ev) members++;
    const json = objectJsonOf(line, ev as { type: string }, members);
    if (json !== undefined) withRawJson(ev.object as object, json);
  }
  return ev as WatchEvent<T>;
}

const NEWLINE = 0x0a;

/**
 * The default bound on one watch event (one line), in bytes: 16 MiB, the `maxBytes` of apimachinery's
 * streaming decoder (`runtime/serializer/streaming`, `ErrObjectTooLarge`) that client-go reads watches with.
 * It is well above what an API server stores (etcd's default request limit is 1.5 MiB, kube-apiserver refuses
 * request bodies over 3 MiB), so only a broken or hostile stream reaches it.
 */
export const DEFAULT_MAX_WATCH_EVENT_BYTES = 16 * 1024 * 1024;

/** Options of {@link decodeWatchStream}. */
export interface DecodeWatchStreamOptions {
  /** Bound on one event (one line), in bytes; a whole number >= 1. @defaultValue {@link DEFAULT_MAX_WATCH_EVENT_BYTES} */
  readonly maxEventBytes?: number;
  /**
   * Each ADDED/MODIFIED/DELETED object carries its JSON text under `RAW_JSON` (a slice of the event
   * line), when the line has kube-apiserver's shape (`{"type":…,"object":…}` and nothing else). @defaultValue false
   */
  readonly keepObjectJson?: boolean;
}

/** Validates a `maxEventBytes` option. @throws InvalidRequestError when it is not a whole number >= 1. */
export function checkMaxEventBytes(value: number | undefined): number {
  if (value === undefined) return DEFAULT_MAX_WATCH_EVENT_BYTES;
  if (!Number.isSafeInteger(value) || value < 1)
    throw new InvalidRequestError(`maxEventBytes must be a whole number of bytes >= 1, got ${value}`);
  return value;
}

function asBuffer(chunk: Uint8Array | string): Buffer {
  if (typeof chunk === 'string') return Buffer.from(chunk, 'utf8');
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

/**
 * Decodes a watch response body — newline-delimited JSON events, arbitrarily split into chunks — into
 * events. Lines may be split across chunks anywhere, including inside a multi-byte UTF-8 character.
 * Blank lines are skipped. A final line without a trailing newline is decoded if it is a complete event
 * (client-go's JSON framer decodes by object, not by newline); a partial one is an error.
 *
 * Cost: the stream is split on the newline byte (a newline never occurs inside a UTF-8 multi-byte
 * character), and each complete line is decoded to a string exactly once and parsed once; the bytes of
 * an incomplete line are kept (not copied) until its end arrives. No string is concatenated or re-sliced
 * per chunk.
 *
 * Bound: one line may hold at most `options.maxEventBytes` bytes (default {@link DEFAULT_MAX_WATCH_EVENT_BYTES},
 * 16 MiB, apimachinery's streaming decoder limit). A longer line is refused as soon as the bytes kept for it
 * pass the bound — nothing larger is ever held — with a {@link WatchEventTooLargeError}.
 *
 * @throws WatchStatusError when the stream carries a bare `Status` object instead of an event (C40).
 * @throws WatchEventTooLargeError when one line is longer than `maxEventBytes`.
 * @throws WatchDecodeError on a line that is not a JSON watch event (the stream must be treated as broken).
 */
export async function* decodeWatchStream<T extends KubeObject = KubeObject>(
  chunks: AsyncIterable<Uint8Array | string>,
  options: DecodeWatchStreamOptions = {},
): AsyncGenerator<WatchEvent<T>, void, undefined> {
  const maxBytes = checkMaxEventBytes(options.maxEventBytes);
  const keepJson = options.keepObjectJson === true;
  // Bytes of the line not yet ended, as received (views into the chunks, no copies).
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  for await (const chunk of chunks) {
    const buf = asBuffer(chunk);
    let start = 0;
    let nl = buf.indexOf(NEWLINE);
    while (nl >= 0) {
      if (pendingBytes + nl - start > maxBytes) throw new WatchEventTooLargeError(maxBytes);
      let line: string;
      if (pendingBytes > 0) {
        pending.push(buf.subarray(0, nl));
        line = Buffer.concat(pending, pendingBytes + nl).toString('utf8');
        pending = [];
        pendingBytes = 0;
      } else {
        line = buf.toString('utf8', start, nl);
      }
      const ev = decodeLine<T>(line, keepJson);
      if (ev) yield ev;
      start = nl + 1;
      nl = buf.indexOf(NEWLINE, start);
    }
    if (start < buf.length) {
      // Refuse before keeping: the unfinished line would pass the bound.
      if (pendingBytes + buf.length - start > maxBytes) throw new WatchEventTooLargeError(maxBytes);
      pending.push(start === 0 ? buf : buf.subarray(start));
      pendingBytes += buf.length - start;
    }
  }
  if (pendingBytes === 0) return;
  const rest = Buffer.concat(pending, pendingBytes).toString('utf8');
  if (isBlank(rest)) return;
  try {
    JSON.parse(rest);
  } catch {
    throw new WatchDecodeError(
      `watch stream ended inside an event (${rest.trim().length} characters without an end)`,
    );
  }
  const ev = decodeLine<T>(rest, keepJson);
  if (ev) yield ev;
}

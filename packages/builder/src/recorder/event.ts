import { Buffer } from 'node:buffer';
import { type DeepReadonly, type KubeObject, kind } from '@kubeloop/client';

/** A reference to an object (core/v1 `ObjectReference`, the fields an Event uses). */
export interface ObjectReference {
  apiVersion?: string;
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  resourceVersion?: string;
  fieldPath?: string;
}

/** An events.k8s.io/v1 Event as this recorder writes it. */
export interface EventV1 extends KubeObject {
  eventTime: string;
  series?: { count: number; lastObservedTime: string };
  reportingController: string;
  reportingInstance: string;
  action: string;
  reason: string;
  regarding: ObjectReference;
  related?: ObjectReference;
  note?: string;
  type: 'Normal' | 'Warning';
}

/** The events.k8s.io/v1 Event kind descriptor. */
export const EventV1Kind = kind<EventV1>('events.k8s.io/v1', 'Event');

/** The event types the API server accepts. */
export type EventType = 'Normal' | 'Warning';

/**
 * The API's limit on an Event's note, in UTF-8 **bytes** (kube-apiserver `pkg/apis/core/validation/events.go`:
 * `len(event.Message) > NoteLengthLimit`, Go's `len` counts bytes); longer notes are cut. @internal
 */
export const MAX_NOTE_LENGTH = 1024;

/**
 * `s` cut to at most `maxBytes` UTF-8 bytes, on a character (code point) boundary, so the server's byte limit
 * holds for any text and no character is split. @internal
 */
export function cutToUtf8Bytes(s: string, maxBytes: number): string {
  // Each UTF-16 unit is at most 3 UTF-8 bytes: short strings need no count.
  if (s.length * 3 <= maxBytes || Buffer.byteLength(s, 'utf8') <= maxBytes) return s;
  let bytes = 0;
  let end = 0;
  for (const ch of s) {
    const cp = ch.codePointAt(0) ?? 0;
    const n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    if (bytes + n > maxBytes) break;
    bytes += n;
    end += ch.length;
  }
  return s.slice(0, end);
}

/** The reference an Event keeps of `o` (from its metadata, or `o` itself when it is a reference). @internal */
export function refOf(o: DeepReadonly<KubeObject> | ObjectReference): ObjectReference {
  if ('metadata' in o && o.metadata) {
    const m = o.metadata;
    return {
      ...(o.apiVersion ? { apiVersion: o.apiVersion } : {}),
      ...(o.kind ? { kind: o.kind } : {}),
      ...(m.namespace ? { namespace: m.namespace } : {}),
      ...(m.name ? { name: m.name } : {}),
      ...(m.uid ? { uid: m.uid } : {}),
      ...(m.resourceVersion ? { resourceVersion: m.resourceVersion } : {}),
    };
  }
  return { ...(o as ObjectReference) };
}

/**
 * A key telling references apart (for isomorphic Events): every field, `resourceVersion` included, as
 * client-go's `eventKey` compares the whole `ObjectReference` (which `reference.GetReference` fills with the
 * object's resourceVersion), so an Event about a changed object is a new Event, not a repeat. @internal
 */
export function refKey(r: ObjectReference | undefined): string {
  if (!r) return '';
  return [r.apiVersion, r.kind, r.namespace, r.name, r.uid, r.resourceVersion, r.fieldPath]
    .map((v) => v ?? '')
    .join('\u0000');
}

/** `ms` as a MicroTime string (RFC 3339 with six fractional digits). @internal */
export function microTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 23)}000Z`;
}

/** Whether a failed Event write is worth retrying: 429, 5xx, or no HTTP answer at all. @internal */
export function retryableError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'number') return code === 429 || code >= 500;
  const status = (err as { status?: { code?: number } } | null)?.status?.code;
  if (typeof status === 'number') return status === 429 || status >= 500;
  return true; // no HTTP answer (connection, timeout): retry
}

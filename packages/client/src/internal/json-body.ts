import { Buffer } from 'node:buffer';

/**
 * The JSON text of a request body. A `Date` (`@kubernetes/client-node` types every timestamp so; ours are strings) is
 * written as RFC 3339 in UTC with six fractional digits, `2026-12-01T05:27:55.926000Z`: kube-apiserver parses
 * `metav1.MicroTime` fields (a Lease's `acquireTime`/`renewTime`, an events.k8s.io Event's `eventTime` and
 * `series.lastObservedTime`) with the exact layout `2006-01-02T15:04:05.000000Z07:00` and answers 400 to the
 * three digits `JSON.stringify` writes, while `metav1.Time` fields accept any fraction (Go's `time.Parse` with
 * `time.RFC3339`). An invalid Date stays `null`, as `JSON.stringify` writes it. Bytes (a `Buffer` or
 * `Uint8Array`, e.g. in a Secret's `data` or a ConfigMap's `binaryData`) are written as base64, as Go encodes
 * a `[]byte` (JSON.stringify would write `{"type":"Buffer","data":[…]}`, a 400). @internal
 */
export function jsonBody(value: unknown): string {
  return JSON.stringify(value, microTimeDates);
}

function microTimeDates(this: unknown, key: string, value: unknown): unknown {
  // JSON.stringify has already called Date#toJSON / Buffer#toJSON: look at the property itself.
  const raw = (this as Record<string, unknown>)[key];
  if (raw instanceof Uint8Array)
    return Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('base64');
  if (!(raw instanceof Date) || typeof value !== 'string') return value;
  const iso = raw.toISOString(); // YYYY-MM-DDTHH:mm:ss.sssZ (or ±YYYYYY-… outside years 0-9999)
  return `${iso.slice(0, -1)}000Z`;
}

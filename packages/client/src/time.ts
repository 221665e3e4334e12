import type { MicroTime, Time } from './models/scalars.js';

function iso(date: Date, what: string): string {
  const ms = date.getTime();
  if (Number.isNaN(ms)) throw new RangeError(`${what}: invalid Date`);
  return date.toISOString(); // YYYY-MM-DDTHH:mm:ss.sssZ
}

/**
 * A `Date` as a `meta/v1.Time` field holds it: RFC 3339 in UTC with whole seconds (`2026-12-01T05:27:55Z`), the
 * layout apimachinery's `Time.MarshalJSON` writes (the fraction is dropped, not rounded).
 * @throws RangeError for an invalid Date.
 */
export function toTime(date: Date): Time {
  return `${iso(date, 'toTime').slice(0, 19)}Z`;
}

/**
 * A `Date` as a `meta/v1.MicroTime` field holds it: RFC 3339 in UTC with exactly six fractional digits
 * (`2026-12-01T05:27:55.926000Z`), the only layout kube-apiserver accepts for MicroTime (Lease
 * `acquireTime`/`renewTime`, events.k8s.io Event `eventTime`). A `Date` has millisecond precision, so the last
 * three digits are zeros.
 * @throws RangeError for an invalid Date.
 */
export function toMicroTime(date: Date): MicroTime {
  return `${iso(date, 'toMicroTime').slice(0, 23)}000Z`;
}

/**
 * The scalar types of the Kubernetes API as they are on the wire (apimachinery's JSON encodings). kubeloop sends
 * and hands out objects as plain JSON and converts none of these: a timestamp read from the server is a string.
 * @module
 */

/**
 * `meta/v1.Time`: an RFC 3339 timestamp in UTC with second precision, e.g. `'2026-12-01T05:27:55Z'`
 * (`Date.parse` reads it; to write one, `new Date().toISOString()` is accepted by the API server).
 */
export type Time = string;

/**
 * `meta/v1.MicroTime`: an RFC 3339 timestamp with six fractional digits, e.g. `'2026-12-01T05:27:55.926000Z'`
 * (Lease `acquireTime`/`renewTime`, Event `eventTime`). kube-apiserver refuses any other number of fractional
 * digits, so `toISOString()`'s three are not enough; a `Date` passed in a request body is written this way.
 */
export type MicroTime = string;

/** `util/intstr.IntOrString`: an integer or a string, e.g. a port number or name, `'25%'` or `3`. */
export type IntOrString = number | string;

/** `api/resource.Quantity`: a decimal quantity with an optional suffix, e.g. `'500m'`, `'1Gi'`, `'2'`. */
export type Quantity = string;

/** A Go `[]byte`: base64 (standard alphabet, padded) in JSON, e.g. a Secret's `data` values. */
export type Bytes = string;

/**
 * @packageDocumentation
 * `@kubeloop/client/transport`: the HTTP transport and its building blocks — one pooled undici dispatcher
 * per `RestConfig` (one HTTP/2 connection when the server offers it), client-side throttling, retries,
 * credential refresh, the watch idle watchdog, warning handlers and diagnostics (client-go `rest`,
 * `transport`, `util/flowcontrol`).
 */
export {
  channels,
  type RequestDiagnostic,
  type RetryDiagnostic,
  type ThrottleDiagnostic,
  type WarningDiagnostic,
} from './diagnostics.js';
export { TransportError, type TransportErrorCode } from './errors.js';
export { parseWarningHeaders, retryAfterSeconds } from './headers.js';
export { WATCH_IDLE_GRACE_MS } from './request-policy.js';
export { type RateLimiter, TokenBucketRateLimiter } from './token-bucket-rate-limiter.js';
export { Transport } from './transport.js';
export type { TransportOptions, TransportRequest, TransportResponse } from './transport-options.js';
export { newWarningLogger, noWarnings, type WarningHandler } from './warning-handler.js';

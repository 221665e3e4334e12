/**
 * The HTTP transport of `@kubeloop/client`: one pooled undici dispatcher per `RestConfig`, client-side
 * throttling, retries, credential refresh and diagnostics (client-go `rest`, `transport`, `util/flowcontrol`).
 */

export { type Clock, type ClockTimer, FakeClock, realClock, sleep } from '../clock.js';
export {
  channels,
  type RequestDiagnostic,
  type RetryDiagnostic,
  type ThrottleDiagnostic,
  type WarningDiagnostic,
} from './diagnostics.js';
export { type RateLimiter, TokenBucketRateLimiter } from './token-bucket-rate-limiter.js';
export {
  parseWarningHeaders,
  retryAfterSeconds,
  Transport,
  TransportError,
  type TransportOptions,
  type TransportRequest,
  type TransportResponse,
} from './transport.js';

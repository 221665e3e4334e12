/**
 * @packageDocumentation
 * `@kubeloop/core` — what every kubeloop layer shares and no layer owns, as client-go leans on `k8s.io/utils`
 * and apimachinery's `wait`: the {@link Clock} every timer goes through ({@link realClock}; a `FakeClock` on
 * `@kubeloop/core/testing`), the {@link Logger} interface, abort and deadline helpers ({@link onAbort},
 * {@link sleep}, {@link withDeadline}), the exponential {@link Backoff}, and {@link BrandedError}, the base
 * error class whose `instanceof` holds across two installed copies of a package. No dependencies. All
 * durations are milliseconds.
 */
export { onAbort } from './abort.js';
export { Backoff, type BackoffOptions, DEFAULT_REFLECTOR_BACKOFF } from './backoff.js';
export { type Clock, type ClockTimer, realClock, sleep } from './clock.js';
export { type Deadline, withDeadline } from './deadline.js';
export { BrandedError, brand, hasBrand } from './errors.js';
export { discardLogger, type Logger } from './logger.js';

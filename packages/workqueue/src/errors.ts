/** Stable error codes thrown by `@kubeloop/workqueue`. */
export type WorkqueueErrorCode = 'ERR_WORKQUEUE_INVALID_ARGUMENT';

/** Base class of the errors thrown by this package; test `code`, not the message. */
export class WorkqueueError extends Error {
  override readonly name: string = 'WorkqueueError';
  constructor(
    readonly code: WorkqueueErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** A constructor or option got a value outside its domain (e.g. a negative delay base, `qps <= 0`). */
export class InvalidArgumentError extends WorkqueueError {
  override readonly name = 'InvalidArgumentError';
  constructor(message: string) {
    super('ERR_WORKQUEUE_INVALID_ARGUMENT', message);
  }
}

/**
 * Checks a delay argument, in ms: it must be a number and not NaN or ±Infinity. A value ≤ 0 means "now", as in
 * client-go (`AddAfter` with `duration <= 0` adds at once). A string such as `'1000'` (read from YAML or an env
 * var) is refused rather than used: `now() + '1000'` would concatenate, and the item would be ready at once.
 * @throws InvalidArgumentError naming `what` and the value.
 */
export function checkDelayMs(what: string, v: unknown): asserts v is number {
  if (typeof v !== 'number' || !Number.isFinite(v))
    throw new InvalidArgumentError(
      `${what} must be a finite number of ms, got ${typeof v === 'string' ? `the string ${JSON.stringify(v)}` : String(v)}`,
    );
}

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

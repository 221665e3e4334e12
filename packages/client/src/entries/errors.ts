/**
 * @packageDocumentation
 * `@kubeloop/client/errors`: every typed error of the client and every predicate on an API `Status`
 * (apimachinery `pkg/api/errors`: `IsNotFound`, `IsConflict`, `IsTooManyRequests`, …, `ReasonForError`). The
 * common ones (`StatusError`, `isNotFound`, `isAlreadyExists`, `isConflict`, `isGone`, `isInvalid`,
 * `isForbidden`, `ignoreNotFound`, `ignoreAlreadyExists`) are also on the package root.
 */

export { InvalidConditionError } from '../conditions.js';
export {
  asStatusError,
  InvalidRequestError,
  ignoreAlreadyExists,
  ignoreNotFound,
  isAlreadyExists,
  isBadRequest,
  isConflict,
  isExpired,
  isForbidden,
  isGone,
  isInternalError,
  isInvalid,
  isNotFound,
  isResourceExpired,
  isServiceUnavailable,
  isTimeout,
  isTooManyRequests,
  isUnauthorized,
  isUnsupportedMediaType,
  newNotFound,
  reasonForError,
  StatusError,
  type StatusReason,
  UnexpectedResponseError,
  UnsupportedPatchTypeError,
  WatchDecodeError,
  WatchEventTooLargeError,
} from '../errors.js';
export { SelectorParseError } from '../label-selector.js';
export {
  isNoMatchError,
  isResourceNotFound,
  type NoKindMatchDetails,
  NoKindMatchError,
} from '../rest-mapper.js';
export { WatchStatusError } from '../watch.js';

/**
 * @packageDocumentation
 * `@kubeloop/client` talks to one Kubernetes API server: typed kind descriptors (`Pod`, `Deployment`, …),
 * the lazy discovery-backed `RESTMapper`, the `Client` (get / list / create / update / patch / delete /
 * watch), typed API errors (`StatusError`, `isNotFound`, …) and label/field selector helpers. It mirrors
 * controller-runtime's `pkg/client` and `pkg/client/apiutil` on top of client-go's `rest` semantics.
 */

export {
  type ApplyConfiguration,
  type ApplyOptions,
  type DeepPartial,
  pruneUnset,
} from './apply.js';
export * from './builtin-kinds.js';
export { ApiClient, type ClientOptions } from './client.js';
export {
  type Condition,
  type ConditionInput,
  type ConditionStatus,
  type Conditions,
  type ConditionTypeStatus,
  findStatusCondition,
  formatConditionTime,
  InvalidConditionError,
  isStatusConditionFalse,
  isStatusConditionPresentAndEqual,
  isStatusConditionTrue,
  removeStatusCondition,
  type SetStatusConditionOptions,
  setStatusCondition,
} from './conditions.js';
export { DelegatingClient } from './delegating-client.js';
export type { DeleteAllOfOptions } from './delete-all-of.js';
export { DynamicRESTMapper, type DynamicRESTMapperOptions } from './dynamic-rest-mapper.js';
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
} from './errors.js';
export {
  escapeFieldValue,
  type FieldRequirement,
  type FieldSelectorInput,
  fieldRequirementsOf,
  formatFieldSelector,
  matchesFieldRequirements,
  parseFieldSelector,
} from './field-selector.js';
export type {
  HttpBody,
  HttpRequest,
  HttpResponse,
  HttpTransport,
} from './http.js';
export type {
  Client,
  Reader,
  StatusClient,
  StatusWriter,
  SubResourceClient,
  SubResourceClientConstructor,
  SubResourceReader,
  SubResourceWriter,
  WatchClient,
  Writer,
} from './interfaces.js';
export {
  apiVersionOf,
  type BuiltinKind,
  builtinKind,
  Eviction,
  type GroupVersion,
  type GroupVersionKind,
  type GroupVersionResource,
  gvkOf,
  gvkString,
  isMetadataOnly,
  type Kind,
  type KubeObject,
  kind,
  type ListMeta,
  type ListOf,
  metadataOnly,
  type ObjectKey,
  type ObjectList,
  type ObjectOf,
  objectKeyFromObject,
  type PartialObjectMetadata,
  type PartialObjectMetadataList,
  parseApiVersion,
  Scale,
  TokenRequest,
} from './kinds.js';
export {
  formatLabelSelector,
  type LabelRequirement,
  type LabelSelectorInput,
  type LabelSelectorObject,
  matchesLabelRequirements,
  parseLabelSelector,
  SelectorParseError,
} from './label-selector.js';
export {
  PARTIAL_OBJECT_METADATA_ACCEPT,
  PARTIAL_OBJECT_METADATA_LIST_ACCEPT,
  toPartialObjectMetadata,
} from './metadata-only.js';
export type { Bytes, IntOrString, MicroTime, Quantity, Time } from './models/scalars.js';
export { type NewClientOptions, newClient } from './new-client.js';
export {
  type CallOptions,
  type DeleteOptions,
  type GetOptions,
  type ListOptions,
  PATCH_CONTENT_TYPES,
  type Patch,
  type PatchOptions,
  type SubResourceUpdateOptions,
  type WatchOptions,
  type WriteOptions,
} from './options.js';
export { type ListPage, type ListPagesOptions, listAll, listPages } from './pager.js';
export { isReplyTooLarge } from './replies.js';
export {
  type InvalidateOptions,
  isNoMatchError,
  isResourceNotFound,
  type NoKindMatchDetails,
  NoKindMatchError,
  type RESTMapper,
  type RESTMapping,
  type ResourceScope,
} from './rest-mapper.js';
export {
  DEFAULT_BACKOFF,
  DEFAULT_RETRY,
  type RetryBackoff,
  retryOnConflict,
  retryOnError,
} from './retry.js';
export { StaticRESTMapper } from './static-rest-mapper.js';
export { toMicroTime, toTime } from './time.js';
export {
  newWarningLogger,
  noWarnings,
  type RateLimiter,
  Transport,
  TransportError,
  type TransportErrorCode,
  type TransportOptions,
  type TransportRequest,
  type TransportResponse,
  type WarningHandler,
} from './transport/index.js';
export {
  DEFAULT_MAX_WATCH_EVENT_BYTES,
  type DecodeWatchStreamOptions,
  decodeWatchStream,
  retryAfterSecondsOf,
  type WatchEvent,
  type WatchEventType,
  WatchStatusError,
} from './watch.js';

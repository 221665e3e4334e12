/**
 * @packageDocumentation
 * `@kubeloop/client` talks to one Kubernetes API server: the `Client` (get / list / create / update / patch /
 * apply / delete / watch and subresources) made by `newClient`, typed kind descriptors for the common kinds,
 * the options of each call, and the common API error checks. It mirrors controller-runtime's `pkg/client` on
 * top of client-go's `rest` semantics. Building blocks live on subpaths: `@kubeloop/client/kinds` (every
 * built-in kind of Kubernetes 1.32), `/models` (their wire types), `/errors` (every error and `Status` predicate), `/conditions`, `/apiutil` (REST mappers,
 * GVK helpers, selectors, paging, watch decoding, retry policies), `/transport` and `/controllerutil`.
 */

export type { ApplyConfiguration, ApplyOptions } from './apply.js';
export { ConfigMap, Deployment, Namespace, Pod, Secret, Service } from './builtin-kinds.js';
export { ApiClient } from './client.js';
export type { DeepMutable, DeepReadonly } from './deep-readonly.js';
export type { DeleteAllOfOptions } from './delete-all-of.js';
export {
  ignoreAlreadyExists,
  ignoreNotFound,
  isAlreadyExists,
  isConflict,
  isForbidden,
  isGone,
  isInvalid,
  isNotFound,
  StatusError,
  type StatusReason,
} from './errors.js';
export type { FieldSelectorInput } from './field-selector.js';
export type {
  CachedClient,
  CacheReader,
  Client,
  Reader,
  StatusClient,
  StatusWriter,
  SubResourceClient,
  SubResourceWriter,
  WatchClient,
  Writer,
} from './interfaces.js';
export {
  type GroupVersionKind,
  type GroupVersionResource,
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
} from './kinds.js';
export type { LabelSelectorInput } from './label-selector.js';
export { type NewClientOptions, newClient } from './new-client.js';
export type {
  CallOptions,
  DeleteOptions,
  GetOptions,
  ListOptions,
  Patch,
  PatchOptions,
  SubResourceUpdateOptions,
  WatchOptions,
  WriteOptions,
} from './options.js';
export {
  type Cached,
  type CachedList,
  deepCopy,
  type Stored,
  type StoredObjectMeta,
} from './readonly.js';
export type { RESTMapper } from './rest-mapper.js';
export { retryOnConflict } from './retry.js';
export { toMicroTime, toTime } from './time.js';
export type { WatchEvent, WatchEventType } from './watch.js';

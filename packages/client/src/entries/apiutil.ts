/**
 * @packageDocumentation
 * `@kubeloop/client/apiutil`: the building blocks under the `Client` (controller-runtime `pkg/client/apiutil`,
 * apimachinery `schema`, `labels`, `fields`, client-go `tools/pager`, `util/retry`, `rest/watch`): REST mappers,
 * group/version/kind helpers, label and field selector parsing and matching, metadata-only conversion, list
 * paging, watch stream decoding, retry policies, the delegating (cache-reading) client and the HTTP transport
 * contract. A controller rarely needs them; libraries built on the client do.
 */
export { type DeepPartial, pruneUnset } from '../apply.js';
export type { ClientOptions } from '../client.js';
export { DelegatingClient } from '../delegating-client.js';
export { DynamicRESTMapper, type DynamicRESTMapperOptions } from '../dynamic-rest-mapper.js';
export {
  escapeFieldValue,
  type FieldRequirement,
  fieldRequirementsOf,
  formatFieldSelector,
  matchesFieldRequirements,
  parseFieldSelector,
} from '../field-selector.js';
export type { HttpBody, HttpRequest, HttpResponse, HttpTransport } from '../http.js';
export type { SubResourceClientConstructor, SubResourceReader } from '../interfaces.js';
export {
  apiVersionOf,
  type GroupVersion,
  gvkOf,
  gvkString,
  isMetadataOnly,
  type PartialObjectMetadataList,
  parseApiVersion,
} from '../kinds.js';
export {
  formatLabelSelector,
  type LabelRequirement,
  type LabelSelectorObject,
  matchesLabelRequirements,
  parseLabelSelector,
} from '../label-selector.js';
export {
  PARTIAL_OBJECT_METADATA_ACCEPT,
  PARTIAL_OBJECT_METADATA_LIST_ACCEPT,
  toPartialObjectMetadata,
} from '../metadata-only.js';
export { PATCH_CONTENT_TYPES } from '../options.js';
export { type ListPage, type ListPagesOptions, listAll, listPages } from '../pager.js';
export { RAW_JSON, rawJsonOf, withRawJson } from '../raw-json.js';
export { isReplyTooLarge } from '../replies.js';
export type { InvalidateOptions, RESTMapping, ResourceScope } from '../rest-mapper.js';
export { DEFAULT_BACKOFF, DEFAULT_RETRY, type RetryBackoff, retryOnError } from '../retry.js';
export { StaticRESTMapper } from '../static-rest-mapper.js';
export {
  DEFAULT_MAX_WATCH_EVENT_BYTES,
  type DecodeWatchStreamOptions,
  decodeWatchStream,
  retryAfterSecondsOf,
} from '../watch.js';

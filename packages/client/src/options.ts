/**
 * Per-call options of the client, one object per verb (controller-runtime's `pkg/client/options.go`, where
 * they are variadic `ListOption`s etc.), and the patch shape (`pkg/client/patch.go`).
 */
import type { FieldSelectorInput } from './field-selector.js';
import type { LabelSelectorInput } from './label-selector.js';

/** Options every call takes. */
export interface CallOptions {
  /** Aborts the request (and, for a watch, ends the stream). */
  readonly signal?: AbortSignal;
}

/** Options for `get`. */
export interface GetOptions extends CallOptions {
  /** `resourceVersion` query: `'0'` allows a cached answer. */
  readonly resourceVersion?: string;
}

/** Options for `list` (controller-runtime `ListOptions`, as one object). */
export interface ListOptions extends CallOptions {
  /** List in this namespace; absent or `''`: all namespaces (or a cluster-scoped kind). */
  readonly namespace?: string;
  readonly labelSelector?: LabelSelectorInput;
  readonly fieldSelector?: FieldSelectorInput;
  /** Page size; the server returns `metadata.continue` when more remain. */
  readonly limit?: number;
  /** The `metadata.continue` token of the previous page. */
  readonly continue?: string;
  /** `''` most recent (quorum read), `'0'` any (cache), `'N'` not older than N. */
  readonly resourceVersion?: string;
  readonly resourceVersionMatch?: 'NotOlderThan' | 'Exact';
  /**
   * Decodes one item of the reply from its JSON text, instead of `JSON.parse`: what it returns is put in
   * `items` in that item's place (given `apiVersion`/`kind` when it lacks them). For a caller that keeps the
   * text rather than the object (an informer with `objectRetention: 'bytes'`, which returns a small stub
   * carrying the text under `RAW_JSON`), so a large list is never held as parsed objects. Called only when
   * lists are decoded as they stream (`listDecoding: 'stream'`, the default) and the kind is not
   * metadata-only; otherwise items come parsed. A `SyntaxError` it throws fails the list as a reply that is
   * not JSON.
   */
  readonly decodeItem?: (json: string) => object;
}

/** Options for `watch`. */
export interface WatchOptions extends CallOptions {
  readonly namespace?: string;
  readonly labelSelector?: LabelSelectorInput;
  readonly fieldSelector?: FieldSelectorInput;
  /** Start after this resourceVersion; `''`/`'0'`/absent: synthetic ADDED events for current state first. */
  readonly resourceVersion?: string;
  /** Ask for BOOKMARK events. @defaultValue false */
  readonly allowWatchBookmarks?: boolean;
  /** Server-side watch timeout, in seconds. */
  readonly timeoutSeconds?: number;
  /** Streaming list (KEP-3157): initial state as ADDED events, then a bookmark marking their end. */
  readonly sendInitialEvents?: boolean;
  readonly resourceVersionMatch?: 'NotOlderThan';
  /**
   * Bound on one event (one line of the stream), in bytes, for this watch; a longer one ends it with a
   * `WatchEventTooLargeError`. @defaultValue the client's `maxWatchEventBytes` (16 MiB)
   */
  readonly maxEventBytes?: number;
  /**
   * Each event's object carries the JSON text it was parsed from under `RAW_JSON` (`rawJsonOf(obj)`, from
   * `@kubeloop/client/apiutil`), when the event line has kube-apiserver's shape (`{"type":…,"object":…}`
   * and nothing else); for a caller that keeps bytes instead of objects. @defaultValue false
   */
  readonly keepObjectJson?: boolean;
}

/** Options for writes. */
export interface WriteOptions extends CallOptions {
  /** `dryRun=All`: validate, do not persist. */
  readonly dryRun?: boolean;
  /** `fieldManager` query; falls back to the client's `fieldOwner`. */
  readonly fieldManager?: string;
}

/** Options for `delete` (DeleteOptions body). */
export interface DeleteOptions extends CallOptions {
  /** Grace period, in seconds. */
  readonly gracePeriodSeconds?: number;
  readonly propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  readonly preconditions?: { readonly uid?: string; readonly resourceVersion?: string };
  readonly dryRun?: boolean;
}

/**
 * A patch: `merge` (RFC 7386), `json` (RFC 6902 operations), `strategic` (built-in kinds only) or
 * `apply` (server-side apply; needs a field manager). `data` is serialised as JSON.
 */
export interface Patch {
  readonly type: 'merge' | 'json' | 'strategic' | 'apply';
  readonly data: unknown;
}

/** Options for `patch`. */
export interface PatchOptions extends WriteOptions {
  /** Server-side apply only: take ownership of conflicting fields. */
  readonly force?: boolean;
}

/** Content-Type per patch type (what the API server requires; it answers 415 otherwise). */
export const PATCH_CONTENT_TYPES: Readonly<Record<Patch['type'], string>> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
};

/** Options for a subresource `update` (controller-runtime `SubResourceUpdateOptions`). */
export interface SubResourceUpdateOptions<S extends object = object> extends WriteOptions {
  /** Sent instead of the object when the subresource has its own body (e.g. a `Scale` for `scale`). */
  readonly subResourceBody?: S;
}

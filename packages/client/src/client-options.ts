import type { HttpTransport } from './http.js';
import type { RESTMapper } from './rest-mapper.js';
import type { DEFAULT_MAX_WATCH_EVENT_BYTES } from './watch.js';

/** Options for `new ApiClient(options)` (the root's `ApiClient`; `newClient` builds one from a `RestConfig`). */
export interface ClientOptions {
  /** The transport to the API server (usually `new Transport(config)`). Closed by `close()`. */
  readonly transport: HttpTransport;
  /** @defaultValue a `DynamicRESTMapper` over the same transport. */
  readonly restMapper?: RESTMapper;
  /** Default `fieldManager` for writes (controller-runtime `client.WithFieldOwner`). */
  readonly fieldOwner?: string;
  /**
   * Bound on one watch event (one line of the stream), in bytes; a longer one ends the watch with a
   * `WatchEventTooLargeError`. @defaultValue 16 MiB ({@link DEFAULT_MAX_WATCH_EVENT_BYTES}, apimachinery's
   * streaming decoder limit)
   */
  readonly maxWatchEventBytes?: number;
  /**
   * How a list reply is decoded. `'stream'`: as its bytes arrive, each item parsed on its own, so the reply is
   * never held as one string beside its parsed form (kube-apiserver answers a `resourceVersion=0` list from
   * its watch cache in one piece, ~150 MB for 20,000 pods) and a reply longer than a JavaScript string decodes.
   * `'whole'`: the body read as one string, then `JSON.parse` (the earlier path; a reply over ~512 MiB then
   * fails with an error `isReplyTooLarge` recognises). Both give the same objects. @defaultValue 'stream'
   */
  readonly listDecoding?: 'stream' | 'whole';
}

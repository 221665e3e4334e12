/**
 * The watch request (client-go `Request.Watch`, controller-runtime `WithWatch.Watch`): `GET <collection>?watch=true`
 * with the list's selectors, streamed and decoded event by event.
 */
import { statusErrorFromResponse } from './errors.js';
import { formatFieldSelector } from './field-selector.js';
import type { HttpResponse, HttpTransport } from './http.js';
import { mappingForRequest } from './internal/request-mapping.js';
import { gvkOf, isMetadataOnly, type Kind, type KubeObject } from './kinds.js';
import { formatLabelSelector } from './label-selector.js';
import { PARTIAL_OBJECT_METADATA_ACCEPT } from './metadata-only.js';
import type { WatchOptions } from './options.js';
import { collectionPath, withQuery } from './paths.js';
import { withTypeMeta } from './replies.js';
import { isResourceNotFound, type RESTMapper } from './rest-mapper.js';
import { decodeWatchStream, type WatchEvent } from './watch.js';

/** What a watch needs from its client. */
export interface WatchDeps {
  readonly transport: HttpTransport;
  readonly restMapper: RESTMapper;
  /** Bound on one event, in bytes, unless the watch's `maxEventBytes` says otherwise. */
  readonly maxEventBytes: number;
}

/**
 * Opens the watch and yields its events (`apiVersion`/`kind` filled in; metadata-only kinds reduced to
 * their metadata). A 404 for the resource forgets the kind's group version and opens the watch once more
 * with a fresh mapping (`retryStale`). Aborting `options.signal` ends the iteration without an error.
 * @throws StatusError for a non-2xx answer, WatchDecodeError / WatchStatusError from the stream,
 *   TransportError, NoKindMatchError.
 */
export async function* watchRequest<T extends KubeObject>(
  deps: WatchDeps,
  kind: Kind<T>,
  options: WatchOptions,
  retryStale = true,
): AsyncGenerator<WatchEvent<T>, void, undefined> {
  const mapping = await mappingForRequest(deps.restMapper, kind, { namespace: options.namespace });
  const q = new URLSearchParams();
  q.set('watch', 'true');
  const ls = formatLabelSelector(options.labelSelector);
  if (ls) q.set('labelSelector', ls);
  const fs = formatFieldSelector(options.fieldSelector);
  if (fs) q.set('fieldSelector', fs);
  if (options.resourceVersion !== undefined) q.set('resourceVersion', options.resourceVersion);
  if (options.allowWatchBookmarks) q.set('allowWatchBookmarks', 'true');
  if (options.timeoutSeconds !== undefined)
    q.set('timeoutSeconds', String(Math.floor(options.timeoutSeconds)));
  if (options.sendInitialEvents !== undefined) q.set('sendInitialEvents', String(options.sendInitialEvents));
  if (options.resourceVersionMatch) q.set('resourceVersionMatch', options.resourceVersionMatch);
  const path = withQuery(collectionPath(mapping, options.namespace), q);
  const signal = options.signal;
  if (signal?.aborted) return;
  let res: HttpResponse;
  try {
    res = await deps.transport.request({
      method: 'GET',
      path,
      headers: { accept: isMetadataOnly(kind) ? PARTIAL_OBJECT_METADATA_ACCEPT : 'application/json' },
      stream: true,
      ...(signal ? { signal } : {}),
    });
  } catch (err) {
    if (signal?.aborted) return;
    throw err;
  }
  if (res.status < 200 || res.status >= 300) {
    const text = await res.body.text().catch(() => '');
    const err = statusErrorFromResponse(res.status, text, `GET ${path.split('?')[0]} (watch)`);
    // A 404 for the resource: forget the group version and open the watch once more with a fresh mapping.
    if (retryStale && isResourceNotFound(err) && deps.restMapper.invalidate) {
      deps.restMapper.invalidate(gvkOf(kind));
      yield* watchRequest(deps, kind, options, false);
      return;
    }
    throw err;
  }
  try {
    const maxEventBytes = options.maxEventBytes ?? deps.maxEventBytes;
    const keepObjectJson = options.keepObjectJson === true && !isMetadataOnly(kind);
    for await (const ev of decodeWatchStream<T>(res.body, { maxEventBytes, keepObjectJson })) {
      if (ev.type !== 'ERROR' && ev.type !== 'BOOKMARK') {
        if (isMetadataOnly(kind)) {
          yield { type: ev.type, object: withTypeMeta(kind, ev.object) };
          continue;
        }
        withTypeMeta(kind, ev.object);
      }
      yield ev;
    }
  } catch (err) {
    if (signal?.aborted) return;
    throw err;
  } finally {
    try {
      res.body.destroy?.();
    } catch {
      // already closed
    }
  }
}

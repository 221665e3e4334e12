/**
 * A watch request's options and their validation (protocol §6): the query checks kube-apiserver makes before it
 * answers 200 (continue, sendInitialEvents, resourceVersionMatch), the parsed selectors and starting point, and
 * the bookmark timing of kube-apiserver 1.32's watch cache (storage/cacher `cacheWatcher.nextBookmarkTime`) that
 * `serveWatch` (watch.ts) follows.
 */
import type { Clock } from '@kubeloop/core';
import { invalid } from './errors.js';
import { parseRv, type Registry } from './registry.js';
import type { ResourceType } from './resource-type.js';

/** How watch event objects are rendered. */
export type WatchEncoding = 'json' | 'table' | 'partial';

export interface WatchOptions {
  readonly rt: ResourceType;
  readonly namespace?: string;
  readonly query: URLSearchParams;
  readonly encoding: WatchEncoding;
  /**
   * Interval between the times a watch with allowWatchBookmarks is due for a BOOKMARK (ms; the cacher's
   * `defaultBookmarkFrequency`, 60000). 0: no periodic or pre-timeout bookmarks.
   */
  readonly bookmarkIntervalMs: number;
  /** Default stream length when `timeoutSeconds` is absent (ms). */
  readonly defaultTimeoutMs: number;
  /**
   * Bytes of live events that may wait unread for a watcher before the server closes its watch (default
   * {@link DEFAULT_WATCH_BUFFER_BYTES}).
   */
  readonly maxBufferedBytes?: number;
  /** Clock of the deadline and bookmark timers (default: the real one). */
  readonly clock?: Clock;
}

/** kube-apiserver's last bookmark before a watch's deadline comes this long before it (`nextBookmarkTime`). */
export const PRE_TIMEOUT_BOOKMARK_MS = 2000;

/**
 * The cacher's bookmark timer ticks about every second (1 s, jitter 0.25) and serves the watchers due by then;
 * a watch due "immediately" (a streaming list whose end bookmark is still owed) waits for the next tick.
 */
export const BOOKMARK_TICK_MS = 1000;

/**
 * When a watch is next due for a bookmark, as `cacheWatcher.nextBookmarkTime`: `bookmarkIntervalMs` from now,
 * but no later than 2 s before the deadline; `undefined` when that time is not after now (upstream serves a
 * watch due exactly now once more on the next tick of its 1 s timer, when that time has passed).
 */
export function nextBookmarkAt(nowMs: number, deadlineMs: number, intervalMs: number): number | undefined {
  const at = Math.min(nowMs + intervalMs, deadlineMs - PRE_TIMEOUT_BOOKMARK_MS);
  return at <= nowMs ? undefined : at;
}

/**
 * How much unread event data a watcher may leave queued (bytes). kube-apiserver gives each watcher a bounded
 * buffer and closes a watcher that does not keep up ("Forcing watcher close due to unresponsiveness",
 * storage/cacher); the client then re-watches from the last resourceVersion it read.
 */
export const DEFAULT_WATCH_BUFFER_BYTES = 8 * 1024 * 1024;

/**
 * Validate the watch options before headers are sent (422/400 are normal HTTP answers).
 * Returns the parsed selectors and starting point.
 */
export function prepareWatch(registry: Registry, opts: WatchOptions) {
  const q = opts.query;
  const rvParam = q.get('resourceVersion') ?? '';
  const match = q.get('resourceVersionMatch') ?? '';
  const sie = q.get('sendInitialEvents');
  const sendInitialEvents = sie === 'true' || sie === '1';
  if (q.get('continue'))
    throw invalid('ListOptions', 'meta.k8s.io', '', [
      {
        type: 'FieldValueForbidden',
        field: 'continue',
        detail: 'Forbidden: continue is forbidden for watch',
      },
    ]);
  if (sie !== null) {
    if (match !== 'NotOlderThan')
      throw invalid('ListOptions', 'meta.k8s.io', '', [
        {
          type: 'FieldValueForbidden',
          field: 'sendInitialEvents',
          detail:
            'Forbidden: sendInitialEvents is forbidden for watch unless resourceVersionMatch is set to NotOlderThan',
        },
      ]);
  } else if (match) {
    throw invalid('ListOptions', 'meta.k8s.io', '', [
      {
        type: 'FieldValueForbidden',
        field: 'resourceVersionMatch',
        detail: 'Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
      },
    ]);
  }
  const sel = registry.selectors(opts.rt, q.get('labelSelector'), q.get('fieldSelector'));
  const fromRv = rvParam === '' || rvParam === '0' ? undefined : parseRv(rvParam);
  const timeoutSeconds = q.get('timeoutSeconds');
  const timeoutMs =
    timeoutSeconds !== null && /^\d+$/.test(timeoutSeconds) && Number(timeoutSeconds) > 0
      ? Number(timeoutSeconds) * 1000
      : opts.defaultTimeoutMs;
  const bookmarks = q.get('allowWatchBookmarks') === 'true' || q.get('allowWatchBookmarks') === '1';
  return { sel, fromRv, rvParam, sendInitialEvents, timeoutMs, bookmarks };
}

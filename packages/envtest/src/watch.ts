/**
 * Watch streams (protocol §6): chunked responses, one JSON event per line, replay from a resourceVersion,
 * synthetic ADDED events, bookmarks, sendInitialEvents with the `k8s.io/initial-events-end` bookmark,
 * timeoutSeconds, and ERROR 410 for a resourceVersion older than the history. Every write goes through the
 * fault injector's per-watch hooks.
 */
import type { ServerResponse } from 'node:http';
import { expired, failureStatus, invalid } from './errors.js';
import type { RequestContext, WatchFaults, WatchWriter } from './faults/index.js';
import { baseHeaders } from './http.js';
import { parseRv, type Registry } from './registry.js';
import { apiVersionOf, type KObject, type ResourceType } from './resource-type.js';
import { type Entry, ExpiredError, type StoreEvent } from './store.js';
import { columnDefinitions, tableRow } from './table.js';

function lowerBound(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** How watch event objects are rendered. */
export type WatchEncoding = 'json' | 'table' | 'partial';

export interface WatchOptions {
  readonly rt: ResourceType;
  readonly namespace?: string;
  readonly query: URLSearchParams;
  readonly encoding: WatchEncoding;
  /** Interval between periodic BOOKMARK events when allowed (ms). */
  readonly bookmarkIntervalMs: number;
  /** Default stream length when `timeoutSeconds` is absent (ms). */
  readonly defaultTimeoutMs: number;
  /**
   * Bytes of live events that may wait unread for a watcher before the server closes its watch (default
   * {@link DEFAULT_WATCH_BUFFER_BYTES}).
   */
  readonly maxBufferedBytes?: number;
}

/**
 * How much unread event data a watcher may leave queued (bytes). kube-apiserver gives each watcher a bounded
 * buffer and closes a watcher that does not keep up ("Forcing watcher close due to unresponsiveness",
 * storage/cacher); the client then re-watches from the last resourceVersion it read.
 */
export const DEFAULT_WATCH_BUFFER_BYTES = 8 * 1024 * 1024;

/** Live watches, so the server can end them all (restart, stop) or those of one resource (CRD deleted). */
export class WatchSet {
  readonly #active = new Map<(ended?: boolean) => void, string | undefined>();
  /**
   * Register a watch's stop function (called with `true` when the stream should end cleanly because its
   * resource is gone), optionally under its storage key; returns the unregister function.
   */
  add(stop: (ended?: boolean) => void, storageKey?: string): () => void {
    this.#active.set(stop, storageKey);
    return () => this.#active.delete(stop);
  }
  get size(): number {
    return this.#active.size;
  }
  stopAll(): void {
    for (const s of [...this.#active.keys()]) s();
    this.#active.clear();
  }
  /** End every watch on one storage key (its resource stopped being served). */
  stopFor(storageKey: string): void {
    for (const [s, key] of [...this.#active]) if (key === storageKey) s(true);
  }
}

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

/**
 * Serve a watch on an already-validated request. Resolves when the stream ends.
 */
export async function serveWatch(
  registry: Registry,
  opts: WatchOptions,
  prepared: ReturnType<typeof prepareWatch>,
  ctx: RequestContext,
  res: ServerResponse,
  faults: { onWatchStart(ctx: RequestContext, writer: WatchWriter): WatchFaults },
  watches: WatchSet,
): Promise<void> {
  const { rt, namespace } = opts;
  const { sel, fromRv, rvParam, sendInitialEvents, timeoutMs, bookmarks } = prepared;
  if (fromRv !== undefined && fromRv > registry.store.rv)
    await registry.waitForRv(fromRv).catch(() => undefined);
  // An RV that is too old (compacted, or out of the history window alike) is answered as the watch cache
  // does: HTTP 200, then one ERROR event carrying a 410 Expired Status, then the end (below).
  res.writeHead(200, {
    ...baseHeaders(),
    'Content-Type': 'application/json',
    'Transfer-Encoding': 'chunked',
  });
  res.flushHeaders();

  let ended = false;
  // Ending or destroying a response while it is corked must flush first: since Node 21 a chunked response
  // buffers corked writes itself, and end() under cork drops them (the client got only the terminator, so
  // a watch ended right after N events arrived empty on Node 22/24). Fully uncorked, the bytes go out first.
  const flushCorked = () => {
    while (res.writableCorked > 0) res.uncork();
  };
  const maxBuffered = opts.maxBufferedBytes ?? DEFAULT_WATCH_BUFFER_BYTES;
  // The initial burst (synthetic ADDEDs, replay) is written before the limit applies, as the server sends
  // initial events without a deadline; live events are the ones a slow watcher gets closed for.
  let live = false;
  const writer: WatchWriter = {
    write: (chunk) => {
      if (res.destroyed || res.writableEnded) return;
      // what is still queued from earlier events has not been read: past the limit, the watcher is too slow
      if (live && !ended && res.writableLength > maxBuffered) {
        stop('slow');
        return;
      }
      res.write(chunk);
    },
    end: () => {
      if (res.destroyed || res.writableEnded) return;
      flushCorked();
      res.end();
    },
    destroy: () => {
      if (!res.destroyed) flushCorked();
      res.destroy();
    },
  };
  const wf = faults.onWatchStart(ctx, writer);
  const apiVersion = apiVersionOf(rt);
  let tableHeaderSent = false;
  const encodingKey = `${rt.group}/${rt.version}/${rt.resource}/${opts.encoding}`;
  const nsPrefix = rt.namespaced && namespace ? namespace : undefined;

  const renderObject = (entry: Entry, prevForDelete?: Entry): unknown => {
    let o = registry.view(rt, entry) as KObject;
    if (prevForDelete) {
      const p = structuredClone(registry.view(rt, prevForDelete)) as KObject;
      (p.metadata as Record<string, unknown>).resourceVersion = String(entry.rv);
      o = p;
    }
    if (opts.encoding === 'partial')
      return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata };
    if (opts.encoding === 'table') {
      const withHeaders = !tableHeaderSent;
      tableHeaderSent = true;
      return {
        kind: 'Table',
        apiVersion: 'meta.k8s.io/v1',
        metadata: { resourceVersion: String(entry.rv) },
        columnDefinitions: withHeaders ? columnDefinitions(rt) : null,
        rows: [tableRow(rt, o, 'Metadata', Date.now())],
      };
    }
    return o;
  };

  const emit = (type: string, object: unknown, line: string) => {
    if (ended) return;
    wf.deliver({ type, object }, line);
  };

  const sendEntry = (type: string, entry: Entry, ev?: StoreEvent, prevForDelete?: Entry) => {
    // Encode once per fan-out: the line is cached on the store event, per encoding and event type.
    const cacheKey = `${encodingKey}|${type}|${prevForDelete ? 'p' : ''}`;
    if (ev && opts.encoding !== 'table') {
      let line = ev.lines.get(cacheKey);
      let object: unknown;
      if (line === undefined) {
        object = renderObject(entry, prevForDelete);
        const json =
          !prevForDelete && !rt.fromStorage && opts.encoding === 'json' ? entry.json : JSON.stringify(object);
        line = `{"type":"${type}","object":${json}}\n`;
        ev.lines.set(cacheKey, line);
      } else
        object =
          prevForDelete || rt.fromStorage || opts.encoding !== 'json'
            ? renderObject(entry, prevForDelete)
            : entry.obj;
      emit(type, object, line);
      return;
    }
    const object = renderObject(entry, prevForDelete);
    const json =
      !prevForDelete && !rt.fromStorage && opts.encoding === 'json' ? entry.json : JSON.stringify(object);
    emit(type, object, `{"type":"${type}","object":${json}}\n`);
  };

  let lastRv = fromRv ?? registry.store.rv;
  const sendBookmark = (annotations?: Record<string, string>) => {
    const object =
      opts.encoding === 'table'
        ? {
            kind: 'Table',
            apiVersion: 'meta.k8s.io/v1',
            metadata: { resourceVersion: String(lastRv) },
            columnDefinitions: null,
            rows: null,
          }
        : {
            kind: opts.encoding === 'partial' ? 'PartialObjectMetadata' : rt.kind,
            apiVersion: opts.encoding === 'partial' ? 'meta.k8s.io/v1' : apiVersion,
            metadata: {
              resourceVersion: String(lastRv),
              creationTimestamp: null,
              ...(annotations ? { annotations } : {}),
            },
          };
    emit('BOOKMARK', object, `${JSON.stringify({ type: 'BOOKMARK', object })}\n`);
  };

  const inScope = (e: Entry) => nsPrefix === undefined || e.namespace === nsPrefix;
  const matches = (e: Entry) => inScope(e) && (sel.empty || sel.matches(e.obj as KObject));

  const onEvent = (ev: StoreEvent) => {
    if (ended) return;
    lastRv = Math.max(lastRv, ev.rv);
    const cur = matches(ev.entry);
    if (ev.type === 'ADDED') {
      if (cur) sendEntry('ADDED', ev.entry, ev);
      return;
    }
    if (ev.type === 'DELETED') {
      if (cur || (ev.prev && matches(ev.prev))) sendEntry('DELETED', ev.entry, ev);
      return;
    }
    const was = ev.prev ? matches(ev.prev) : false;
    if (cur && was) sendEntry('MODIFIED', ev.entry, ev);
    else if (cur && !was) sendEntry('ADDED', ev.entry, ev);
    else if (!cur && was && ev.prev) sendEntry('DELETED', ev.entry, ev, ev.prev);
  };

  let cancel: (() => void) | undefined;
  let done!: () => void;
  const finished = new Promise<void>((r) => {
    done = r;
  });
  let timeoutTimer: NodeJS.Timeout | undefined;
  let bookmarkTimer: NodeJS.Timeout | undefined;
  const stop = (reason: 'timeout' | 'close' | 'error' | 'server' | 'slow' | 'gone') => {
    if (ended) return;
    if (reason === 'timeout' && bookmarks) {
      lastRv = Math.max(lastRv, registry.store.rv);
      sendBookmark();
    }
    ended = true;
    cancel?.();
    if (timeoutTimer) clearTimeout(timeoutTimer);
    if (bookmarkTimer) clearInterval(bookmarkTimer);
    unregister();
    try {
      wf.close();
    } finally {
      if (reason === 'server') writer.destroy();
      else writer.end();
      done();
    }
  };
  const unregister = watches.add((gone) => stop(gone ? 'gone' : 'server'), rt.storageKey);
  res.on('close', () => stop('close'));

  try {
    const initial = fromRv === undefined || sendInitialEvents;
    const sub = registry.store.subscribe(rt.storageKey, initial ? undefined : fromRv, onEvent);
    cancel = sub.cancel;
    // batch the initial burst into few TLS records (each event still goes through the fault hooks)
    res.cork();
    try {
      if (initial) {
        const snap = registry.store.snapshot(rt.storageKey);
        lastRv = snap.rv;
        const keys = snap.keys;
        let i = 0;
        let end = keys.length;
        if (nsPrefix !== undefined) {
          i = lowerBound(keys, `${nsPrefix}/`);
          end = lowerBound(keys, `${nsPrefix}0`);
        }
        for (; i < end; i++) {
          if (ended) break;
          const e = snap.get(keys[i]!);
          if (e && matches(e)) sendEntry('ADDED', e);
        }
        if (sendInitialEvents) sendBookmark({ 'k8s.io/initial-events-end': 'true' });
      } else {
        for (const ev of sub.replay) onEvent(ev);
      }
    } finally {
      res.uncork();
    }
    live = true;
  } catch (e) {
    if (e instanceof ExpiredError) {
      const st = expired(`too old resource version: ${rvParam} (${e.oldest})`).status;
      emit('ERROR', st, `${JSON.stringify({ type: 'ERROR', object: st })}\n`);
      stop('error');
      return finished;
    }
    const st = failureStatus(500, 'InternalError', e instanceof Error ? e.message : String(e));
    emit('ERROR', st, `${JSON.stringify({ type: 'ERROR', object: st })}\n`);
    stop('error');
    return finished;
  }
  timeoutTimer = setTimeout(() => stop('timeout'), timeoutMs);
  if (bookmarks && opts.bookmarkIntervalMs > 0)
    bookmarkTimer = setInterval(() => {
      lastRv = Math.max(lastRv, registry.store.rv);
      if (!ended) sendBookmark();
    }, opts.bookmarkIntervalMs);
  return finished;
}

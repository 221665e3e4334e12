/**
 * Watch streams (protocol §6): chunked responses, one JSON event per line, replay from a resourceVersion,
 * synthetic ADDED events, bookmarks, sendInitialEvents with the `k8s.io/initial-events-end` bookmark,
 * timeoutSeconds, and ERROR 410 for a resourceVersion older than the history. Every write goes through the
 * fault injector's per-watch hooks.
 *
 * Bookmarks follow kube-apiserver 1.32's watch cache (storage/cacher: `cacheWatcher.nextBookmarkTime`,
 * `Cacher.dispatchEvents`, `cacheWatcher.process`): a watch with allowWatchBookmarks is due for one every
 * `bookmarkIntervalMs` (the cacher's `defaultBookmarkFrequency`, 1 min) and 2 s before its deadline, and none
 * once that time has passed (so `timeoutSeconds` ≤ 2 gets none); a due watch gets a BOOKMARK carrying the RV its
 * resource's watch cache has processed ({@link Store.cacheRv}) only when that RV is past the RV the watch started
 * from (after its initial or replayed events). A quiet resource type therefore sends none; another object of the
 * same resource changing, a consistent list of it, or etcd's progress notification moves that RV. The stream
 * ends at the deadline without a bookmark of its own.
 */
import type { ServerResponse } from 'node:http';
import { realClock } from '@kubeloop/core';
import { expired, failureStatus } from './errors.js';
import type { RequestContext, WatchFaults, WatchWriter } from './faults/index.js';
import { baseHeaders } from './http.js';
import type { Registry } from './registry.js';
import { apiVersionOf, type KObject } from './resource-type.js';
import { type Entry, ExpiredError, type Store, type StoreEvent } from './store.js';
import { columnDefinitions, tableRow } from './table.js';
import {
  BOOKMARK_TICK_MS,
  DEFAULT_WATCH_BUFFER_BYTES,
  nextBookmarkAt,
  type prepareWatch,
  type WatchOptions,
} from './watch-options.js';
import type { WatchSet } from './watch-set.js';

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

  const store: Store = registry.store;
  const clock = opts.clock ?? realClock;
  const deadline = clock.now() + timeoutMs;
  // The RV the watch has reached by its initial (or replayed) events: a periodic bookmark is sent only past it.
  let startRv = fromRv ?? store.cacheRv(rt.storageKey);
  const sendBookmark = (rv: number, annotations?: Record<string, string>) => {
    const object =
      opts.encoding === 'table'
        ? {
            kind: 'Table',
            apiVersion: 'meta.k8s.io/v1',
            metadata: { resourceVersion: String(rv) },
            columnDefinitions: null,
            rows: null,
          }
        : {
            kind: opts.encoding === 'partial' ? 'PartialObjectMetadata' : rt.kind,
            apiVersion: opts.encoding === 'partial' ? 'meta.k8s.io/v1' : apiVersion,
            metadata: {
              resourceVersion: String(rv),
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
    const cur = matches(ev.entry);
    // the replay moves the watch's start RV by the events it passes on (watchCacheInterval's filter)
    if (!live && (cur || (ev.prev !== undefined && matches(ev.prev)))) startRv = Math.max(startRv, ev.rv);
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
  let timeoutTimer: { cancel(): void } | undefined;
  let bookmarkTimer: { cancel(): void } | undefined;
  const stop = (reason: 'timeout' | 'close' | 'error' | 'server' | 'slow' | 'gone') => {
    if (ended) return;
    ended = true;
    cancel?.();
    timeoutTimer?.cancel();
    bookmarkTimer?.cancel();
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
        if (sendInitialEvents) store.requireFresh(rt.storageKey, rvParam === '' ? store.rv : (fromRv ?? 0));
        startRv = store.cacheRv(rt.storageKey);
        const snap = registry.store.snapshot(rt.storageKey);
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
        // The end bookmark carries the watch cache's RV, made fresh first when the request needs it
        // (setInitialEventsEndBookmarkIfRequested after waitUntilWatchCacheFreshAndForceAllEvents).
        if (sendInitialEvents)
          sendBookmark(store.cacheRv(rt.storageKey), { 'k8s.io/initial-events-end': 'true' });
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
  timeoutTimer = clock.setTimer(() => stop('timeout'), deadline - clock.now());
  if (bookmarks && opts.bookmarkIntervalMs > 0) {
    const schedule = (at: number | undefined) => {
      if (at === undefined || ended) return;
      bookmarkTimer = clock.setTimer(() => {
        if (ended) return;
        // cacheWatcher.process: a bookmark goes out only when it is past what the watch already has
        const rv = store.cacheRv(rt.storageKey);
        if (rv > startRv) sendBookmark(rv);
        // from the due time at least: a real timer may fire a fraction of a millisecond early
        schedule(nextBookmarkAt(Math.max(clock.now(), at), deadline, opts.bookmarkIntervalMs));
      }, at - clock.now());
    };
    // A streaming list is due at the next tick of the cacher's bookmark timer; any other watch a minute on.
    const now = clock.now();
    schedule(
      sendInitialEvents ? now + BOOKMARK_TICK_MS : nextBookmarkAt(now, deadline, opts.bookmarkIntervalMs),
    );
  }
  return finished;
}

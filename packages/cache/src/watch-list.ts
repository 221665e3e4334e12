import { type KubeObject, StatusError, type WatchEvent } from '@kubeloop/client';
import type { Clock } from '@kubeloop/core';
import { onAbort } from './internal/abort.js';
import type { ListerWatcher } from './list-watch.js';
import { keyOf, WatchListEndedError, WatchListTimeoutError } from './watch-errors.js';

/** The annotation on the bookmark that ends a streaming list's initial events. */
export const INITIAL_EVENTS_END_ANNOTATION = 'k8s.io/initial-events-end';

/** What a streaming initial list gathered, and the watch that goes on from there (not linked to any signal). */
export interface StreamedList<T extends KubeObject> {
  readonly items: T[];
  readonly resourceVersion: string;
  readonly iterator: AsyncIterator<WatchEvent<T>>;
  readonly abort: AbortController;
}

/** Options of {@link streamInitialList}. */
export interface StreamInitialListOptions<T extends KubeObject = KubeObject> {
  /** The last known resourceVersion, or `''` for the most recent state. */
  readonly resourceVersion: string;
  /** The server-side watch timeout, in seconds. */
  readonly timeoutSeconds: number;
  /** How long the end bookmark may take, in ms. */
  readonly timeoutMs: number;
  readonly clock: Clock;
  readonly signal: AbortSignal;
  /** Per-object work as each initial object arrives (the store's `prepare`); what it returns is gathered. */
  readonly prepare?: (obj: T) => T;
  /** Called once, at the first event: the server accepted the streaming list (it may still fail later). */
  readonly onAccepted?: () => void;
}

/**
 * The initial state by one watch (client-go WatchList, KEP-3157): `sendInitialEvents=true`,
 * `resourceVersionMatch=NotOlderThan`, bookmarks allowed; the ADDED events until the bookmark annotated
 * {@link INITIAL_EVENTS_END_ANNOTATION} are the listing (a MODIFIED or DELETED before it, which a conforming
 * server does not send, is applied to it). Resolves with the listing and the still-open watch.
 * @throws WatchListTimeoutError (no end bookmark within `timeoutMs`), WatchListEndedError (the stream ended
 *   first), StatusError (an ERROR event), or what the watch throws. On a failure the watch is closed.
 */
export async function streamInitialList<T extends KubeObject>(
  lw: ListerWatcher<T>,
  o: StreamInitialListOptions<T>,
): Promise<StreamedList<T>> {
  const abort = new AbortController();
  const unlink = onAbort(o.signal, () => abort.abort(o.signal.reason));
  let timedOut = false;
  const timer = o.clock.setTimer(() => {
    timedOut = true;
    abort.abort();
  }, o.timeoutMs);
  const items: T[] = [];
  const prepare = o.prepare ?? ((obj: T) => obj);
  let ok = false;
  let accepted = o.onAccepted;
  try {
    const it = lw
      .watch({
        resourceVersion: o.resourceVersion,
        allowWatchBookmarks: true,
        sendInitialEvents: true,
        resourceVersionMatch: 'NotOlderThan',
        timeoutSeconds: o.timeoutSeconds,
        signal: abort.signal,
      })
      [Symbol.asyncIterator]();
    for (;;) {
      const next = await it.next();
      if (next.done) throw new WatchListEndedError('streaming list ended before its end bookmark');
      const ev = next.value;
      if (ev.type === 'ERROR') throw new StatusError(ev.object);
      if (accepted) {
        accepted();
        accepted = undefined;
      }
      if (ev.type === 'ADDED') {
        items.push(prepare(ev.object));
        continue;
      }
      if (ev.type === 'BOOKMARK') {
        if (ev.object.metadata?.annotations?.[INITIAL_EVENTS_END_ANNOTATION] !== 'true') continue;
        ok = true;
        return { items, resourceVersion: ev.object.metadata?.resourceVersion ?? '', iterator: it, abort };
      }
      const key = keyOf(ev.object);
      const at = items.findIndex((x) => keyOf(x) === key);
      if (ev.type === 'DELETED') {
        if (at >= 0) items.splice(at, 1);
      } else if (at >= 0) items[at] = prepare(ev.object);
      else items.push(prepare(ev.object));
    }
  } catch (err) {
    if (timedOut && !o.signal.aborted)
      throw new WatchListTimeoutError(`no end bookmark within ${o.timeoutMs} ms`, { cause: err });
    throw err;
  } finally {
    timer.cancel();
    unlink();
    if (!ok) abort.abort();
  }
}

import { type KubeObject, StatusError, type WatchEvent } from '@kubeloop/client';
import { isReplyTooLarge, retryAfterSecondsOf } from '@kubeloop/client/apiutil';
import { asStatusError, isExpired, isTooManyRequests, WatchDecodeError } from '@kubeloop/client/errors';
import { Backoff, type Clock, discardLogger, type Logger, realClock, sleep } from '@kubeloop/core';
import { childController, onAbort } from './internal/abort.js';
import { type ListResult, pagedList } from './list-pager.js';
import { type ListerWatcher, withJsonRetention } from './list-watch.js';
import { checkReflectorOptions, type ReflectorOptions, type ReflectorStore } from './reflector-options.js';
import { listPageLimit, relistResourceVersion } from './relist.js';
import {
  isConnectionError,
  isTooLargeResourceVersionError,
  isWatchIdleTimeout,
  VeryShortWatchError,
  WatchListTimeoutError,
  watchListFailureOf,
} from './watch-errors.js';
import { type StreamedList, streamInitialList } from './watch-list.js';
import { WatchListSupport } from './watch-list-support.js';

/** A watch that ended within this many ms without one event counts as a failure (client-go `VeryShortWatchError`). */
const VERY_SHORT_WATCH_MS = 1000;

/**
 * Keeps a store in step with the server (client-go `tools/cache/reflector.go` and `tools/pager`):
 *
 * - The first list asks for `resourceVersion=0` (any state, served from the API server's watch cache), paged
 *   by `pageSize`. If that first list came back paginated (the watch cache is off), later lists are paged too.
 * - A relist asks for the last seen resourceVersion **without `limit`** (unless the first list was paginated):
 *   kube-apiserver answers a list with a specific resourceVersion *and* a limit as an exact read of the state
 *   at that version, so a paged relist after a watch 410 would read the same old snapshot again (C38). Without
 *   a limit it is answered "not older than" that version.
 * - A list refused with 410 Expired or "too large resource version" is retried at once with
 *   `resourceVersion=""` (most recent); an expired continue token gives one full list without paging.
 * - An unpaged answer too large to decode in one JavaScript string (~512 MiB: the watch cache serves
 *   `resourceVersion=0` whole, ignoring `limit`) is listed again at once in pages at `resourceVersion=""`, and
 *   every later list is paged (Go has no such limit; this is client-go's paginated-result path).
 * - Then watch from the list's resourceVersion (`allowWatchBookmarks`, random `timeoutSeconds` in
 *   [min, 2×min)). A clean end re-watches from the last seen resourceVersion; bookmarks advance it; a 410
 *   relists from the last seen resourceVersion; a watch cut by the transport's idle watchdog re-watches at
 *   once from the last seen resourceVersion; 429, a connection failure or a decode error after good
 *   events re-watch after a backoff without a relist; anything else, or a watch closing within 1 s without
 *   an event, backs off and relists.
 * - List items are gathered with a loop, never a spread, so a list of any length is fine.
 */
export class Reflector<T extends KubeObject = KubeObject> {
  readonly #lw: ListerWatcher<T>;
  readonly #store: ReflectorStore<T>;
  /** The store's per-object list work, bound (see {@link ReflectorStore.prepare}). */
  readonly #prepare: ((obj: T) => T) | undefined;
  readonly #name: string;
  readonly #pageSize: number;
  readonly #minWatchTimeoutS: number;
  readonly #backoff: Backoff;
  readonly #log: Logger;
  readonly #onWatchError: ((err: unknown) => void) | undefined;
  readonly #onListResult: ((err: unknown | undefined) => void) | undefined;
  readonly #onWatchStart: (() => void) | undefined;
  readonly #random: () => number;
  readonly #clock: Clock;
  readonly #watchListTimeoutMs: number;
  readonly #useWatchList: boolean;
  readonly #watchListResetLimit: number;
  /** Streaming lists cut by a connection reset since the last one that was served or given up. */
  #watchListResets = 0;
  readonly #watchListSupport: WatchListSupport;
  #lastSyncRV = '';
  #rvUnavailable = false;
  #paginatedResult = false;

  /** @throws RangeError for a `pageSize` that is not a positive integer. */
  constructor(lw: ListerWatcher<T>, store: ReflectorStore<T>, options: ReflectorOptions = {}) {
    const { pageSize, watchListResetLimit } = checkReflectorOptions(options);
    this.#lw = withJsonRetention(lw, store);
    this.#store = store;
    this.#prepare = store.prepare ? (obj) => store.prepare!(obj) : undefined;
    this.#name = options.name ?? 'reflector';
    this.#pageSize = pageSize;
    this.#minWatchTimeoutS = options.minWatchTimeoutSeconds ?? 300;
    this.#clock = options.clock ?? realClock;
    this.#backoff = new Backoff({ clock: this.#clock, ...(options.backoff ?? {}) });
    this.#log = options.logger ?? discardLogger;
    this.#onWatchError = options.onWatchError;
    this.#onListResult = options.onListResult;
    this.#onWatchStart = options.onWatchStart;
    this.#random = options.random ?? Math.random;
    this.#useWatchList = options.useWatchList ?? false;
    this.#watchListTimeoutMs = options.watchListTimeoutMs ?? 60_000;
    this.#watchListResetLimit = watchListResetLimit;
    this.#watchListSupport = options.watchListSupport ?? new WatchListSupport({ clock: this.#clock });
  }

  /** The resourceVersion of the last list, watch event or bookmark seen. */
  get lastSyncResourceVersion(): string {
    return this.#lastSyncRV;
  }

  /**
   * Lists and watches until `signal` aborts; never rejects. Requests and waits use a child of `signal`, so
   * `signal` gets one listener however many reflectors share it.
   */
  async run(parent: AbortSignal): Promise<void> {
    const { controller, release } = childController(parent);
    try {
      await this.#run(controller.signal);
    } finally {
      release();
      controller.abort();
    }
  }

  async #run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.#listAndWatch(signal);
      } catch (err) {
        if (signal.aborted) break;
        this.#reportError(err);
      }
      if (signal.aborted) break;
      await this.#sleep(this.#backoff.nextDelayMs(), signal);
    }
  }

  async #sleep(ms: number, signal: AbortSignal): Promise<void> {
    try {
      await sleep(ms, signal, this.#clock);
    } catch {
      // aborted: the caller checks the signal
    }
  }

  #reportError(err: unknown): void {
    const se = asStatusError(err);
    this.#log.warn(
      {
        reflector: this.#name,
        err,
        code: se?.httpStatus ?? (err as { code?: unknown })?.code,
        reason: se?.reason,
      },
      'watch ended with error',
    );
    try {
      this.#onWatchError?.(err);
    } catch {
      // a faulty hook must not stop the reflector
    }
  }

  #listResult(err: unknown | undefined): void {
    try {
      this.#onListResult?.(err);
    } catch {
      // a faulty hook must not stop the reflector
    }
  }

  /**
   * Replaces the store's content. A store that refuses it (an index function that throws, say) fails the
   * list like a server error would: reported as the last list error, then backoff and relist.
   */
  #replace(items: T[], resourceVersion: string): void {
    try {
      this.#store.replace(items, resourceVersion);
    } catch (err) {
      this.#listResult(err);
      throw err;
    }
  }

  async #list(signal: AbortSignal): Promise<void> {
    const rv = relistResourceVersion(this.#lastSyncRV, this.#rvUnavailable);
    const limit = listPageLimit(rv, this.#paginatedResult, this.#pageSize);
    let result: ListResult<T>;
    try {
      try {
        result = await pagedList(this.#lw, rv, limit, signal, this.#prepare);
      } catch (err) {
        if (!signal.aborted && isReplyTooLarge(err) && !(rv === '' && limit > 0)) {
          // The unpaged answer (resourceVersion=0 or a relist, served whole by the watch cache, which ignores a
          // limit) does not fit in one JavaScript string (~512 MiB): list the most recent state in pages from
          // etcd, and page every later list too, as after a paginated first list.
          this.#log.warn(
            { reflector: this.#name, resourceVersion: rv, pageSize: this.#pageSize },
            'list reply too large to decode whole, listing in pages',
          );
          this.#paginatedResult = true;
          result = await pagedList(this.#lw, '', this.#pageSize, signal, this.#prepare);
        } else {
          if (!(isExpired(err) || isTooLargeResourceVersionError(err)) || signal.aborted) throw err;
          // The resourceVersion is compacted or not reached yet: retry at once with the most recent state.
          this.#rvUnavailable = true;
          this.#log.info(
            { reflector: this.#name, resourceVersion: rv, reason: asStatusError(err)?.reason },
            'list at resourceVersion refused, listing the most recent state',
          );
          // Same pager as the refused list (client-go reuses it): unpaged if that one was.
          result = await pagedList(this.#lw, '', limit, signal, this.#prepare);
        }
      }
    } catch (err) {
      if (!signal.aborted) this.#listResult(err);
      throw err;
    }
    // Only a paginated answer to resourceVersion=0 says the watch cache is off (client-go keeps paging then).
    if (rv === '0' && result.paginated) this.#paginatedResult = true;
    this.#rvUnavailable = false;
    this.#replace(result.items, result.resourceVersion);
    this.#lastSyncRV = result.resourceVersion;
    this.#listResult(undefined);
  }

  async #listAndWatch(signal: AbortSignal): Promise<void> {
    let pending: AsyncIterator<WatchEvent<T>> | undefined;
    let pendingAbort: AbortController | undefined;
    if (this.#useWatchList && (await this.#watchListSupport.turn(signal))) {
      const streamed = await this.#watchList(signal);
      if (streamed) ({ iterator: pending, abort: pendingAbort } = streamed);
    }
    if (!pending) await this.#list(signal);
    this.#log.debug({ reflector: this.#name, resourceVersion: this.#lastSyncRV }, 'listed');
    while (!signal.aborted) {
      const timeoutSeconds = Math.floor(this.#minWatchTimeoutS * (1 + this.#random()));
      const started = this.#clock.now();
      let events = 0;
      const watchAbort = pendingAbort ?? new AbortController();
      const unlink = link(signal, watchAbort);
      try {
        if (!pending) this.#onWatchStart?.();
        const it =
          pending ??
          this.#lw
            .watch({
              resourceVersion: this.#lastSyncRV,
              allowWatchBookmarks: true,
              timeoutSeconds,
              signal: watchAbort.signal,
            })
            [Symbol.asyncIterator]();
        pending = undefined;
        pendingAbort = undefined;
        for (;;) {
          const next = await it.next();
          if (next.done) break;
          events++;
          this.#apply(next.value);
        }
      } catch (err) {
        if (signal.aborted) return;
        // A stream that delivered events was healthy: the next failure starts the backoff from the beginning.
        if (events > 0) this.#backoff.reset();
        if (isExpired(err)) {
          // Relist from the last seen resourceVersion first (client-go: not marked unavailable).
          this.#log.info(
            { reflector: this.#name, resourceVersion: this.#lastSyncRV },
            'watch expired, relisting',
          );
          throw err;
        }
        if (isWatchIdleTimeout(err)) {
          // Silent past the idle bound (a quiet resource type on kube-apiserver gets no bookmarks): resume from
          // the last resourceVersion at once, no relist, no backoff — each attempt already waited the bound.
          this.#log.info(
            { reflector: this.#name, resourceVersion: this.#lastSyncRV, events },
            'watch idle past its bound, re-watching',
          );
          continue;
        }
        if (isTooManyRequests(err) || isConnectionError(err)) {
          // Re-watch from the same resourceVersion after a backoff (and no earlier than the server's
          // Retry-After, C40), without relisting.
          this.#reportError(err);
          const retryAfterS = retryAfterSecondsOf(asStatusError(err)) ?? 0;
          await this.#sleep(Math.max(this.#backoff.nextDelayMs(), retryAfterS * 1000), signal);
          continue;
        }
        if (err instanceof WatchDecodeError && events > 0) {
          // The stream broke after good events: resume from the last good resourceVersion.
          this.#reportError(err);
          await this.#sleep(this.#backoff.nextDelayMs(), signal);
          continue;
        }
        throw err;
      } finally {
        unlink();
        watchAbort.abort();
      }
      if (signal.aborted) return;
      if (events === 0 && this.#clock.now() - started < VERY_SHORT_WATCH_MS) {
        throw new VeryShortWatchError(`${this.#name}: the watch closed at once without events`);
      }
      if (events > 0) this.#backoff.reset();
    }
  }

  #apply(ev: WatchEvent<T>): void {
    if (ev.type === 'ERROR') throw new StatusError(ev.object);
    const obj = ev.object;
    const rv = obj.metadata?.resourceVersion;
    switch (ev.type) {
      case 'ADDED':
        this.#store.add(obj);
        break;
      case 'MODIFIED':
        this.#store.update(obj);
        break;
      case 'DELETED':
        this.#store.delete(obj);
        break;
      case 'BOOKMARK':
        if (rv) this.#store.bookmark?.(rv);
        break;
    }
    if (rv) this.#lastSyncRV = rv;
  }

  /**
   * The streaming initial sync (client-go `watchList`; the full rules are on `ReflectorOptions.useWatchList`).
   * Resolves with the still-open watch once the end bookmark arrived and the store was replaced, or with
   * `undefined` when the caller must list instead, in this same attempt. Rejects (backoff, then WatchList again)
   * on the retriable failures only: 410 / "too large resource version", 429, a connection refused, and a
   * connection reset below `watchListResetLimit` in a row. Only a refusal (see `watchListFailureOf`) is
   * remembered in the shared {@link WatchListSupport}, logged at warn once per record (one server), then at debug;
   * a failed request (a 404 of the resource, a 5xx …) lists in this attempt, logged at info, and is forgotten.
   */
  async #watchList(
    signal: AbortSignal,
  ): Promise<{ iterator: AsyncIterator<WatchEvent<T>>; abort: AbortController } | undefined> {
    const support = this.#watchListSupport;
    let streamed: StreamedList<T>;
    // A streaming list is a watch request too (the informer's watch-restart count would miss it otherwise).
    this.#onWatchStart?.();
    try {
      streamed = await streamInitialList(this.#lw, {
        // client-go: the last known resourceVersion, or '' (most recent) at first or after an expiry.
        resourceVersion: this.#rvUnavailable ? '' : this.#lastSyncRV,
        timeoutSeconds: Math.floor(this.#minWatchTimeoutS * (1 + this.#random())),
        timeoutMs: this.#watchListTimeoutMs,
        clock: this.#clock,
        signal,
        onAccepted: () => support.served(),
        ...(this.#prepare ? { prepare: this.#prepare } : {}),
      });
    } catch (err) {
      let failure = watchListFailureOf(err, signal.aborted);
      const cutEveryTime = failure === 'reset' && ++this.#watchListResets >= this.#watchListResetLimit;
      if (cutEveryTime) failure = 'refused';
      if (failure !== 'refused' && failure !== 'failed') {
        support.undecided();
        if (failure === 'stopped') throw err;
        if (failure === 'unavailable') this.#rvUnavailable = true;
        this.#listResult(err);
        throw err;
      }
      const resets = this.#watchListResets;
      this.#watchListResets = 0;
      const se = asStatusError(err);
      const fields = {
        reflector: this.#name,
        err,
        code: se?.httpStatus ?? (err as { code?: unknown })?.code,
        reason: se?.reason,
        timeoutMs: this.#watchListTimeoutMs,
        ...(cutEveryTime ? { resets } : {}),
      };
      if (failure === 'failed') {
        // Says nothing about the server's streaming lists: list now, stream again on the next attempt.
        support.undecided();
        this.#log.info(fields, 'streaming list failed; listing instead');
        return undefined;
      }
      const msg =
        err instanceof WatchListTimeoutError
          ? 'streaming list sent no end bookmark in time; falling back to list and watch'
          : cutEveryTime
            ? 'streaming list cut by a connection reset every time; falling back to list and watch'
            : 'streaming list not served; falling back to list and watch';
      if (support.refused(err)) this.#log.warn(fields, msg);
      else this.#log.debug(fields, msg);
      return undefined;
    }
    this.#watchListResets = 0;
    this.#rvUnavailable = false;
    try {
      this.#replace(streamed.items, streamed.resourceVersion);
    } catch (err) {
      streamed.abort.abort();
      throw err;
    }
    this.#lastSyncRV = streamed.resourceVersion;
    this.#listResult(undefined);
    return { iterator: streamed.iterator, abort: streamed.abort };
  }
}

/** Aborts `child` when `parent` aborts; returns the unlink. */
function link(parent: AbortSignal, child: AbortController): () => void {
  return onAbort(parent, () => child.abort(parent.reason));
}

import {
  isExpired,
  isTimeout,
  isTooManyRequests,
  type KubeObject,
  StatusError,
  WatchDecodeError,
} from '@kubeloop/client';
import { Backoff, type BackoffOptions, sleep } from './internal/backoff.js';
import type { ListerWatcher } from './list-watch.js';
import { type CacheLogger, discardLogger } from './logger.js';

/** ReflectorStore knows how to take what a reflector sees: a full listing, then single changes. */
export interface ReflectorStore<T extends KubeObject = KubeObject> {
  /** The complete state at `resourceVersion` (after a list or relist). */
  replace(items: T[], resourceVersion: string): void;
  add(obj: T): void;
  update(obj: T): void;
  /** `obj` is the object's last state as the server sent it in the DELETED event. */
  delete(obj: T): void;
  /** Every event up to `resourceVersion` has been delivered. */
  bookmark?(resourceVersion: string): void;
}

/** Options of {@link Reflector}. */
export interface ReflectorOptions {
  /** Name used in logs. */
  readonly name?: string;
  /** List page size. @defaultValue 500 */
  readonly pageSize?: number;
  /** Lower bound of the random server-side watch timeout, in seconds; the timeout is in [min, 2×min). @defaultValue 300 */
  readonly minWatchTimeoutSeconds?: number;
  /** Backoff between failed list-and-watch cycles (ms). @defaultValue 800 ms ×2 up to 30 s, jitter 1.0, reset after 2 min */
  readonly backoff?: BackoffOptions;
  readonly logger?: CacheLogger;
  /** Called with every error that ended a list or watch (after logging). */
  readonly onWatchError?: (err: unknown) => void;
  readonly random?: () => number;
}

/** A watch that ended within this many ms without one event counts as a failure (client-go `VeryShortWatchError`). */
const VERY_SHORT_WATCH_MS = 1000;

/**
 * Keeps a store in step with the server (client-go `tools/cache/reflector.go`): list — paginated — then
 * watch from the list's resourceVersion; a watch that ends cleanly is restarted from the last seen
 * resourceVersion without a relist; bookmarks advance the resourceVersion; a 410 Expired/Gone relists;
 * 429 re-watches after a backoff; a decode error or any other failure backs off (exponential with jitter)
 * and relists. The initial list asks for `resourceVersion=0` (any, cache-served), later lists for the
 * last seen one, and a list after an expiry for `''` (most recent).
 */
export class Reflector<T extends KubeObject = KubeObject> {
  readonly #lw: ListerWatcher<T>;
  readonly #store: ReflectorStore<T>;
  readonly #name: string;
  readonly #pageSize: number;
  readonly #minWatchTimeoutS: number;
  readonly #backoff: Backoff;
  readonly #log: CacheLogger;
  readonly #onWatchError: ((err: unknown) => void) | undefined;
  readonly #random: () => number;
  #lastSyncRV = '';
  #rvUnavailable = false;

  constructor(lw: ListerWatcher<T>, store: ReflectorStore<T>, options: ReflectorOptions = {}) {
    this.#lw = lw;
    this.#store = store;
    this.#name = options.name ?? 'reflector';
    this.#pageSize = options.pageSize ?? 500;
    this.#minWatchTimeoutS = options.minWatchTimeoutSeconds ?? 300;
    this.#backoff = new Backoff(options.backoff);
    this.#log = options.logger ?? discardLogger;
    this.#onWatchError = options.onWatchError;
    this.#random = options.random ?? Math.random;
  }

  /** The resourceVersion of the last list, watch event or bookmark seen. */
  get lastSyncResourceVersion(): string {
    return this.#lastSyncRV;
  }

  /** Lists and watches until `signal` aborts; never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.#listAndWatch(signal);
      } catch (err) {
        if (signal.aborted) break;
        this.#reportError(err);
      }
      if (signal.aborted) break;
      await sleep(this.#backoff.nextDelayMs(), signal);
    }
  }

  #reportError(err: unknown): void {
    const e = err as { message?: string; code?: unknown; reason?: unknown };
    this.#log.warn(
      { reflector: this.#name, err: e?.message ?? String(err), code: e?.code, reason: e?.reason },
      'watch ended with error',
    );
    try {
      this.#onWatchError?.(err);
    } catch {
      // a faulty hook must not stop the reflector
    }
  }

  #relistResourceVersion(): string {
    if (this.#rvUnavailable) return '';
    return this.#lastSyncRV === '' ? '0' : this.#lastSyncRV;
  }

  async #list(signal: AbortSignal): Promise<void> {
    const rv = this.#relistResourceVersion();
    const items: T[] = [];
    let listRV = '';
    let cont: string | undefined;
    try {
      for (;;) {
        let page: Awaited<ReturnType<ListerWatcher<T>['list']>>;
        try {
          page = await this.#lw.list({
            signal,
            limit: this.#pageSize,
            ...(cont ? { continue: cont } : { resourceVersion: rv }),
          });
        } catch (err) {
          if (cont && isExpired(err)) {
            // The continue token expired mid-way: one full list without paging (client-go FullListIfExpired).
            items.length = 0;
            page = await this.#lw.list({ signal, resourceVersion: rv });
            cont = undefined;
            items.push(...page.items);
            listRV = page.metadata.resourceVersion ?? '';
            break;
          }
          throw err;
        }
        items.push(...page.items);
        listRV = page.metadata.resourceVersion ?? listRV;
        cont = page.metadata.continue || undefined;
        if (!cont) break;
      }
    } catch (err) {
      // An expired or too-large RV: the next list reads the most recent state.
      if (isExpired(err) || isTimeout(err)) this.#rvUnavailable = true;
      throw err;
    }
    this.#rvUnavailable = false;
    this.#store.replace(items, listRV);
    this.#lastSyncRV = listRV;
  }

  async #listAndWatch(signal: AbortSignal): Promise<void> {
    await this.#list(signal);
    this.#log.debug({ reflector: this.#name, resourceVersion: this.#lastSyncRV }, 'listed');
    while (!signal.aborted) {
      const timeoutSeconds = Math.floor(this.#minWatchTimeoutS * (1 + this.#random()));
      const started = Date.now();
      let events = 0;
      try {
        const stream = this.#lw.watch({
          resourceVersion: this.#lastSyncRV,
          allowWatchBookmarks: true,
          timeoutSeconds,
          signal,
        });
        for await (const ev of stream) {
          events++;
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
      } catch (err) {
        if (signal.aborted) return;
        // A stream that delivered events was healthy: the next failure starts the backoff from the beginning.
        if (events > 0) this.#backoff.reset();
        if (isExpired(err)) {
          this.#log.info(
            { reflector: this.#name, resourceVersion: this.#lastSyncRV },
            'watch expired, relisting',
          );
          throw err;
        }
        if (isTooManyRequests(err) || isConnectionError(err)) {
          // Re-watch from the same resourceVersion after a backoff, without relisting.
          this.#reportError(err);
          await sleep(this.#backoff.nextDelayMs(), signal);
          continue;
        }
        if (err instanceof WatchDecodeError && events > 0) {
          // The stream broke after good events: resume from the last good resourceVersion.
          this.#reportError(err);
          await sleep(this.#backoff.nextDelayMs(), signal);
          continue;
        }
        throw err;
      }
      if (signal.aborted) return;
      if (events === 0 && Date.now() - started < VERY_SHORT_WATCH_MS) {
        throw new VeryShortWatchError(`${this.#name}: the watch closed at once without events`);
      }
      if (events > 0) this.#backoff.reset();
    }
  }
}

/** A watch closed within a second without delivering an event: treated as a failure (backoff). Code `'ERR_VERY_SHORT_WATCH'`. */
export class VeryShortWatchError extends Error {
  readonly code = 'ERR_VERY_SHORT_WATCH' as const;
  override readonly name = 'VeryShortWatchError';
}

function isConnectionError(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return (
    code === 'ECONNREFUSED' ||
    code === 'ECONNRESET' ||
    code === 'UND_ERR_SOCKET' ||
    code === 'UND_ERR_CLOSED' ||
    code === 'EPIPE' ||
    code === 'ConnectionFailed'
  );
}

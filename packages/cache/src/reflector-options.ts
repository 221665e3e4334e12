import type { KubeObject } from '@kubeloop/client';
import type { BackoffOptions, Clock, Logger } from '@kubeloop/core';
import type { WatchListSupport } from './watch-list-support.js';

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
  /**
   * Optional per-object work of a list, done as the list is read: the reflector calls it once for every object
   * of a list page (or of a streaming list's initial events) when that page (event) arrives, and hands
   * `replace` what it returned in the object's place — so a transform or a deep freeze runs while the next
   * page is on its way instead of after the last one. It must not change what the store holds or tell anyone:
   * a list that fails half-way is dropped, and `replace` stays the one atomic change.
   */
  prepare?(obj: T): T;
  /**
   * Decodes a listed item from its JSON text, for a store that keeps text instead of objects: passed to the
   * ListerWatcher's `list` as `decodeItem` (see `ListOptions.decodeItem` of the client); what it returns
   * reaches `prepare` and `replace` in the item's place. A ListerWatcher may ignore it and hand parsed objects.
   */
  decodeListItem?(json: string): T;
  /** Ask the watch for each object's JSON text (`keepObjectJson`), for a store that keeps text. */
  readonly keepObjectJson?: boolean;
}

/** Options of {@link Reflector}. */
export interface ReflectorOptions {
  /** Name used in logs. */
  readonly name?: string;
  /** List page size; a positive integer. @defaultValue 500 */
  readonly pageSize?: number;
  /** Lower bound of the random server-side watch timeout, in seconds; the timeout is in [min, 2×min). @defaultValue 300 */
  readonly minWatchTimeoutSeconds?: number;
  /** Backoff between failed list-and-watch cycles (ms; its clock defaults to `clock`). @defaultValue 800 ms ×2 up to 30 s, jitter 1.0, reset after 2 min */
  readonly backoff?: BackoffOptions;
  readonly logger?: Logger;
  /** Called with every error that ended a list or watch (after logging); client-go `WatchErrorHandler`. */
  readonly onWatchError?: (err: unknown) => void;
  readonly random?: () => number;
  /** Time source for backoff waits and the very-short-watch rule. @defaultValue the real clock */
  readonly clock?: Clock;
  /**
   * Initial sync as a streaming list (client-go WatchList, KEP-3157): one watch with `sendInitialEvents=true`,
   * `resourceVersionMatch=NotOlderThan`, bookmarks allowed, from the last known resourceVersion (`''`, the most
   * recent state, at first and after an expiry); the ADDED events until the bookmark annotated
   * `k8s.io/initial-events-end` are the listing, the store is replaced when it arrives, and the same watch goes on.
   *
   * What client-go's reflector does (tools/cache/reflector.go, `ListAndWatchWithContext` and `watchList`; the
   * `WatchListClient` feature gate, beta since 1.30, is on by default from 1.35), and where this one differs:
   * - Retriable failures retry the streaming list: a connection refused and 429 after a backoff; 410 Expired and
   *   "too large resource version" at once from the most recent state. Same here (the backoff is the reflector's,
   *   between attempts).
   * - Every other failure of the streaming list — any other HTTP status (kube-apiserver 1.32 on etcd 3.4 answers
   *   500; 400, 403, 404, 405, 422, 503 …), an ERROR event, a stream that closes within 1 s without an event —
   *   makes that attempt list + watch instead ("making progress is better than deadlocking"). Same here, and
   *   also for a stream that ends or breaks before its end bookmark after events or later than 1 s (client-go
   *   retries those without a bound) and for no end bookmark within `watchListTimeoutMs` (client-go only warns).
   *   A list that then fails the same way (a 404 of a CRD deleted or not created yet) backs off and the next
   *   attempt tries WatchList again.
   * - A connection reset under the stream: client-go's watch decoder takes it for an end of stream, and the
   *   streaming list is retried without a bound, so a server (or proxy) that resets every streaming list keeps
   *   an informer from ever syncing. Here it is retried after a backoff up to `watchListResetLimit` times in a row,
   *   then taken as a refusal.
   * - client-go tries WatchList again on its next relist after a fallback. Here an answer that says the server
   *   does not serve streaming lists — a 400/422 naming `sendInitialEvents` or `resourceVersionMatch` (the
   *   WatchList gate off, a server older than 1.27), a 500 saying the storage cannot serve a watch stream
   *   (kube-apiserver 1.32 on etcd 3.4), no end bookmark within `watchListTimeoutMs`, resets past
   *   `watchListResetLimit` — is remembered in the `watchListSupport` shared by the reflectors of one server (an
   *   `InformerCache`'s), which list + watch until its re-probe interval has passed (10 minutes by default;
   *   `Infinity`: for the rest of their lives), so a refusing server costs one refused request per interval and
   *   one warning, not one per informer per relist. Any other failure says nothing about the server (a plain
   *   list could get it too: 404, 401, 403, other 5xx, a stream cut short …): it is not remembered, and the next
   *   attempt, the next relist and the other informers stream as before.
   *
   * @defaultValue false here and on a `SharedIndexInformer` (a test's fake ListerWatcher need not stream, as
   * client-go turns it off for clients that do not support it); an `InformerCache` turns it on.
   */
  readonly useWatchList?: boolean;
  /**
   * How many streaming lists in a row may be cut by a connection reset before their end bookmark before the
   * reflector takes it as a refusal (lists + watches, and the refusal is remembered); each one before is retried
   * after a backoff. Counted since the last streaming list that was served or given up; a connection refused
   * (no server listening) is not counted. A positive integer. @defaultValue 3
   */
  readonly watchListResetLimit?: number;
  /**
   * How long a streaming initial sync may wait for its end bookmark, in ms, before the reflector falls back to
   * list + watch (a refusal, see `watchListSupport`). @defaultValue 60000
   */
  readonly watchListTimeoutMs?: number;
  /**
   * The record of what the server said about streaming lists, shared by the reflectors that talk to one server
   * (an `InformerCache` shares one among its informers). A refusal of streaming lists (see `useWatchList`: an
   * answer about the server, not about this request or resource) makes the reflector list + watch in the same
   * attempt and is remembered there, so WatchList is tried again only after its re-probe interval (10 minutes by
   * default); a failed request (404, 403, 5xx …) is not. @defaultValue a record of this reflector's own
   */
  readonly watchListSupport?: WatchListSupport;
  /** Called after every successful list (or streaming initial sync) and every list failure. */
  readonly onListResult?: (err: unknown | undefined) => void;
  /** Called each time a watch request is made (the first one, and every re-watch after it). */
  readonly onWatchStart?: () => void;
}

/** Default of {@link ReflectorOptions.watchListResetLimit}. */
const DEFAULT_WATCH_LIST_RESET_LIMIT = 3;

/**
 * Checks reflector options before anything runs (a cache validates them when it is made, not when an
 * informer starts). Returns the page size and the reset limit, defaults applied.
 * @throws RangeError for a `pageSize` or `watchListResetLimit` that is not a positive integer.
 */
export function checkReflectorOptions(
  options: Pick<ReflectorOptions, 'pageSize' | 'watchListResetLimit'> = {},
): { pageSize: number; watchListResetLimit: number } {
  const pageSize = options.pageSize ?? 500;
  if (!Number.isInteger(pageSize) || pageSize <= 0)
    throw new RangeError(`Reflector pageSize must be a positive integer, got ${String(options.pageSize)}`);
  const watchListResetLimit = options.watchListResetLimit ?? DEFAULT_WATCH_LIST_RESET_LIMIT;
  if (!Number.isInteger(watchListResetLimit) || watchListResetLimit <= 0)
    throw new RangeError(
      `Reflector watchListResetLimit must be a positive integer, got ${String(options.watchListResetLimit)}`,
    );
  return { pageSize, watchListResetLimit };
}

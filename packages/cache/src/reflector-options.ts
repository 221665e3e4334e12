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
   * `resourceVersionMatch=NotOlderThan`; the store is replaced when the bookmark annotated
   * `k8s.io/initial-events-end` arrives, and the same watch goes on. @defaultValue false
   */
  readonly useWatchList?: boolean;
  /**
   * How long a streaming initial sync may wait for its end bookmark, in ms, before the reflector falls back to
   * list + watch (a refusal, see `watchListSupport`). @defaultValue 60000
   */
  readonly watchListTimeoutMs?: number;
  /**
   * The record of what the server said about streaming lists, shared by the reflectors that talk to one server
   * (an `InformerCache` shares one among its informers). Any refusal of a streaming list — an HTTP error other
   * than 410/429, an ERROR event, a stream that ends before its end bookmark, or no end bookmark within
   * `watchListTimeoutMs` — makes the reflector list + watch in the same attempt and is remembered there, so
   * WatchList is tried again only after its re-probe interval (10 minutes by default). @defaultValue a record of
   * this reflector's own
   */
  readonly watchListSupport?: WatchListSupport;
  /** Called after every successful list (or streaming initial sync) and every list failure. */
  readonly onListResult?: (err: unknown | undefined) => void;
  /** Called each time a watch request is made (the first one, and every re-watch after it). */
  readonly onWatchStart?: () => void;
}

/**
 * Checks reflector options before anything runs (a cache validates them when it is made, not when an
 * informer starts). Returns the page size. @throws RangeError for a `pageSize` that is not a positive integer.
 */
export function checkReflectorOptions(options: Pick<ReflectorOptions, 'pageSize'> = {}): number {
  const pageSize = options.pageSize ?? 500;
  if (!Number.isInteger(pageSize) || pageSize <= 0)
    throw new RangeError(`Reflector pageSize must be a positive integer, got ${String(options.pageSize)}`);
  return pageSize;
}

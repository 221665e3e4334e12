import type { DeepReadonly, KubeObject, Writer } from '@kubeloop/client';
import type { Clock } from '@kubeloop/core';
import type { Logger } from '../logger.js';
import type { EventType, ObjectReference } from './event.js';

/**
 * EventRecorder knows how to record an Event about an object (client-go `tools/events.EventRecorder`,
 * controller-runtime `mgr.GetEventRecorder(name)`). Recording never blocks and never throws: the Event is
 * written in the background, and when the recorder's queue is full it is dropped and counted.
 */
export interface EventRecorder {
  /**
   * @param regarding - the object the Event is about; needs `apiVersion`, `kind` and `metadata.name`
   *   (objects from the cache carry them).
   * @param type - `Normal` or `Warning` (anything else is logged and dropped, as client-go does).
   * @param reason - short UpperCamelCase machine-readable reason, e.g. `FailedCreate`.
   * @param action - what was done or failed, e.g. `Create`.
   * @param note - human-readable text, cut at 1024 UTF-8 bytes on a character boundary (the API's limit
   *   counts bytes).
   * @param related - a second object involved, if any.
   */
  event(
    regarding: DeepReadonly<KubeObject> | ObjectReference,
    type: EventType,
    reason: string,
    action: string,
    note: string,
    related?: DeepReadonly<KubeObject> | ObjectReference,
  ): void;
}

/** Options of {@link EventBroadcaster}; all durations in ms. */
export interface EventBroadcasterOptions {
  /** Writes Events (the manager's live client). */
  readonly client: Pick<Writer, 'create' | 'patch'>;
  readonly logger?: Logger;
  /**
   * How many distinct Events (a repeat of one already waiting adds nothing) may wait to be written; more
   * are dropped and counted (client-go's queue of 1000). @defaultValue 1000
   */
  readonly queueSize?: number;
  /** Isomorphic Events remembered for series (client-go's LRU of 4096). @defaultValue 4096 */
  readonly cacheSize?: number;
  /**
   * A series not observed for this long is finished: its last count is written (if unwritten) and a later
   * repeat starts a new Event. Checked every `seriesFinishMs` (client-go `finishTime`, 6 minutes).
   * @defaultValue 360000
   */
  readonly seriesFinishMs?: number;
  /**
   * Period of the refresh that writes the count of every series that grew since its last write (client-go
   * `refreshTime`, 30 minutes). @defaultValue 1800000
   */
  readonly seriesRefreshMs?: number;
  /** @deprecated use `seriesRefreshMs` (repeats are no longer written once per interval, see {@link EventBroadcaster}). */
  readonly seriesUpdateIntervalMs?: number;
  /**
   * Spam filter (client-go `EventSourceObjectSpamFilter`): new Event objects about one object from one
   * reporting controller may be created `spamBurst` at once, then one per `spamRefillMs`; past it a new Event
   * is dropped and counted (`filtered`). Repeats of an existing Event are never filtered: they only count.
   * @defaultValue 25
   */
  readonly spamBurst?: number;
  /** @defaultValue 300000 (one token per 5 minutes, client-go's qps of 1/300) */
  readonly spamRefillMs?: number;
  /** Attempts per write on a retryable error (client-go: 12, 10 s apart). @defaultValue 12 */
  readonly maxAttempts?: number;
  /** @defaultValue 10000 */
  readonly retryIntervalMs?: number;
  /** `reportingInstance` suffix. @defaultValue `os.hostname()` */
  readonly hostname?: string;
  /**
   * Time source of the refresh, the finish check, retries, series age and the spam filter (tests inject a
   * `FakeClock`); Event timestamps are wall-clock time. @defaultValue the real clock
   */
  readonly clock?: Clock;
}

/** Counters of an {@link EventBroadcaster}. */
export interface EventBroadcasterStats {
  /** Events (occurrences) recorded. */
  readonly recorded: number;
  /** Occurrences dropped because the queue was full or the broadcaster stopped. */
  readonly dropped: number;
  /** Writes (create or patch) that failed for good. */
  readonly failed: number;
  /** New Events dropped by the per-object spam filter. */
  readonly filtered: number;
  /** Writes sent (create or patch, retries included). */
  readonly writes: number;
}

import { hostname } from 'node:os';
import { isAlreadyExists, isNotFound, type KubeObject, type Writer } from '@kubeloop/client';
import { onAbort } from '@kubeloop/core';
import { discardLogger, type Logger } from '../logger.js';
import {
  cutToUtf8Bytes,
  type EventType,
  type EventV1,
  EventV1Kind,
  MAX_NOTE_LENGTH,
  microTime,
  type ObjectReference,
  refKey,
  refOf,
  retryableError,
} from './event.js';

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
    regarding: KubeObject | ObjectReference,
    type: EventType,
    reason: string,
    action: string,
    note: string,
    related?: KubeObject | ObjectReference,
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
  /** A repeat this long after the last one starts a new Event (client-go finishes a series after 6 min). @defaultValue 360000 */
  readonly seriesFinishMs?: number;
  /** At most one write per Event per this period: repeats in between are folded into the next PATCH. @defaultValue 1000 */
  readonly seriesUpdateIntervalMs?: number;
  /** Attempts per write on a retryable error (client-go: 12, 10 s apart). @defaultValue 12 */
  readonly maxAttempts?: number;
  /** @defaultValue 10000 */
  readonly retryIntervalMs?: number;
  /** `reportingInstance` suffix. @defaultValue `os.hostname()` */
  readonly hostname?: string;
}

interface SeriesEntry {
  readonly key: string;
  readonly event: EventV1;
  /** Occurrences seen. */
  count: number;
  /** Occurrences the server knows of (0: not created). */
  written: number;
  lastObserved: number;
  lastWrite: number;
  attempts: number;
  queued: boolean;
  timer: NodeJS.Timeout | undefined;
}

/** Counters of an {@link EventBroadcaster}. */
export interface EventBroadcasterStats {
  /** Events (occurrences) recorded. */
  readonly recorded: number;
  /** Occurrences dropped because the queue was full or the broadcaster stopped. */
  readonly dropped: number;
  /** Writes (create or patch) that failed for good. */
  readonly failed: number;
}

let nameSeq = 0;

/**
 * Writes the Events of its recorders to events.k8s.io/v1 in the background (client-go
 * `tools/events.EventBroadcaster`):
 * - an Event is **isomorphic** to an earlier one when regarding, related, action, reason, reporting
 *   controller and instance match (the note and type are not compared, as in client-go); a repeat within
 *   `seriesFinishMs` of the last one is folded into the first Event's `series` (`count`,
 *   `lastObservedTime`) and written with a merge PATCH — never a second object;
 * - unlike client-go, which writes `count: 2` and then only refreshes every 30 minutes, repeats are
 *   written at most once per `seriesUpdateIntervalMs` per Event, so the server's count trails the true
 *   count by at most that interval (and {@link EventBroadcaster.shutdown} flushes the rest);
 * - Events waiting to be written are bounded by `queueSize` distinct Events; past it occurrences are
 *   dropped and counted in {@link EventBroadcaster.stats}; recording never blocks or throws;
 * - a PATCH answered 404 (the Event expired at the server) re-creates it; 5xx, 429 and connection errors
 *   are retried `maxAttempts` times `retryIntervalMs` apart; other errors are logged and dropped.
 *
 * RBAC: `create` and `patch` on `events` in group `events.k8s.io`, in the namespaces of the objects
 * the Events are about.
 */
export class EventBroadcaster {
  readonly #client: Pick<Writer, 'create' | 'patch'>;
  readonly #log: Logger;
  readonly #queueSize: number;
  readonly #cacheSize: number;
  readonly #finishMs: number;
  readonly #intervalMs: number;
  readonly #maxAttempts: number;
  readonly #retryMs: number;
  readonly #host: string;
  readonly #cache = new Map<string, SeriesEntry>();
  readonly #queue: SeriesEntry[] = [];
  #waiting = 0;
  #writing: Promise<void> | undefined;
  #stopping = false;
  #stopped = false;
  #recorded = 0;
  #dropped = 0;
  #failed = 0;
  #idle: Array<() => void> = [];
  readonly #inflight = new AbortController();

  constructor(options: EventBroadcasterOptions) {
    this.#client = options.client;
    this.#log = (options.logger ?? discardLogger).child({ component: 'events' });
    this.#queueSize = options.queueSize ?? 1000;
    this.#cacheSize = options.cacheSize ?? 4096;
    this.#finishMs = options.seriesFinishMs ?? 360_000;
    this.#intervalMs = options.seriesUpdateIntervalMs ?? 1000;
    this.#maxAttempts = options.maxAttempts ?? 12;
    this.#retryMs = options.retryIntervalMs ?? 10_000;
    this.#host = options.hostname ?? hostname();
  }

  /** A recorder reporting as `reportingController` (instance `<reportingController>-<hostname>`). */
  newRecorder(reportingController: string): EventRecorder {
    const instance = `${reportingController}-${this.#host}`;
    return {
      event: (regarding, type, reason, action, note, related) =>
        this.#record(reportingController, instance, regarding, type, reason, action, note, related),
    };
  }

  stats(): EventBroadcasterStats {
    return { recorded: this.#recorded, dropped: this.#dropped, failed: this.#failed };
  }

  #record(
    controller: string,
    instance: string,
    regardingIn: KubeObject | ObjectReference,
    type: EventType,
    reason: string,
    action: string,
    note: string,
    relatedIn: KubeObject | ObjectReference | undefined,
  ): void {
    try {
      if (type !== 'Normal' && type !== 'Warning') {
        this.#log.error({ type, reason }, 'unsupported event type, dropped');
        return;
      }
      const regarding = refOf(regardingIn);
      if (!regarding.name || !regarding.kind) {
        this.#log.error({ reason }, 'event regarding an object without kind or name, dropped');
        return;
      }
      if (this.#stopping) {
        this.#dropped += 1;
        return;
      }
      this.#recorded += 1;
      const related = relatedIn ? refOf(relatedIn) : undefined;
      // client-go tools/events getKey: type, action, reason, reporting controller and instance, regarding, related
      const key = [refKey(regarding), refKey(related), type, action, reason, controller, instance].join(
        '\u0001',
      );
      const now = Date.now();
      const known = this.#cache.get(key);
      if (known && now - known.lastObserved < this.#finishMs) {
        known.count += 1;
        known.lastObserved = now;
        this.#cache.delete(key); // keep the map in least-recently-used order
        this.#cache.set(key, known);
        this.#schedule(known);
        return;
      }
      if (known) this.#forget(known);
      nameSeq = (nameSeq + 1) % 1_000_000;
      const entry: SeriesEntry = {
        key,
        event: {
          apiVersion: EventV1Kind.apiVersion,
          kind: EventV1Kind.kind,
          metadata: {
            name: `${regarding.name}.${(BigInt(now) * 1_000_000n + BigInt(nameSeq)).toString(16)}`,
            namespace: regarding.namespace || 'default',
          },
          eventTime: microTime(now),
          reportingController: controller,
          reportingInstance: instance,
          action,
          reason,
          regarding,
          ...(related ? { related } : {}),
          note: cutToUtf8Bytes(note, MAX_NOTE_LENGTH),
          type,
        },
        count: 1,
        written: 0,
        lastObserved: now,
        lastWrite: 0,
        attempts: 0,
        queued: false,
        timer: undefined,
      };
      this.#cache.set(key, entry);
      while (this.#cache.size > this.#cacheSize) {
        const oldest = this.#cache.values().next().value as SeriesEntry;
        this.#forget(oldest);
      }
      this.#schedule(entry);
    } catch (err) {
      this.#log.error({ err }, 'recording an event failed');
    }
  }

  #forget(e: SeriesEntry): void {
    this.#cache.delete(e.key);
    if (e.timer) clearTimeout(e.timer);
    e.timer = undefined;
  }

  /** Queues a write for `e` now, or once its update interval has passed. */
  #schedule(e: SeriesEntry, delayMs?: number): void {
    if (e.queued || e.timer) return;
    const wait = delayMs ?? (e.written === 0 ? 0 : e.lastWrite + this.#intervalMs - Date.now());
    if (wait > 0 && !this.#stopping) {
      this.#waiting += 1;
      e.timer = setTimeout(() => {
        e.timer = undefined;
        this.#waiting -= 1;
        this.#enqueue(e);
      }, wait);
      e.timer.unref();
      return;
    }
    this.#enqueue(e);
  }

  #enqueue(e: SeriesEntry): void {
    if (this.#stopped) return;
    if (this.#queue.length >= this.#queueSize) {
      const lost = e.count - e.written;
      this.#dropped += lost;
      e.written = e.count; // the lost occurrences are accounted for as dropped
      if (this.#dropped === lost || this.#dropped % 1000 < lost) {
        this.#log.warn(
          { dropped: this.#dropped, queueSize: this.#queueSize },
          'event queue full, dropping events',
        );
      }
      this.#notifyIdle();
      return;
    }
    e.queued = true;
    this.#queue.push(e);
    this.#writing ??= this.#drain().finally(() => {
      this.#writing = undefined;
      this.#notifyIdle();
    });
  }

  async #drain(): Promise<void> {
    for (let e = this.#queue.shift(); e; e = this.#queue.shift()) {
      e.queued = false;
      if (e.count === e.written) continue;
      if (e.written > 0 && !this.#stopping && Date.now() < e.lastWrite + this.#intervalMs) {
        this.#schedule(e); // queued while its create was in flight: wait for the interval
        continue;
      }
      await this.#write(e);
    }
  }

  async #write(e: SeriesEntry): Promise<void> {
    const count = e.count;
    const ev = e.event;
    const key = { namespace: ev.metadata?.namespace ?? 'default', name: ev.metadata?.name ?? '' };
    const series = count > 1 ? { count, lastObservedTime: microTime(e.lastObserved) } : undefined;
    const signal = this.#inflight.signal;
    try {
      if (e.written === 0) {
        await this.#client.create(EventV1Kind, series ? { ...ev, series } : ev, { signal });
      } else {
        try {
          await this.#client.patch(EventV1Kind, key, { type: 'merge', data: { series } }, { signal });
        } catch (err) {
          if (!isNotFound(err)) throw err;
          await this.#client.create(EventV1Kind, { ...ev, series }, { signal });
        }
      }
      e.written = count;
      e.lastWrite = Date.now();
      e.attempts = 0;
      if (e.count > e.written) this.#schedule(e);
    } catch (err) {
      if (signal.aborted) return;
      e.attempts += 1;
      const retryable = !isAlreadyExists(err) && retryableError(err);
      if (retryable && e.attempts < this.#maxAttempts && !this.#stopping) {
        this.#log.debug({ err, attempt: e.attempts }, 'writing an event failed, will retry');
        this.#schedule(e, this.#retryMs);
        return;
      }
      this.#failed += 1;
      e.written = e.count;
      this.#log.error({ err, reason: ev.reason, name: key.name }, 'writing an event failed, dropped');
    }
  }

  #busy(): boolean {
    return this.#writing !== undefined || this.#queue.length > 0;
  }

  #notifyIdle(): void {
    if (this.#busy()) return;
    for (const r of this.#idle.splice(0)) r();
  }

  /**
   * Stops accepting Events, writes what is pending — repeats waiting for their update interval are written
   * at once — and resolves when done or when `signal` aborts (then in-flight writes are aborted). Events
   * recorded afterwards are dropped and counted.
   */
  async shutdown(signal?: AbortSignal): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    for (const e of this.#cache.values()) {
      if (e.timer) {
        clearTimeout(e.timer);
        e.timer = undefined;
        this.#waiting -= 1;
        if (e.count > e.written) this.#enqueue(e);
      }
    }
    if (this.#busy()) {
      await new Promise<void>((resolve) => {
        const off = signal ? onAbort(signal, resolve) : () => undefined;
        this.#idle.push(() => {
          off();
          resolve();
        });
      });
    }
    this.#stopped = true;
    this.#inflight.abort();
    for (const e of this.#queue.splice(0)) this.#dropped += e.count - e.written;
  }
}

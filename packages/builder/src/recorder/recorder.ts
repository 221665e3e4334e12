import { hostname } from 'node:os';
import {
  type DeepReadonly,
  isAlreadyExists,
  isNotFound,
  type KubeObject,
  type Writer,
} from '@kubeloop/client';
import { type Clock, type ClockTimer, onAbort, realClock } from '@kubeloop/core';
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
import { SpamFilter } from './spam-filter.js';
import type { EventBroadcasterOptions, EventBroadcasterStats, EventRecorder } from './types.js';

export type { EventBroadcasterOptions, EventBroadcasterStats, EventRecorder } from './types.js';

interface SeriesEntry {
  readonly key: string;
  readonly event: EventV1;
  /** Occurrences seen. */
  count: number;
  /** Occurrences the server knows of (0: not created). */
  written: number;
  /** Last occurrence, on the broadcaster's clock (series age) and as wall-clock time (the Event's field). */
  lastObserved: number;
  lastObservedWall: number;
  attempts: number;
  queued: boolean;
  /** A write of it is in flight (its end queues what came meanwhile). */
  writing: boolean;
  /** A retry waiting. */
  timer: ClockTimer | undefined;
  /** Left the cache (finished or evicted): a later repeat starts a new Event. */
  finished: boolean;
}

let nameSeq = 0;

/**
 * Writes the Events of its recorders to events.k8s.io/v1 in the background, with client-go's
 * `tools/events` cadence (event_broadcaster.go `recordToSink`, `refreshExistingEventSeries`, `finishSeries`):
 * - an Event is **isomorphic** to an earlier one when regarding, related, action, reason, reporting
 *   controller and instance match (the note and type are not compared, as in client-go);
 * - the first occurrence is created at once; the second starts the series (`series.count: 2`, one PATCH at
 *   once); later repeats only count. Every `seriesRefreshMs` (30 min) the series that grew since their last
 *   write are written; every `seriesFinishMs` (6 min) series not observed for that long get their last count
 *   written and are finished (a later repeat is a new Event). 100 identical warnings in a minute cost 2
 *   writes, then one refresh or finish write — not one per second;
 * - a per-object spam filter (client-go `EventSourceObjectSpamFilter`: a token bucket per regarding object
 *   and reporting controller, `spamBurst` 25, one token per `spamRefillMs` 5 min) limits the new Event
 *   objects one object can cause; repeats are never filtered;
 * - Events waiting to be written are bounded by `queueSize` distinct Events; past it occurrences are
 *   dropped and counted in {@link EventBroadcaster.stats}; recording never blocks or throws;
 * - a PATCH answered 404 (the Event expired at the server) re-creates it; 5xx, 429 and connection errors
 *   are retried `maxAttempts` times `retryIntervalMs` apart; other errors are logged and dropped;
 * - {@link EventBroadcaster.shutdown} writes every count not written yet (client-go loses them).
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
  readonly #refreshMs: number;
  readonly #spam: SpamFilter;
  readonly #maxAttempts: number;
  readonly #retryMs: number;
  readonly #host: string;
  readonly #clock: Clock;
  readonly #cache = new Map<string, SeriesEntry>();
  readonly #queue: SeriesEntry[] = [];
  /** Entries with a retry timer (so shutdown can flush them). */
  readonly #retrying = new Set<SeriesEntry>();
  #refreshTimer: ClockTimer | undefined;
  #finishTimer: ClockTimer | undefined;
  #writing: Promise<void> | undefined;
  #stopping = false;
  #stopped = false;
  #recorded = 0;
  #dropped = 0;
  #failed = 0;
  #filtered = 0;
  #writes = 0;
  #idle: Array<() => void> = [];
  readonly #inflight = new AbortController();

  /** @throws RangeError for a `spamBurst` that is not a positive integer, or a period that is not a number > 0. */
  constructor(options: EventBroadcasterOptions) {
    this.#client = options.client;
    this.#log = (options.logger ?? discardLogger).child({ component: 'events' });
    this.#queueSize = options.queueSize ?? 1000;
    this.#cacheSize = options.cacheSize ?? 4096;
    this.#finishMs = positive('seriesFinishMs', options.seriesFinishMs ?? 360_000);
    this.#refreshMs = positive(
      'seriesRefreshMs',
      options.seriesRefreshMs ?? options.seriesUpdateIntervalMs ?? 1_800_000,
    );
    const spamBurst = options.spamBurst ?? 25;
    if (!Number.isInteger(spamBurst) || spamBurst < 1)
      throw new RangeError(
        `EventBroadcaster spamBurst must be a positive integer, got ${String(options.spamBurst)}`,
      );
    this.#spam = new SpamFilter(
      spamBurst,
      positive('spamRefillMs', options.spamRefillMs ?? 300_000),
      this.#cacheSize,
    );
    this.#maxAttempts = options.maxAttempts ?? 12;
    this.#retryMs = options.retryIntervalMs ?? 10_000;
    this.#host = options.hostname ?? hostname();
    this.#clock = options.clock ?? realClock;
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
    return {
      recorded: this.#recorded,
      dropped: this.#dropped,
      failed: this.#failed,
      filtered: this.#filtered,
      writes: this.#writes,
    };
  }

  #record(
    controller: string,
    instance: string,
    regardingIn: DeepReadonly<KubeObject> | ObjectReference,
    type: EventType,
    reason: string,
    action: string,
    note: string,
    relatedIn: DeepReadonly<KubeObject> | ObjectReference | undefined,
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
      this.#startTimers();
      const related = relatedIn ? refOf(relatedIn) : undefined;
      // client-go tools/events getKey: type, action, reason, reporting controller and instance, regarding, related
      const key = [refKey(regarding), refKey(related), type, action, reason, controller, instance].join(
        '\u0001',
      );
      const now = this.#clock.now();
      const wall = Date.now();
      const known = this.#cache.get(key);
      if (known && now - known.lastObserved < this.#finishMs) {
        known.count += 1;
        known.lastObserved = now;
        known.lastObservedWall = wall;
        this.#cache.delete(key); // keep the map in least-recently-used order
        this.#cache.set(key, known);
        // client-go: the second occurrence starts the series and is written at once; later ones wait for the
        // refresh or the finish.
        if (known.count === 2) this.#enqueue(known);
        return;
      }
      if (known) this.#finish(known);
      if (!this.#spam.take(`${refKey(regarding)}\u0001${controller}`, now)) {
        this.#filtered += 1;
        if (this.#filtered === 1 || this.#filtered % 100 === 0)
          this.#log.warn(
            { reason, regarding: regarding.name, filtered: this.#filtered },
            'too many new events about one object, dropped by the spam filter',
          );
        return;
      }
      nameSeq = (nameSeq + 1) % 1_000_000;
      const entry: SeriesEntry = {
        key,
        event: {
          apiVersion: EventV1Kind.apiVersion,
          kind: EventV1Kind.kind,
          metadata: {
            name: `${regarding.name}.${(BigInt(wall) * 1_000_000n + BigInt(nameSeq)).toString(16)}`,
            namespace: regarding.namespace || 'default',
          },
          eventTime: microTime(wall),
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
        lastObservedWall: wall,
        attempts: 0,
        queued: false,
        writing: false,
        timer: undefined,
        finished: false,
      };
      this.#cache.set(key, entry);
      while (this.#cache.size > this.#cacheSize) {
        const oldest = this.#cache.values().next().value as SeriesEntry;
        this.#finish(oldest);
      }
      this.#enqueue(entry);
    } catch (err) {
      this.#log.error({ err }, 'recording an event failed');
    }
  }

  /** The series leaves the cache; its last count is written if the server lacks it. */
  #finish(e: SeriesEntry): void {
    this.#cache.delete(e.key);
    e.finished = true;
    if (e.count > e.written && !e.timer) this.#enqueue(e);
  }

  #startTimers(): void {
    if (this.#refreshTimer || this.#stopping) return;
    const refresh = (): void => {
      for (const e of this.#cache.values())
        if (e.count > e.written && e.written > 0 && !e.timer) this.#enqueue(e);
      this.#refreshTimer = this.#clock.setTimer(refresh, this.#refreshMs);
    };
    const finish = (): void => {
      const now = this.#clock.now();
      for (const e of [...this.#cache.values()]) if (now - e.lastObserved >= this.#finishMs) this.#finish(e);
      this.#finishTimer = this.#clock.setTimer(finish, this.#finishMs);
    };
    this.#refreshTimer = this.#clock.setTimer(refresh, this.#refreshMs);
    this.#finishTimer = this.#clock.setTimer(finish, this.#finishMs);
  }

  #enqueue(e: SeriesEntry): void {
    if (this.#stopped || e.queued || e.writing) return;
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
      await this.#write(e);
    }
  }

  async #write(e: SeriesEntry): Promise<void> {
    const count = e.count;
    const ev = e.event;
    const key = { namespace: ev.metadata?.namespace ?? 'default', name: ev.metadata?.name ?? '' };
    const series = count > 1 ? { count, lastObservedTime: microTime(e.lastObservedWall) } : undefined;
    const signal = this.#inflight.signal;
    e.writing = true;
    try {
      this.#writes += 1;
      if (e.written === 0) {
        await this.#client.create(EventV1Kind, series ? { ...ev, series } : ev, { signal });
      } else {
        try {
          await this.#client.patch(EventV1Kind, key, { type: 'merge', data: { series } }, { signal });
        } catch (err) {
          if (!isNotFound(err)) throw err;
          this.#writes += 1;
          await this.#client.create(EventV1Kind, { ...ev, series }, { signal });
        }
      }
      e.written = count;
      e.attempts = 0;
      e.writing = false;
      // Occurrences while the create was in flight: the second starts the series at once (client-go writes
      // count 2 on the second occurrence); a finished series is written to its end.
      if (e.count > e.written && (e.written === 1 || e.finished || this.#stopping)) this.#enqueue(e);
    } catch (err) {
      e.writing = false;
      if (signal.aborted) return;
      e.attempts += 1;
      const retryable = !isAlreadyExists(err) && retryableError(err);
      if (retryable && e.attempts < this.#maxAttempts && !this.#stopping) {
        this.#log.debug({ err, attempt: e.attempts }, 'writing an event failed, will retry');
        this.#retrying.add(e);
        e.timer = this.#clock.setTimer(() => {
          e.timer = undefined;
          this.#retrying.delete(e);
          this.#enqueue(e);
        }, this.#retryMs);
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
   * Stops accepting Events, writes every count the server lacks — series waiting for their refresh or finish,
   * and writes waiting for a retry — and resolves when done or when `signal` aborts (then in-flight writes are
   * aborted). Events recorded afterwards are dropped and counted.
   */
  async shutdown(signal?: AbortSignal): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    this.#refreshTimer?.cancel();
    this.#finishTimer?.cancel();
    for (const e of this.#retrying) {
      e.timer?.cancel();
      e.timer = undefined;
    }
    this.#retrying.clear();
    for (const e of this.#cache.values()) if (e.count > e.written) this.#enqueue(e);
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

function positive(name: string, v: number): number {
  if (typeof v !== 'number' || !(v > 0) || !Number.isFinite(v))
    throw new RangeError(`EventBroadcaster ${name} must be a finite number of ms > 0, got ${String(v)}`);
  return v;
}

import type { KubeObject } from '@kubeloop/client';
import type { Clock, Logger } from '@kubeloop/core';
import { EventEmitter } from 'eventemitter3';
import {
  type HandlerOptions,
  handlerResyncMs,
  type ResourceEventHandler,
  type ResourceEventHandlerRegistration,
} from './informer.js';
import type { DeletedFinalStateUnknown } from './store.js';

/** Objects delivered per macrotask during a resync. */
const RESYNC_BATCH = 1000;

/** What the processor reads from the informer's store: the current objects, for late handlers and resyncs. */
export interface ProcessorStore<T extends KubeObject> {
  list(): T[];
  listKeys(): string[];
  get(key: string): T | undefined;
}

/** Options of {@link SharedProcessor}. */
export interface SharedProcessorOptions<T extends KubeObject> {
  readonly store: ProcessorStore<T>;
  readonly hasSynced: () => boolean;
  readonly log: Logger;
  /** The informer's name, in logs. */
  readonly name: string;
  readonly clock: Clock;
  readonly random: () => number;
  /** Default resync period of handlers, in ms (0: off). */
  readonly resyncPeriodMs: number;
  /** Each period is scaled by a random factor in [1 − jitter, 1 + jitter]. */
  readonly resyncJitter: number;
}

interface Listener<T extends KubeObject> {
  readonly onAdd: ((obj: T, initial: boolean) => void) | undefined;
  readonly onUpdate: ((a: T, b: T) => void) | undefined;
  readonly onDelete: ((o: T | DeletedFinalStateUnknown<T>) => void) | undefined;
  readonly resyncMs: number;
  nextResyncAt: number;
  resyncing: boolean;
  removed: boolean;
}

/** The notifications of the fan-out and their arguments. */
interface FanOutEvents<T extends KubeObject> {
  add: [obj: T, initial: boolean];
  update: [old: T, obj: T];
  delete: [obj: T | DeletedFinalStateUnknown<T>];
}

/**
 * The handlers of one informer and their resyncs (client-go `sharedProcessor` / `processorListener`):
 * notifications go to every handler in order, through one `eventemitter3` emitter (the fan-out the design
 * card names); a handler that throws, or returns a promise that rejects, is logged with the error and skipped,
 * the others go on. Each handler resyncs at its own jittered period (one timer for the earliest due), in
 * batches of {@link RESYNC_BATCH} with the event loop free in between. A handler may add or remove handlers
 * while being called: the emitter calls the handlers registered when the notification started (a new one
 * gets its synthetic adds from the store instead).
 */
export class SharedProcessor<T extends KubeObject> {
  readonly #o: SharedProcessorOptions<T>;
  #listeners: Listener<T>[] = [];
  readonly #fanOut = new EventEmitter<FanOutEvents<T>>();
  #timer: { cancel(): void } | undefined;
  #timerAt = Number.POSITIVE_INFINITY;
  #running = false;
  #stopped = false;

  constructor(options: SharedProcessorOptions<T>) {
    this.#o = options;
  }

  /**
   * Adds a handler; it first gets `onAdd(obj, true)` for every object already in the store.
   * @throws RangeError for a negative `resyncPeriodMs`.
   */
  add(handler: ResourceEventHandler<T>, options: HandlerOptions = {}): ResourceEventHandlerRegistration {
    const resyncMs = handlerResyncMs(options.resyncPeriodMs ?? this.#o.resyncPeriodMs);
    const report = (what: string, err: unknown) =>
      this.#o.log.error(
        { informer: this.#o.name, handler: what, err },
        'event handler threw; notification skipped',
      );
    const safe = <A extends unknown[]>(what: string, fn: ((...a: A) => void) | undefined) =>
      fn
        ? (...a: A) => {
            try {
              // An async function is assignable to a void-returning handler: a rejection it returns must be
              // logged like a throw, not escape as an unhandled rejection (which ends a Node process).
              const out: unknown = fn.apply(handler, a);
              if (out && typeof (out as PromiseLike<unknown>).then === 'function')
                (out as PromiseLike<unknown>).then(undefined, (err: unknown) => report(what, err));
            } catch (err) {
              report(what, err);
            }
          }
        : undefined;
    // The handler's parameters are the read-only `Cached<T>`; what reaches it is the stored, frozen object.
    const h = handler as {
      onAdd?(obj: T, isInInitialList: boolean): void;
      onUpdate?(oldObj: T, newObj: T): void;
      onDelete?(obj: T | DeletedFinalStateUnknown<T>): void;
    };
    const l: Listener<T> = {
      onAdd: safe('add', h.onAdd),
      onUpdate: safe('update', h.onUpdate),
      onDelete: safe('delete', h.onDelete),
      resyncMs,
      nextResyncAt: Number.POSITIVE_INFINITY,
      resyncing: false,
      removed: false,
    };
    if (l.onAdd) {
      const existing = this.#o.store.list();
      for (let i = 0; i < existing.length; i++) l.onAdd(existing[i]!, true);
    }
    this.#listeners = [...this.#listeners, l];
    if (l.onAdd) this.#fanOut.on('add', l.onAdd);
    if (l.onUpdate) this.#fanOut.on('update', l.onUpdate);
    if (l.onDelete) this.#fanOut.on('delete', l.onDelete);
    if (this.#running) this.#schedule(l);
    return {
      hasSynced: () => this.#o.hasSynced(),
      remove: () => {
        if (l.removed) return;
        l.removed = true;
        this.#listeners = this.#listeners.filter((x) => x !== l);
        if (l.onAdd) this.#fanOut.off('add', l.onAdd);
        if (l.onUpdate) this.#fanOut.off('update', l.onUpdate);
        if (l.onDelete) this.#fanOut.off('delete', l.onDelete);
      },
    };
  }

  /** Starts the resync clocks of every handler (and of those added later). */
  run(): void {
    this.#running = true;
    for (const l of this.#listeners) this.#schedule(l);
  }

  /** No more resyncs; pending batches end. */
  stop(): void {
    this.#stopped = true;
    this.#running = false;
    this.#timer?.cancel();
    this.#timer = undefined;
  }

  emitAdd(obj: T, initial: boolean): void {
    this.#fanOut.emit('add', obj, initial);
  }
  emitUpdate(old: T, obj: T): void {
    this.#fanOut.emit('update', old, obj);
  }
  emitDelete(obj: T | DeletedFinalStateUnknown<T>): void {
    this.#fanOut.emit('delete', obj);
  }

  #jittered(ms: number): number {
    return ms * (1 + this.#o.resyncJitter * (this.#o.random() * 2 - 1));
  }

  #schedule(l: Listener<T>): void {
    if (l.resyncMs <= 0 || l.removed) return;
    l.nextResyncAt = this.#o.clock.now() + this.#jittered(l.resyncMs);
    this.#arm();
  }

  /** One timer, for the earliest due handler. */
  #arm(): void {
    let at = Number.POSITIVE_INFINITY;
    for (const l of this.#listeners)
      if (l.resyncMs > 0 && !l.resyncing && l.nextResyncAt < at) at = l.nextResyncAt;
    if (at === this.#timerAt && this.#timer) return;
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#timerAt = at;
    if (at === Number.POSITIVE_INFINITY || this.#stopped) return;
    this.#timer = this.#o.clock.setTimer(() => {
      this.#timer = undefined;
      this.#timerAt = Number.POSITIVE_INFINITY;
      this.#onTimer();
    }, at - this.#o.clock.now());
  }

  #onTimer(): void {
    if (this.#stopped) return;
    const now = this.#o.clock.now();
    for (const l of this.#listeners) {
      if (l.resyncMs <= 0 || l.resyncing || l.nextResyncAt > now) continue;
      if (!this.#o.hasSynced() || !l.onUpdate) {
        l.nextResyncAt = now + this.#jittered(l.resyncMs);
        continue;
      }
      l.resyncing = true;
      this.#resync(l, this.#o.store.listKeys(), 0);
    }
    this.#arm();
  }

  /** Delivers a resync of `keys` (current state of each) in batches, leaving the event loop free between them. */
  #resync(l: Listener<T>, keys: string[], from: number): void {
    const end = Math.min(keys.length, from + RESYNC_BATCH);
    for (let i = from; i < end && !l.removed && !this.#stopped; i++) {
      const obj = this.#o.store.get(keys[i]!);
      if (obj) l.onUpdate!(obj, obj);
    }
    if (end < keys.length && !l.removed && !this.#stopped) {
      setImmediate(() => this.#resync(l, keys, end));
      return;
    }
    l.resyncing = false;
    if (!l.removed && !this.#stopped) this.#schedule(l);
  }
}

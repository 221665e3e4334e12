import type { Cache, ResourceEventHandlerRegistration } from '@kubeloop/cache';
import { objectOfDelete } from '@kubeloop/cache';
import type { DeepReadonly, Kind, KubeObject, RESTMapper } from '@kubeloop/client';
import { gvkOf, gvkString } from '@kubeloop/client/apiutil';
import { isNoMatchError } from '@kubeloop/client/errors';
import { Backoff, type Clock, onAbort, realClock, sleep, withDeadline } from '@kubeloop/core';
import { LOW_PRIORITY } from '@kubeloop/workqueue';
import type { EventHandler, HandlerQueue } from './handler.js';
import { whenAborted } from './internal-signals.js';
import { discardLogger, type Logger } from './logger.js';
import type { Predicate } from './predicate.js';

/** Source knows how to feed a controller's queue from somewhere (controller-runtime `source.Source`). */
export interface Source {
  /** Starts delivering into `queue`; stops when `signal` aborts. Must not throw. */
  start(signal: AbortSignal, queue: HandlerQueue): void;
  /** Resolves `true` once the source has delivered its initial state, `false` if `signal` aborts first. */
  waitForSync(signal: AbortSignal): Promise<boolean>;
  /** Why the source has not synced yet, when it knows (e.g. its kind is not served); shown in the timeout error. */
  syncError?(): unknown;
}

/** Calls `fn`, reporting a throw or a rejection of what it returns to `queue.handlerError`: never fatal, never unhandled. */
function deliver(
  queue: HandlerQueue,
  details: Record<string, unknown>,
  fn: () => unknown,
  track?: (p: Promise<unknown>) => void,
): void {
  try {
    const r = fn();
    if (r instanceof Promise) {
      r.catch((err: unknown) => queue.handlerError(err, details));
      track?.(r);
    }
  } catch (err) {
    queue.handlerError(err, details);
  }
}

/** The same queue, with requests added at `priority` unless the handler chose one. */
function lowPriority(queue: HandlerQueue, priority: number): HandlerQueue {
  return {
    add: (req, options) => queue.add(req, { priority: options?.priority ?? priority }),
    handlerError: (err, details) => queue.handlerError(err, details),
  };
}

/** Options of {@link KindSource}. */
export interface KindSourceOptions<T extends KubeObject> {
  /** Every predicate must pass an event before the handler sees it. */
  readonly predicates?: readonly Predicate<T>[];
  readonly logger?: Logger;
  /**
   * When given, the source first waits until the kind is served (controller-runtime's `source.Kind`): a
   * lookup that fails — a kind not served yet (a CRD not installed), a 503 or a refused connection while
   * the API server restarts — is retried with backoff until the controller's sync timeout; the first
   * failure of each kind of error is logged, the last one is kept for `syncError()`.
   */
  readonly restMapper?: RESTMapper;
  /** Clock for the lookup backoff (tests inject a fake). @defaultValue the real clock */
  readonly clock?: Clock;
  /**
   * Priority of the requests made for events of the informer's initial list and for resyncs (controller-runtime
   * `WithLowPriorityWhenUnchanged` uses `LowPriority`); a handler's explicit priority wins. Ignored by the plain
   * queue. With the priority queue's fair share these requests still make progress under any stream of
   * live changes. @throws RangeError (from the constructor) when not a finite number.
   * @defaultValue {@link LOW_PRIORITY} (-100)
   */
  readonly initialListPriority?: number;
}

/**
 * Events of one kind from the manager's cache (controller-runtime `source.Kind`): the kind's shared
 * informer, filtered by predicates (all must pass), mapped to requests by the handler. Events from the
 * informer's initial list and resyncs (an update whose old and new object are the same version) go to the
 * queue at {@link LOW_PRIORITY}, so live changes overtake a start-up backlog (controller-runtime's
 * `WithLowPriorityWhenUnchanged`, the default with its priority queue).
 */
export class KindSource<T extends KubeObject = KubeObject> implements Source {
  readonly #cache: Cache;
  readonly #kind: Kind<T>;
  readonly #handler: EventHandler<T>;
  readonly #options: KindSourceOptions<T>;
  readonly #log: Logger;
  #registration: ResourceEventHandlerRegistration | undefined;
  #registered: Promise<boolean> | undefined;
  #syncError: unknown;
  /**
   * Async handler calls (an owner lookup, a map function) not settled yet, tracked until the source has
   * synced: their requests reach the queue only when they settle.
   */
  #pending: Set<Promise<unknown>> | undefined = new Set();

  constructor(cache: Cache, kind: Kind<T>, handler: EventHandler<T>, options: KindSourceOptions<T> = {}) {
    this.#cache = cache;
    this.#kind = kind;
    this.#handler = handler;
    this.#options = options;
    this.#log = options.logger ?? discardLogger;
    const p = options.initialListPriority;
    if (p !== undefined && (typeof p !== 'number' || !Number.isFinite(p)))
      throw new RangeError(`KindSource initialListPriority must be a finite number, got ${String(p)}`);
  }

  start(signal: AbortSignal, queue: HandlerQueue): void {
    this.#registered = this.#register(signal, queue);
  }

  async #register(signal: AbortSignal, queue: HandlerQueue): Promise<boolean> {
    const mapper = this.#options.restMapper;
    if (mapper && !(await this.#waitForKind(mapper, signal))) return false;
    if (signal.aborted) return false;
    const ps = this.#options.predicates ?? [];
    const handler = this.#handler;
    const kind = this.#kind.kind;
    const low = lowPriority(queue, this.#options.initialListPriority ?? LOW_PRIORITY);
    const track = (p: Promise<unknown>): void => {
      const pending = this.#pending;
      if (!pending) return;
      pending.add(p);
      const drop = (): void => {
        pending.delete(p);
      };
      p.then(drop, drop);
    };
    this.#registration = this.#cache.getInformer(this.#kind).addEventHandler({
      onAdd: (obj, isInInitialList) =>
        deliver(
          queue,
          { kind, event: 'create' },
          () => {
            if (ps.every((p) => p.create?.(obj) ?? true))
              return handler.create({ object: obj, isInInitialList }, isInInitialList ? low : queue);
          },
          track,
        ),
      onUpdate: (a, b) =>
        deliver(
          queue,
          { kind, event: 'update' },
          () => {
            if (!ps.every((p) => p.update?.(a, b) ?? true)) return;
            const resync = a === b || a.metadata?.resourceVersion === b.metadata?.resourceVersion;
            return handler.update({ objectOld: a, objectNew: b }, resync ? low : queue);
          },
          track,
        ),
      onDelete: (tomb) =>
        deliver(
          queue,
          { kind, event: 'delete' },
          () => {
            const obj = objectOfDelete(tomb);
            const deleteStateUnknown = obj !== tomb;
            if (ps.every((p) => p.delete?.(obj, deleteStateUnknown) ?? true))
              return handler.delete({ object: obj, deleteStateUnknown }, queue);
          },
          track,
        ),
    });
    onAbort(signal, () => this.#registration?.remove());
    return true;
  }

  /**
   * Resolves `true` once the kind is served, the handler registered, the informer synced and every async
   * handler call made so far has settled — so the requests of the initial list are in the queue before the
   * workers start, as controller-runtime's `Kind.WaitForSync` waits for the handler registration's
   * `HasSynced` (its handlers enqueue synchronously; here `enqueueRequestForOwner` and map functions may
   * await); `false` if `signal` aborts first. {@link KindSource.syncError} then tells why, when a lookup failed.
   */
  async waitForSync(signal: AbortSignal): Promise<boolean> {
    if (!this.#registered) return false;
    const abort = whenAborted(signal);
    let registered: boolean;
    try {
      registered = await Promise.race([this.#registered, abort.promise.then(() => false)]);
    } finally {
      abort.off();
    }
    if (!registered) return false;
    if (!(await this.#cache.getInformer(this.#kind).waitForSync(signal))) return false;
    const pending = whenAborted(signal);
    try {
      while (this.#pending?.size) {
        await Promise.race([Promise.allSettled([...this.#pending]), pending.promise]);
        if (signal.aborted) return false;
      }
    } finally {
      pending.off();
    }
    this.#pending = undefined;
    return true;
  }

  syncError(): unknown {
    if (this.#syncError !== undefined || !this.#registration) return this.#syncError;
    // The kind is served but its informer has not synced: the error it stopped with, or its last list error.
    const st = this.#cache.getInformer(this.#kind).status?.();
    return st?.terminalError ?? st?.lastListError;
  }

  async #waitForKind(mapper: RESTMapper, signal: AbortSignal): Promise<boolean> {
    const clock = this.#options.clock ?? realClock;
    const backoff = new Backoff({ initialMs: 100, maxMs: 10_000, factor: 2, jitter: 0.1, clock });
    const seen = new Set<string>();
    const gvk = gvkString(gvkOf(this.#kind));
    for (;;) {
      try {
        await mapper.restMapping(gvkOf(this.#kind));
        this.#syncError = undefined;
        return true;
      } catch (err) {
        this.#syncError = err;
        const sort = errorSort(err);
        if (!seen.has(sort)) {
          seen.add(sort);
          this.#log.error(
            { kind: gvk, err },
            isNoMatchError(err)
              ? 'kind is not served by the API server; if it is a CRD, it should be installed before the controller starts'
              : 'looking up the kind failed; retrying until the cache sync timeout',
          );
        }
      }
      if (signal.aborted) return false;
      // The client's sleep listens on the signal it gets: give it this source's own child signal, so many
      // sources retrying on one controller signal add one listener to it.
      const own = withDeadline(signal, 0);
      try {
        await sleep(backoff.nextDelayMs(), own.signal, clock);
      } catch {
        return false;
      } finally {
        own.dispose();
      }
    }
  }
}

/** A key telling kinds of errors apart for "log the first of each": the code, reason or name. */
function errorSort(err: unknown): string {
  if (typeof err !== 'object' || err === null) return typeof err;
  const e = err as { code?: unknown; reason?: unknown; name?: unknown; status?: { reason?: unknown } };
  return String(e.status?.reason ?? e.reason ?? e.code ?? e.name ?? 'Error');
}

/**
 * Events from any async iterable — a timer, a webhook, another system (controller-runtime `source.Channel`):
 * each object it yields goes through the predicates' `generic` and the handler's `generic` (which must
 * exist). Synced from the start. The iteration is stopped (`return()`) when the controller stops; a failure
 * of the iterable is logged and ends the source.
 */
export class ChannelSource<T extends KubeObject = KubeObject> implements Source {
  /** @throws TypeError when `handler` has no `generic` method. */
  constructor(
    private readonly events: AsyncIterable<T | DeepReadonly<T>>,
    private readonly handler: EventHandler<T>,
    private readonly options: {
      readonly predicates?: readonly Predicate<T>[];
      readonly logger?: Logger;
    } = {},
  ) {
    if (!handler.generic) throw new TypeError('ChannelSource: the handler has no generic() method');
  }

  start(signal: AbortSignal, queue: HandlerQueue): void {
    const generic = this.handler.generic;
    if (!generic) return;
    const ps = this.options.predicates ?? [];
    const it = this.events[Symbol.asyncIterator]();
    const off = onAbort(signal, () => void it.return?.().catch(() => undefined));
    void (async () => {
      try {
        while (!signal.aborted) {
          const next = await it.next();
          if (next.done || signal.aborted) break;
          // handlers and predicates see every object read-only, whatever its source
          const obj = next.value as DeepReadonly<T>;
          deliver(queue, { source: 'channel', event: 'generic' }, () => {
            if (ps.every((p) => p.generic?.(obj) ?? true))
              return generic.call(this.handler, { object: obj }, queue);
          });
        }
      } catch (err) {
        (this.options.logger ?? discardLogger).error(
          { err },
          'channel source failed; no more events from it',
        );
      } finally {
        off();
      }
    })();
  }

  async waitForSync(): Promise<boolean> {
    return true;
  }
}

import { randomUUID } from 'node:crypto';
import { isConflict } from '@kubeloop/client';
import { type Clock, onAbort, realClock, withDeadline } from '@kubeloop/core';
import {
  defaultControllerRateLimiter,
  defaultPriorityQueueRateLimiter,
  newPriorityQueue,
  newRateLimitingQueue,
  type PriorityQueue,
  type RateLimitingQueue,
} from '@kubeloop/workqueue';
import {
  ControllerError,
  type ControllerMetricsHook,
  type ControllerOptions,
  checkControllerOptions,
  isPanic,
  type ReconcileResultLabel,
} from './controller-options.js';
import type { HandlerQueue } from './handler.js';
import { signalWithTimeout } from './internal-signals.js';
import { discardLogger, errorMessage, type Logger } from './logger.js';
import { DEFAULT_CACHE_SYNC_TIMEOUT_MS } from './manager/options.js';
import type { Runnable } from './manager/runnable.js';
import {
  invalidResult,
  isTerminalError,
  type Reconciler,
  type Request,
  type Result,
  requestKey,
} from './reconcile.js';
import type { Source } from './source.js';

/**
 * Workers over a rate-limited queue (controller-runtime `internal/controller`). Sources add requests;
 * each worker takes one, calls the reconciler, then: a thrown error → `addRateLimited` (a
 * {@link TerminalError} is logged and forgotten), and so does a result that is not a Result (an
 * InvalidResultError, e.g. `requeueAfterMs: '1000'`); `requeueAfterMs` → `forget` + `addAfter`; `requeue` →
 * `addRateLimited`; otherwise `forget`. The queue guarantees one request is never reconciled by two
 * workers at once. Once the signal aborts, no worker takes another request; reconciles in flight finish
 * (their `ctx.signal` is aborted) and the manager waits for them.
 */
export class Controller implements Runnable {
  readonly name: string;
  readonly queue: RateLimitingQueue<Request>;
  readonly #pq: PriorityQueue<Request> | undefined;
  readonly #reconciler: Reconciler;
  readonly #sources: Source[] = [];
  readonly #workers: number;
  readonly #syncTimeoutMs: number;
  readonly #timeoutMs: number;
  readonly #recoverPanic: boolean;
  readonly #clock: Clock;
  readonly #metrics: ControllerMetricsHook | undefined;
  readonly #log: Logger;
  readonly #needLeaderElection: boolean;
  readonly #handlerQueue: HandlerQueue;
  readonly #waitForOwnWrites: ControllerOptions['waitForOwnWrites'];
  readonly #enableWarmup: boolean;
  #handlerErrors = 0;
  #started = false;
  /** The sources were started (by `warmup` or `start`), on `#signal`. */
  #sourcesStarted = false;
  #synced = false;
  #signal: AbortSignal | undefined;

  constructor(name: string, reconciler: Reconciler, options: ControllerOptions = {}) {
    this.name = name;
    this.#reconciler = reconciler;
    checkControllerOptions(name, options);
    this.#workers = Math.max(1, options.maxConcurrentReconciles ?? 1);
    this.#syncTimeoutMs = options.cacheSyncTimeoutMs ?? DEFAULT_CACHE_SYNC_TIMEOUT_MS;
    this.#timeoutMs = options.reconciliationTimeoutMs ?? 0;
    this.#recoverPanic = options.recoverPanic ?? true;
    this.#clock = options.clock ?? realClock;
    this.#metrics = options.metrics;
    this.#needLeaderElection = options.needLeaderElection ?? true;
    this.#enableWarmup = options.enableWarmup ?? false;
    this.#waitForOwnWrites = options.waitForOwnWrites;
    this.#log = (options.logger ?? discardLogger).child({ controller: name });
    const common = {
      name,
      keyFn: requestKey,
      clock: this.#clock,
      ...(options.queueMetricsProvider ? { metricsProvider: options.queueMetricsProvider } : {}),
    };
    if (options.usePriorityQueue ?? true) {
      this.#pq = newPriorityQueue<Request>({
        ...common,
        rateLimiter: options.rateLimiter ?? defaultPriorityQueueRateLimiter(),
        ...(options.fairnessWindow !== undefined ? { fairnessWindow: options.fairnessWindow } : {}),
      });
      this.queue = this.#pq;
    } else {
      this.queue = newRateLimitingQueue<Request>({
        ...common,
        rateLimiter: options.rateLimiter ?? defaultControllerRateLimiter(this.#clock),
      });
    }
    const pq = this.#pq;
    this.#handlerQueue = {
      add: (req, opts) => {
        if (pq && opts?.priority !== undefined) pq.add(req, { priority: opts.priority });
        else this.queue.add(req);
      },
      handlerError: (err, details) => {
        this.#handlerErrors++;
        this.#metrics?.handlerError?.(name);
        this.#log.error({ ...details, err }, 'event handler failed; the event is dropped');
      },
    };
    this.#metrics?.init(name, this.#workers);
  }

  /** Whether the manager runs this controller only on the leader (controller-runtime `NeedLeaderElection`). */
  /** Whether every source has synced and the workers run (readiness; see the manager's `cacheSyncCheck`). */
  hasSynced(): boolean {
    return this.#synced;
  }

  needLeaderElection(): boolean {
    return this.#needLeaderElection;
  }

  /** How many times an event handler of this controller failed (a map function that threw or rejected). */
  get handlerErrors(): number {
    return this.#handlerErrors;
  }

  /** What sources and handlers write to: the queue, with priorities and handler-error reporting. */
  get handlerQueue(): HandlerQueue {
    return this.#handlerQueue;
  }

  /** Adds a source; after start it is started at once. */
  watch(source: Source): void {
    this.#sources.push(source);
    if (this.#signal) source.start(this.#signal, this.#handlerQueue);
  }

  /**
   * With `enableWarmup` (controller-runtime `Controller.Warmup`): starts the sources on `signal` and waits until
   * they synced or `cacheSyncTimeoutMs` passed (logged; `start` waits again). The manager calls it on every
   * replica before leader election; `start` then does not start the sources again. Without it: nothing.
   */
  async warmup(signal: AbortSignal): Promise<void> {
    if (!this.#enableWarmup || this.#sourcesStarted || this.#started || signal.aborted) return;
    this.#startSources(signal);
    // A standby that never leads still stops cleanly: nothing waits on its queue once the manager stops.
    onAbort(signal, () => this.queue.shutDown());
    const wait = signalWithTimeout(signal, this.#syncTimeoutMs, this.#clock);
    try {
      const synced = (await Promise.all(this.#sources.map((s) => s.waitForSync(wait.signal)))).every(Boolean);
      if (!synced && !signal.aborted)
        this.#log.warn({ timeoutMs: this.#syncTimeoutMs }, 'warmup: sources not synced in time');
    } finally {
      wait.clear();
    }
  }

  #startSources(signal: AbortSignal): void {
    this.#sourcesStarted = true;
    this.#signal = signal;
    for (const s of this.#sources) s.start(signal, this.#handlerQueue);
  }

  /**
   * Starts the sources (unless `warmup` did), waits for them to sync, runs the workers until `signal` aborts, then waits for the
   * reconciles in flight.
   * @throws ControllerError when started twice or when the sources do not sync in `cacheSyncTimeoutMs`
   *   (its `cause` is the last lookup error of a source, e.g. a NoKindMatchError, when there is one).
   */
  async start(signal: AbortSignal): Promise<void> {
    if (this.#started) throw new ControllerError(`controller ${this.name} was already started`);
    this.#started = true;
    // Through the client's per-signal fan-out: many controllers on one group signal add one listener.
    const off = onAbort(signal, () => this.queue.shutDown());
    try {
      if (!this.#sourcesStarted) this.#startSources(signal);
      const syncWait = signalWithTimeout(signal, this.#syncTimeoutMs, this.#clock);
      let synced: boolean;
      try {
        synced = (await Promise.all(this.#sources.map((s) => s.waitForSync(syncWait.signal)))).every(Boolean);
      } finally {
        syncWait.clear();
      }
      if (!synced) {
        this.queue.shutDown();
        if (signal.aborted) return;
        const why = this.#sources.map((s) => s.syncError?.()).find((e) => e !== undefined);
        throw new ControllerError(
          `controller ${this.name}: timed out waiting for caches to sync${why ? `: ${errorMessage(why)}` : ''}`,
          ...(why ? [{ cause: why }] : []),
        );
      }
      if (signal.aborted) return;
      this.#synced = true;
      this.#log.info({ workers: this.#workers }, 'Starting workers');
      const workers = Array.from({ length: this.#workers }, () => this.#worker(signal));
      await Promise.all(workers);
      this.#log.info({}, 'All workers finished');
    } finally {
      off();
      this.queue.shutDown();
    }
  }

  async #worker(signal: AbortSignal): Promise<void> {
    for (;;) {
      let req: Request;
      let priority: number | undefined;
      // A ready item is taken synchronously (no promise per item while there is a backlog); the worker
      // awaits the queue only when it is empty (controller-runtime's GetWithPriority blocks likewise).
      if (this.#pq) {
        const ready = this.#pq.tryGetWithPriority();
        if (ready !== undefined) {
          req = ready.item;
          priority = ready.priority;
        } else {
          const got = await this.#pq.getWithPriority();
          if (got.shutdown) return;
          req = got.item;
          priority = got.priority;
        }
      } else {
        const ready = this.queue.tryGet();
        if (ready !== undefined) req = ready;
        else {
          const got = await this.queue.get();
          if (got.shutdown) return;
          req = got.item;
        }
      }
      // Stopping: a queued backlog is not worked off with a dead signal.
      if (signal.aborted) {
        this.queue.done(req);
        return;
      }
      this.#metrics?.activeWorkers(this.name, 1);
      try {
        await this.#reconcileHandler(req, priority, signal);
      } finally {
        this.#metrics?.activeWorkers(this.name, -1);
        this.queue.done(req);
      }
    }
  }

  #requeueRateLimited(req: Request, priority: number | undefined): void {
    if (this.#pq && priority !== undefined) this.#pq.add(req, { rateLimited: true, priority });
    else this.queue.addRateLimited(req);
  }

  async #reconcileHandler(req: Request, priority: number | undefined, signal: AbortSignal): Promise<void> {
    const startedAt = this.#clock.now();
    const reconcileID = randomUUID();
    const log = this.#log.child({
      ...(req.cluster ? { cluster: req.cluster } : {}),
      namespace: req.namespace,
      name: req.name,
      reconcileID,
    });
    // Each reconcile gets its own signal (controller-runtime derives a ctx per reconcile): a reconciler that
    // listens on it adds nothing to the long-lived controller signal. Aborted by the controller's stop or
    // by `reconciliationTimeoutMs` (0: no deadline).
    const deadline = withDeadline(signal, this.#timeoutMs, this.#clock);
    const observe = (
      result: ReconcileResultLabel,
      terminal = false,
      panic = false,
      requeueReason?: 'conflict',
    ) =>
      this.#metrics?.reconciled(this.name, {
        result,
        seconds: (this.#clock.now() - startedAt) / 1000,
        terminal,
        panic,
        timedOut: deadline.timedOut,
        ...(requeueReason ? { requeueReason } : {}),
      });
    // biome-ignore lint/suspicious/noConfusingVoidType: what Reconciler.reconcile may resolve to
    let result: Result | undefined | void;
    try {
      if (this.#waitForOwnWrites) await this.#waitForOwnWrites(req, deadline.signal);
      result = await this.#reconciler.reconcile({ signal: deadline.signal, log, reconcileID }, req);
    } catch (err) {
      if (isPanic(err)) {
        if (!this.#recoverPanic) {
          observe('error', false, true);
          // Crash, as an unrecovered Go panic does: rethrown outside any promise chain.
          process.nextTick(() => {
            throw err;
          });
          return;
        }
        log.error({ err }, 'Observed a panic in reconciler');
      }
      if (isTerminalError(err)) {
        log.error({ err }, 'Reconciler error (terminal, not retried)');
        this.queue.forget(req);
        observe('error', true, isPanic(err));
        return;
      }
      const timedOut = deadline.timedOut;
      if (isConflict(err) && !isPanic(err)) {
        // A 409 means the object changed since it was read: routine under concurrent writers, fixed by a
        // retry on fresh state. One debug line and a counted requeue with backoff, not an error with its stack
        // (controller-runtime logs it as an error; its users filter it out).
        log.debug(
          { reason: 'Conflict', message: err instanceof Error ? err.message : String(err) },
          'Reconcile conflict, requeued with backoff',
        );
        this.#requeueRateLimited(req, priority);
        observe('requeue', false, false, 'conflict');
        return;
      }
      log.error({ err, ...(timedOut ? { timeoutMs: this.#timeoutMs } : {}) }, 'Reconciler error');
      this.#requeueRateLimited(req, priority);
      observe('error', false, isPanic(err));
      return;
    } finally {
      deadline.dispose();
    }
    // A result that is not a Result (e.g. requeueAfterMs: '1000') is a reconcile error, retried with backoff:
    // taken as given, the string would requeue at once and hot-loop.
    const bad = invalidResult(result);
    if (bad) {
      log.error({ err: bad }, 'Reconciler error');
      this.#requeueRateLimited(req, priority);
      observe('error');
      return;
    }
    const after = result?.requeueAfterMs ?? 0;
    const next = result?.priority ?? priority;
    if (after > 0) {
      this.queue.forget(req);
      if (this.#pq && next !== undefined) this.#pq.add(req, { after, priority: next });
      else this.queue.addAfter(req, after);
      observe('requeue_after');
    } else if (result?.requeue) {
      this.#requeueRateLimited(req, next);
      observe('requeue');
    } else {
      this.queue.forget(req);
      observe('success');
    }
  }
}

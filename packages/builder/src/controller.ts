import { randomUUID } from 'node:crypto';
import {
  defaultControllerRateLimiter,
  newRateLimitingQueue,
  type RateLimiter,
  type RateLimitingQueue,
} from '@kubeloop/workqueue';
import { signalWithTimeout } from './internal-signals.js';
import { discardLogger, errorMessage, type Logger } from './logger.js';
import type { Runnable } from './manager/runnable.js';
import { type Reconciler, type Request, requestKey, TerminalError } from './reconcile.js';
import type { Source } from './source.js';

/** Options of a {@link Controller} (controller-runtime `controller.Options`). */
export interface ControllerOptions {
  /** Workers reconciling in parallel (never two for one request). @defaultValue 1 */
  readonly maxConcurrentReconciles?: number;
  /** Per-request backoff. @defaultValue `defaultControllerRateLimiter()` (5 ms→1000 s per item, max with 10 qps/100 burst) */
  readonly rateLimiter?: RateLimiter<unknown>;
  /** How long `start` waits for its sources to sync, in ms. @defaultValue 120000 */
  readonly cacheSyncTimeoutMs?: number;
  readonly logger?: Logger;
  /** Whether the controller runs only on the leader. @defaultValue true (controller-runtime's default) */
  readonly needLeaderElection?: boolean;
}

/** A controller failed to start (e.g. its caches did not sync in time). Code `'ERR_CONTROLLER'`. */
export class ControllerError extends Error {
  readonly code = 'ERR_CONTROLLER' as const;
  override readonly name = 'ControllerError';
}

/**
 * Workers over a rate-limited queue (controller-runtime `internal/controller`). Sources add requests;
 * each worker takes one, calls the reconciler, then: a thrown error → `addRateLimited` (a
 * {@link TerminalError} is only logged); `requeueAfterMs` → `forget` + `addAfter`; `requeue` →
 * `addRateLimited`; otherwise `forget`. The queue guarantees one request is never reconciled by two
 * workers at once. On stop the queue shuts down and in-flight reconciles finish.
 */
export class Controller implements Runnable {
  readonly name: string;
  readonly queue: RateLimitingQueue<Request>;
  readonly #reconciler: Reconciler;
  readonly #sources: Source[] = [];
  readonly #workers: number;
  readonly #syncTimeoutMs: number;
  readonly #log: Logger;
  readonly #needLeaderElection: boolean;
  #started = false;
  #signal: AbortSignal | undefined;

  constructor(name: string, reconciler: Reconciler, options: ControllerOptions = {}) {
    this.name = name;
    this.#reconciler = reconciler;
    this.#workers = Math.max(1, options.maxConcurrentReconciles ?? 1);
    this.#syncTimeoutMs = options.cacheSyncTimeoutMs ?? 120_000;
    this.#needLeaderElection = options.needLeaderElection ?? true;
    this.#log = (options.logger ?? discardLogger).child({ controller: name });
    this.queue = newRateLimitingQueue<Request>({
      name,
      rateLimiter: options.rateLimiter ?? defaultControllerRateLimiter(),
      keyFn: requestKey,
    });
  }

  /** Whether the manager runs this controller only on the leader (controller-runtime `NeedLeaderElection`). */
  needLeaderElection(): boolean {
    return this.#needLeaderElection;
  }

  /** Adds a source; after start it is started at once. */
  watch(source: Source): void {
    this.#sources.push(source);
    if (this.#signal) source.start(this.#signal, this.queue);
  }

  /**
   * Starts the sources, waits for them to sync, runs the workers until `signal` aborts, then drains.
   * @throws ControllerError when started twice or when the sources do not sync in `cacheSyncTimeoutMs`.
   */
  async start(signal: AbortSignal): Promise<void> {
    if (this.#started) throw new ControllerError(`controller ${this.name} was already started`);
    this.#started = true;
    this.#signal = signal;
    for (const s of this.#sources) s.start(signal, this.queue);
    const syncWait = signalWithTimeout(signal, this.#syncTimeoutMs);
    const synced = (await Promise.all(this.#sources.map((s) => s.waitForSync(syncWait.signal)))).every(
      Boolean,
    );
    syncWait.clear();
    if (!synced) {
      this.queue.shutDown();
      if (signal.aborted) return;
      const why = this.#sources.map((s) => s.syncError?.()).find((e) => e !== undefined);
      throw new ControllerError(
        `controller ${this.name}: timed out waiting for caches to sync${why ? `: ${errorMessage(why)}` : ''}`,
        ...(why ? [{ cause: why }] : []),
      );
    }
    this.#log.info({ workers: this.#workers }, 'Starting workers');
    const workers = Array.from({ length: this.#workers }, () => this.#worker(signal));
    await new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      signal.addEventListener('abort', () => resolve(), { once: true });
    });
    this.#log.info({}, 'Shutdown signal received, waiting for all workers to finish');
    this.queue.shutDown();
    await Promise.all(workers);
    this.#log.info({}, 'All workers finished');
  }

  async #worker(signal: AbortSignal): Promise<void> {
    for (;;) {
      const got = await this.queue.get();
      if (got.shutdown) return;
      const req = got.item;
      try {
        await this.#reconcileHandler(req, signal);
      } finally {
        this.queue.done(req);
      }
    }
  }

  async #reconcileHandler(req: Request, signal: AbortSignal): Promise<void> {
    const reconcileID = randomUUID();
    const log = this.#log.child({ namespace: req.namespace, name: req.name, reconcileID });
    let result: Awaited<ReturnType<Reconciler['reconcile']>>;
    try {
      result = await this.#reconciler.reconcile({ signal, log, reconcileID }, req);
    } catch (err) {
      if (err instanceof TerminalError) {
        log.error({ err: errorMessage(err) }, 'Reconciler error (terminal, not retried)');
        this.queue.forget(req);
        return;
      }
      log.error({ err: errorMessage(err) }, 'Reconciler error');
      this.queue.addRateLimited(req);
      return;
    }
    const after = result?.requeueAfterMs ?? 0;
    if (after > 0) {
      this.queue.forget(req);
      this.queue.addAfter(req, after);
    } else if (result?.requeue) {
      this.queue.addRateLimited(req);
    } else {
      this.queue.forget(req);
    }
  }
}

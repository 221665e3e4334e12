/** What a controller is configured with and reports through: its options, metrics hook and errors. */

import type { Clock } from '@kubeloop/core';
import type { MetricsProvider, RateLimiter } from '@kubeloop/workqueue';
import type { Logger } from './logger.js';

/** How one reconcile ended, as controller-runtime's `controller_runtime_reconcile_total{result}` labels it. */
export type ReconcileResultLabel = 'success' | 'error' | 'requeue' | 'requeue_after';

/**
 * Where a controller reports what its metrics need (implemented by the builder's Prometheus metrics;
 * controller-runtime `internal/controller/metrics`). Every method is called synchronously and must not throw.
 */
export interface ControllerMetricsHook {
  /** Once, when the controller is created: zero-initialise its series. */
  init(controller: string, maxConcurrentReconciles: number): void;
  /** A worker started (+1) or finished (-1) a reconcile. */
  activeWorkers(controller: string, delta: 1 | -1): void;
  /**
   * A reconcile ended. `seconds` runs from the moment a worker took the request off the queue (time
   * spent queued is the workqueue's `queue_duration`); `terminal` and `panic` qualify an `error`;
   * `timedOut`: its own `reconciliationTimeoutMs` deadline fired while it ran, whatever it returned
   * (controller-runtime counts `reconcile_timeouts_total` so; a stop of the controller is no timeout).
   */
  reconciled(
    controller: string,
    outcome: {
      result: ReconcileResultLabel;
      seconds: number;
      terminal: boolean;
      panic: boolean;
      timedOut?: boolean;
      /**
       * Why a `requeue` result was not the reconciler's choice: `'conflict'` — it threw a 409 Conflict, which
       * is requeued with backoff and logged at debug, not counted as an error.
       */
      requeueReason?: 'conflict';
    },
  ): void;
  /** An event handler failed (e.g. a map function threw); counted, never fatal. */
  handlerError?(controller: string): void;
}

/** Options of a {@link Controller} (controller-runtime `controller.Options`). */
export interface ControllerOptions {
  /** Workers reconciling in parallel (never two for one request). @defaultValue 1 */
  readonly maxConcurrentReconciles?: number;
  /**
   * Per-request backoff. @defaultValue with the priority queue, per-item exponential 5 ms → 1000 s
   * (controller-runtime v0.23); with the plain queue, that and a 10 qps / 100 burst bucket, whichever is longer
   */
  readonly rateLimiter?: RateLimiter<unknown>;
  /** How long `start` waits for its sources to sync, in ms on the controller's `clock`. @defaultValue 120000 */
  readonly cacheSyncTimeoutMs?: number;
  readonly logger?: Logger;
  /** Whether the controller runs only on the leader. @defaultValue true (controller-runtime's default) */
  readonly needLeaderElection?: boolean;
  /**
   * Aborts each reconcile's `ctx.signal` this many ms after it starts (controller-runtime
   * `ReconciliationTimeout`); a reconcile that then throws is retried with backoff. 0: none. @defaultValue 0
   */
  readonly reconciliationTimeoutMs?: number;
  /**
   * `true`: a reconciler that throws a programming error (`TypeError`, `ReferenceError`, `RangeError`,
   * `SyntaxError`, `EvalError`, `URIError` — JavaScript's panics) is logged, counted as a panic and retried
   * like any error. `false`: such an error is rethrown outside the controller, which crashes the process
   * (controller-runtime `RecoverPanic`). Other errors are always retried. @defaultValue true
   */
  readonly recoverPanic?: boolean;
  /**
   * Use controller-runtime's priority queue (its default since v0.23): requests from initial lists and
   * resyncs wait behind live changes. `false`: the plain rate-limiting queue (FIFO). @defaultValue true
   */
  readonly usePriorityQueue?: boolean;
  /**
   * The priority queue's fair share (`PriorityQueueOptions.fairnessWindow`): at least one handout in every
   * `fairnessWindow` goes to the request ready the longest, so initial-list requests are reconciled under any
   * stream of live changes or self-requeueing keys; `Infinity` for controller-runtime's strict order.
   * @defaultValue 8
   */
  readonly fairnessWindow?: number;
  /**
   * Warm replicas (controller-runtime `EnableWarmup`): the manager starts this controller's sources — and so
   * their informers — on every replica before leader election and waits for them to sync, so a replica that
   * wins the lease starts its workers on a synced cache instead of waiting for a full list. Events seen while
   * standing by wait in the queue. Costs a standby the memory and watches of a leader. Only for controllers
   * that need leader election. @defaultValue false
   */
  readonly enableWarmup?: boolean;
  /**
   * Clock of the queue, the rate limiter, reconcile timing and the wait for the sources' sync (tests inject a
   * `FakeClock`). @defaultValue the real clock
   */
  readonly clock?: Clock;
  /** Receives the controller's metrics. */
  readonly metrics?: ControllerMetricsHook;
  /** Receives the queue's `workqueue_*` metrics (the queue is named after the controller). */
  readonly queueMetricsProvider?: MetricsProvider;
  /**
   * Awaited before each reconcile of a key: read-your-own-writes (the builder sets it to the manager cache's
   * `waitForOwnWrites` for the `for` kind when the cache has `readYourWrites` on), so a reconcile does not start
   * on a cached state older than this process's last write of that object. Must not reject; bounded by the
   * cache's `readYourWrites.timeoutMs`. @defaultValue none
   */
  readonly waitForOwnWrites?: (
    req: { namespace: string; name: string },
    signal: AbortSignal,
  ) => Promise<void>;
}

/**
 * A controller failed to start (e.g. its caches did not sync in time), or got an option it cannot use (a
 * `maxConcurrentReconciles`, `cacheSyncTimeoutMs` or `reconciliationTimeoutMs` that is not a number of the
 * right kind). Code `'ERR_CONTROLLER'`.
 */
export class ControllerError extends Error {
  readonly code = 'ERR_CONTROLLER' as const;
  override readonly name = 'ControllerError';
}

const PANIC_NAMES = new Set([
  'TypeError',
  'ReferenceError',
  'RangeError',
  'SyntaxError',
  'EvalError',
  'URIError',
]);

/**
 * Refuses numeric options that are not numbers of the right kind — a string (`'4'`, `'5000'` from YAML or an
 * env var), NaN or Infinity — which would otherwise start no worker (`length: NaN`) or arm a deadline that
 * never or always fires. Upstream's values (`≤ 0` workers → 1; `0` reconcile timeout → none) keep their meaning.
 * @throws ControllerError naming the controller and the option.
 * @internal
 */
export function checkControllerOptions(name: string, o: ControllerOptions): void {
  const bad = (what: string, v: unknown, want: string) =>
    new ControllerError(
      `controller ${JSON.stringify(name)}: ${what} must be ${want}, got ${typeof v} ${String(v)}`,
    );
  const w = o.maxConcurrentReconciles;
  if (w !== undefined && (typeof w !== 'number' || !Number.isInteger(w)))
    throw bad('maxConcurrentReconciles', w, 'a whole number');
  for (const [what, v] of [
    ['cacheSyncTimeoutMs', o.cacheSyncTimeoutMs],
    ['reconciliationTimeoutMs', o.reconciliationTimeoutMs],
  ] as const) {
    if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v) || v < 0))
      throw bad(what, v, 'a finite number of ms >= 0');
  }
}

/** Whether a thrown value is one of JavaScript's programming errors (what Go would call a panic). @internal */
export function isPanic(err: unknown): boolean {
  return err instanceof Error && PANIC_NAMES.has(err.name);
}

/** Options settable through `withOptions` (controller-runtime `controller.Options`). */
export interface BuilderControllerOptions
  extends Omit<ControllerOptions, 'logger' | 'metrics' | 'queueMetricsProvider'> {
  /** Do not check that the name is unique in the manager (controller-runtime `SkipNameValidation`). @defaultValue false */
  readonly skipNameValidation?: boolean;
}

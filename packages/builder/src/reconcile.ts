import type { Logger } from './logger.js';

/** Names the object to reconcile (controller-runtime `reconcile.Request`). `namespace` is `''` for cluster-scoped objects. */
export interface Request {
  readonly namespace: string;
  readonly name: string;
}

/**
 * What a reconcile asks for next (controller-runtime `reconcile.Result`).
 * - `requeueAfterMs > 0`: forget the failure count and come back after that many ms;
 * - `requeue: true`: come back after the rate limiter's backoff;
 * - neither: done until the next event.
 */
export interface Result {
  readonly requeue?: boolean;
  /** Delay in milliseconds before the next reconcile of this request. */
  readonly requeueAfterMs?: number;
}

/** Per-reconcile context: Go's `context.Context` as a signal, plus a logger and the reconcile ID. */
export interface ReconcileContext {
  /** Aborted when the controller stops. */
  readonly signal: AbortSignal;
  /** Logger bound with `controller`, `namespace`, `name` and `reconcileID`. */
  readonly log: Logger;
  /** Unique per reconcile call. */
  readonly reconcileID: string;
}

/**
 * Reconciler knows how to drive the world toward the desired state of one object (controller-runtime
 * `reconcile.Reconciler`). Thrown errors are logged and the request is retried with backoff, except a
 * {@link TerminalError}, which is logged and not retried.
 */
export interface Reconciler {
  // biome-ignore lint/suspicious/noConfusingVoidType: a reconciler with nothing to ask for may return nothing
  reconcile(ctx: ReconcileContext, req: Request): Promise<Result | undefined | void>;
}

/** Wraps a function as a {@link Reconciler} (controller-runtime `reconcile.Func`). */
export function reconcilerFunc(fn: Reconciler['reconcile']): Reconciler {
  return { reconcile: fn };
}

/** An error that retrying will not fix (controller-runtime `reconcile.TerminalError`). Code `'ERR_TERMINAL'`. */
export class TerminalError extends Error {
  readonly code = 'ERR_TERMINAL' as const;
  override readonly name = 'TerminalError';
}

/** The queue key of a request: `namespace/name` or `name`. */
export function requestKey(req: Request): string {
  return req.namespace ? `${req.namespace}/${req.name}` : req.name;
}

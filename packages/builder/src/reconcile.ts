import {
  type Cached,
  type CacheReader,
  isNotFound,
  type Kind,
  type KubeObject,
  type Reader,
} from '@kubeloop/client';
import type { Logger } from './logger.js';

/**
 * Names the object to reconcile (controller-runtime `reconcile.Request`). `namespace` is `''` for
 * cluster-scoped objects.
 */
export interface Request {
  readonly namespace: string;
  readonly name: string;
  /**
   * The cluster the object lives in, for a multi-cluster controller (multicluster-runtime's
   * `mcreconcile.Request.ClusterName`): the name a provider engaged it under; get it with
   * `mgr.getCluster(req.cluster)`. Absent (or `''`): the manager's own cluster, so single-cluster code is
   * unchanged.
   */
  readonly cluster?: string;
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
  /**
   * Priority of the request when it is queued again by this result (`requeue`, `requeueAfterMs`); absent: the
   * priority it was handed out with (controller-runtime `Result.Priority`). A finite number; only the priority
   * queue uses it. (A thrown error carries no Result: its retry keeps the request's priority.)
   */
  readonly priority?: number;
}

/**
 * A reconciler resolved to something that is not a {@link Result}: not an object, a `requeueAfterMs` that is
 * not a finite number of ms >= 0 (e.g. the string `'1000'` read from YAML or an env var, which would requeue at
 * once and hot-loop), or a `requeue` that is not a boolean. Code `'ERR_INVALID_RESULT'`. The controller treats
 * it as a reconcile error: logged and retried with the rate limiter's backoff. (In controller-runtime the Go
 * types rule these out; a negative `RequeueAfter` is ignored there, here it is refused as the mistake it is.)
 */
export class InvalidResultError extends Error {
  readonly code = 'ERR_INVALID_RESULT' as const;
  override readonly name = 'InvalidResultError';
}

/**
 * The problem with what a reconcile resolved to, as an {@link InvalidResultError}, or `undefined` when it is a
 * valid {@link Result} (or nothing).
 */
export function invalidResult(result: unknown): InvalidResultError | undefined {
  if (result === undefined || result === null) return undefined;
  if (typeof result !== 'object' || Array.isArray(result))
    return new InvalidResultError(`reconcile resolved to ${describe(result)}, not a Result object`);
  const { requeueAfterMs, requeue, priority } = result as {
    requeueAfterMs?: unknown;
    requeue?: unknown;
    priority?: unknown;
  };
  if (
    requeueAfterMs !== undefined &&
    (typeof requeueAfterMs !== 'number' || !Number.isFinite(requeueAfterMs) || requeueAfterMs < 0)
  )
    return new InvalidResultError(
      `Result.requeueAfterMs must be a finite number of ms >= 0, got ${describe(requeueAfterMs)}`,
    );
  if (requeue !== undefined && typeof requeue !== 'boolean')
    return new InvalidResultError(`Result.requeue must be a boolean, got ${describe(requeue)}`);
  if (priority !== undefined && (typeof priority !== 'number' || !Number.isFinite(priority)))
    return new InvalidResultError(`Result.priority must be a finite number, got ${describe(priority)}`);
  return undefined;
}

function describe(v: unknown): string {
  return typeof v === 'string' ? `the string ${JSON.stringify(v)}` : `${typeof v} ${String(v)}`;
}

/** Per-reconcile context: Go's `context.Context` as a signal, plus a logger and the reconcile ID. */
export interface ReconcileContext {
  /** Aborted when the controller stops, or when `reconciliationTimeoutMs` passes. */
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

/** Reconciles one object already read from the cache (controller-runtime `reconcile.ObjectReconciler`). */
export type ObjectReconcileFunc<T> = (
  ctx: ReconcileContext,
  obj: T,
  // biome-ignore lint/suspicious/noConfusingVoidType: nothing to ask for may return nothing
) => Promise<Result | undefined | void>;

/**
 * A {@link Reconciler} that gets the request's object of `kind` through `reader` (usually the manager's
 * cache-backed client) and calls `fn` with it; a request whose object is gone (NotFound) is done without
 * calling `fn` (controller-runtime `reconcile.AsReconciler`). Other read errors are thrown (retried).
 */
export function asReconciler<T extends KubeObject>(
  reader: CacheReader,
  kind: Kind<T>,
  fn: ObjectReconcileFunc<Cached<T>>,
): Reconciler;
/** The same over a live {@link Reader} (e.g. the manager's API reader): `fn` gets the mutable object the server sent. */
export function asReconciler<T extends KubeObject>(
  reader: Reader,
  kind: Kind<T>,
  fn: ObjectReconcileFunc<T>,
): Reconciler;
export function asReconciler<T extends KubeObject>(
  reader: Reader | CacheReader,
  kind: Kind<T>,
  fn: ObjectReconcileFunc<T> | ObjectReconcileFunc<Cached<T>>,
): Reconciler {
  // One body for both overloads: the object is passed through as the reader returned it (frozen from a cache).
  const call = fn as (ctx: ReconcileContext, obj: unknown) => ReturnType<ObjectReconcileFunc<T>>;
  return {
    async reconcile(ctx, req) {
      let obj: unknown;
      try {
        obj = await reader.get(kind, req, { signal: ctx.signal });
      } catch (err) {
        if (isNotFound(err)) return;
        throw err;
      }
      return call(ctx, obj);
    },
  };
}

const TERMINAL = Symbol.for('kubeloop.builder.TerminalError');

/**
 * An error that retrying will not fix (controller-runtime `reconcile.TerminalError`): logged, counted and
 * not requeued. Code `'ERR_TERMINAL'`. Recognised by {@link isTerminalError} (and `instanceof`) also when it
 * comes from another installed copy of this package: it carries a `Symbol.for` brand. Wrap another error
 * with `new TerminalError(msg, { cause })`.
 */
export class TerminalError extends Error {
  readonly code = 'ERR_TERMINAL' as const;
  override readonly name = 'TerminalError';
  readonly [TERMINAL] = true;

  static override [Symbol.hasInstance](value: unknown): boolean {
    // Subclasses keep plain prototype checks; TerminalError itself also accepts other copies' instances.
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class instanceof was asked about (maybe a subclass)
    if (this !== TerminalError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return hasBrand(value);
  }
}

function hasBrand(v: unknown): boolean {
  return typeof v === 'object' && v !== null && (v as { [TERMINAL]?: unknown })[TERMINAL] === true;
}

/**
 * Whether `err` is, or wraps through its `cause` chain, a {@link TerminalError} from any copy of this
 * package (controller-runtime checks `errors.Is(err, reconcile.TerminalError(nil))`).
 */
export function isTerminalError(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; depth < 16 && typeof e === 'object' && e !== null; depth++) {
    if (hasBrand(e)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * The queue key of a request: `namespace/name` or `name`; with a cluster, prefixed by the cluster name and
 * a NUL character (no cluster name or object name contains one), so one key never names two objects.
 */
export function requestKey(req: Request): string {
  const key = req.namespace ? `${req.namespace}/${req.name}` : req.name;
  return req.cluster ? `${req.cluster}\u0000${key}` : key;
}

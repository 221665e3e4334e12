/**
 * @packageDocumentation
 * `@kubeloop/builder` runs controllers: the `Manager` (shared client, cache and runnables; cached reads,
 * live writes; clean stop), the `Controller` (workers over a rate-limited queue, `Result` with
 * `requeue` / `requeueAfterMs`), event handlers and predicates, the fluent
 * `newControllerManagedBy(mgr).for(Pod).complete(r)` and `setupSignalHandler()`. Mirrors
 * controller-runtime's `pkg/manager`, `pkg/controller`, `pkg/builder`, `pkg/handler`, `pkg/predicate`.
 */
export {
  type BuilderControllerOptions,
  ControllerBuilder,
  newControllerManagedBy,
} from './builder.js';
export { Controller, ControllerError, type ControllerOptions } from './controller.js';
export {
  type EventHandler,
  enqueueRequestForObject,
  generationChangedPredicate,
  type Predicate,
  resourceVersionChangedPredicate,
} from './handler.js';
export { discardLogger, errorMessage, type Logger, type NewLoggerOptions, newLogger } from './logger.js';
export { GracefulShutdownTimeoutError, LeaderElectionLostError } from './manager/errors.js';
export { type FieldIndexer, type Manager, type ManagerOptions, newManager } from './manager/manager.js';
export type {
  HTTPServerRunnable,
  LeaderElectionCallbacks,
  LeaderElectorHook,
  Runnable,
} from './manager/runnable.js';
export {
  type ReconcileContext,
  type Reconciler,
  type Request,
  type Result,
  reconcilerFunc,
  requestKey,
  TerminalError,
} from './reconcile.js';
export { SignalHandlerError, setupSignalHandler } from './signals.js';
export { KindSource, type Source } from './source.js';

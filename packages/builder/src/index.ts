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
  type BuilderWatchOptions,
  ControllerBuilder,
  newControllerManagedBy,
  type OwnsOptions,
} from './builder.js';
export {
  Controller,
  ControllerError,
  type ControllerMetricsHook,
  type ControllerOptions,
  type ReconcileResultLabel,
} from './controller.js';
export {
  type CreateEvent,
  type DeleteEvent,
  type EnqueueOptions,
  type EnqueueRequestForOwnerOptions,
  type EventHandler,
  enqueueRequestForObject,
  enqueueRequestForOwner,
  enqueueRequestsFromMapFunc,
  type GenericEvent,
  type HandlerQueue,
  type MapFunc,
  type UpdateEvent,
} from './handler.js';
export { discardLogger, errorMessage, type Logger, type NewLoggerOptions, newLogger } from './logger.js';
export { GracefulShutdownTimeoutError, LeaderElectionLostError } from './manager/errors.js';
export {
  type FieldIndexer,
  type Manager,
  type ManagerControllerOptions,
  type ManagerOptions,
  newManager,
} from './manager/manager.js';
export type {
  HTTPServerRunnable,
  LeaderElectionCallbacks,
  LeaderElectorHook,
  Runnable,
} from './manager/runnable.js';
export {
  and,
  annotationChangedPredicate,
  type GenerationChangedOptions,
  generationChangedPredicate,
  labelChangedPredicate,
  labelSelectorPredicate,
  newPredicateFuncs,
  not,
  or,
  type Predicate,
  resourceVersionChangedPredicate,
} from './predicate.js';
export {
  asReconciler,
  isTerminalError,
  type ObjectReconcileFunc,
  type ReconcileContext,
  type Reconciler,
  type Request,
  type Result,
  reconcilerFunc,
  requestKey,
  TerminalError,
} from './reconcile.js';
export { SignalHandlerError, setupSignalHandler } from './signals.js';
export { ChannelSource, KindSource, type KindSourceOptions, type Source } from './source.js';

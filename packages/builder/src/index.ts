/**
 * @packageDocumentation
 * `@kubeloop/builder` runs controllers: the `Manager` (shared client, cache and runnables; cached reads,
 * live writes; clean stop), the `Controller` (workers over a rate-limited queue, `Result` with
 * `requeue` / `requeueAfterMs`), event handlers and predicates, the fluent
 * `newControllerManagedBy(mgr).for(Pod).complete(r)` and `setupSignalHandler()`. Mirrors
 * controller-runtime's `pkg/manager`, `pkg/controller`, `pkg/builder`, `pkg/handler`, `pkg/predicate`.
 *
 * It is also the facade a controller program imports from (controller-runtime's `ctrl` package): the
 * config loader, the common kinds, the client types and the API error helpers are re-exported below, so
 * `main` needs one import line. Each layer stays importable on its own (`@kubeloop/config`,
 * `@kubeloop/client`, `@kubeloop/cache`, `@kubeloop/workqueue`).
 */

// Facade: what a typical operator's main and reconcilers need from the layers below (controller-runtime
// `ctrl.GetConfigOrDie`, `client.Client`, `apierrors.IsNotFound`, `client.IgnoreNotFound`, `retry.RetryOnConflict`,
// apimachinery `meta.SetStatusCondition`).
export {
  type Client,
  ConfigMap,
  Deployment,
  ignoreNotFound,
  isAlreadyExists,
  isConflict,
  isNotFound,
  type Kind,
  type KubeObject,
  kind,
  metadataOnly,
  Namespace,
  type ObjectKey,
  objectKeyFromObject,
  Pod,
  type Reader,
  retryOnConflict,
  Secret,
  Service,
} from '@kubeloop/client';
export {
  type Condition,
  findStatusCondition,
  isStatusConditionFalse,
  isStatusConditionTrue,
  removeStatusCondition,
  setStatusCondition,
} from '@kubeloop/client/conditions';
export {
  AlreadyOwnedError,
  addFinalizer,
  containsFinalizer,
  createOrPatch,
  createOrUpdate,
  type MutateFn,
  type OperationResult,
  OwnerReferenceError,
  removeFinalizer,
  setControllerReference,
  setOwnerReference,
} from '@kubeloop/client/controllerutil';
export { getConfig, getConfigOrDie, type RestConfig } from '@kubeloop/config';
// The logger interface and the no-op logger live in @kubeloop/core (every layer takes a Logger); they are re-exported
// here because the manager's, the controllers' and the reconcile context's `logger` are of that type, so a project
// that installs only the builder can name it. The pino logger that implements it is the builder's own.
export { discardLogger, type Logger } from '@kubeloop/core';
export {
  type BuilderWatchOptions,
  ControllerBuilder,
  newControllerManagedBy,
  type OwnsOptions,
} from './builder.js';
export { ControllerBuilderBase } from './builder-base.js';
export { type Cluster, type ClusterOptions, newCluster } from './cluster/cluster.js';
export { Controller } from './controller.js';
export {
  type BuilderControllerOptions,
  ControllerError,
  type ControllerMetricsHook,
  type ControllerOptions,
  type ReconcileResultLabel,
} from './controller-options.js';
export { type FinalizerHandlers, finalizer } from './finalizer.js';
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
// Health probes, metrics, events and leader election (builder-ops); the standalone elector is also at
// `@kubeloop/builder/leaderelection`.
export {
  type Checker,
  cacheSyncCheck,
  HealthCheckError,
  ping,
  type SyncingCache,
} from './healthz/index.js';
export { LeaderElectionConfigError } from './leaderelection/errors.js';
export { type NewLoggerOptions, newLogger } from './logger.js';
export { GracefulShutdownTimeoutError, LeaderElectionLostError } from './manager/errors.js';
export { type FieldIndexer, type Manager, newManager } from './manager/manager.js';
export {
  DEFAULT_CACHE_SYNC_TIMEOUT_MS,
  DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT_MS,
  type HealthOptions,
  type LeaderElectionOptions,
  type ManagerCacheOptions,
  type ManagerControllerOptions,
  type ManagerOptions,
  type ManagerWebhookOptions,
  type MetricsOptions,
  type ResolvedHealthOptions,
  type ResolvedLeaderElectionOptions,
  type ResolvedManagerCacheOptions,
  type ResolvedManagerOptions,
  type ResolvedMetricsOptions,
  resolveLeaderElectionOptions,
  resolveManagerOptions,
} from './manager/options.js';
export type {
  HTTPServerRunnable,
  LeaderElectionCallbacks,
  LeaderElectorHook,
  Runnable,
  WarmupRunnable,
} from './manager/runnable.js';
export {
  type ControllerMetrics,
  controllerMetrics,
  metricsRegistry,
  newMetricsRegistry,
} from './metrics/index.js';
export * from './multicluster/index.js';
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
  InvalidResultError,
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
export type { EventType, ObjectReference } from './recorder/event.js';
export {
  EventBroadcaster,
  type EventBroadcasterOptions,
  type EventBroadcasterStats,
  type EventRecorder,
} from './recorder/recorder.js';
export {
  newSharding,
  type ShardAttachment,
  Sharding,
  ShardingConfigError,
  type ShardingOptions,
} from './sharding/index.js';
export { SignalHandlerError, setupSignalHandler } from './signals.js';
export { ChannelSource, KindSource, type KindSourceOptions, type Source } from './source.js';

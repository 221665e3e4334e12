import type { Cache, InformerCacheOptions } from '@kubeloop/cache';
import type { Client, Kind, KubeObject, RESTMapper, Reader, TransportOptions } from '@kubeloop/client';
import type { RestConfig } from '@kubeloop/config';
import type { Registry } from 'prom-client';
import type { BuilderControllerOptions, ControllerOptions } from '../controller-options.js';
import type { Checker } from '../healthz/healthz.js';
import type { RequestHandler } from '../healthz/http-server.js';
import type { ManagerLeaderElectionOptions } from '../leaderelection/manager-elector.js';
import type { Logger } from '../logger.js';
import type { EventBroadcasterOptions, EventRecorder } from '../recorder/recorder.js';
import type { HTTPServerRunnable, LeaderElectorHook, Runnable } from './runnable.js';

/** Options of {@link newManager} (controller-runtime `manager.Options`, the parts this package has). */
export interface ManagerOptions extends ManagerLeaderElectionOptions {
  /** Root logger; components log through children of it. @defaultValue a logger that drops everything */
  readonly logger?: Logger;
  /** Restrict the cache to one namespace (shorthand for `cache.defaultNamespaces: [namespace]`). Absent: all namespaces. */
  readonly namespace?: string;
  /**
   * Options of the manager's informer cache (controller-runtime `manager.Options.Cache`, a `cache.Options`):
   * `defaultNamespaces`, `defaultLabelSelector`, `defaultFieldSelector`, `defaultTransform`, `byObject`,
   * `syncPeriodMs`, `readerFailOnMissingInformer`, `useWatchList`, reflector knobs. `namespace` and
   * `syncPeriodMs` above win over the same settings here.
   */
  readonly cache?: Omit<InformerCacheOptions, 'client' | 'logger'>;
  /**
   * How often every informer re-delivers its cached objects to the handlers (a resync: update events
   * whose old and new object are the same), in ms; 0 disables. Wins over `cache.syncPeriodMs`.
   * @defaultValue the cache's: 10 hours, each informer's period jittered by ±10 % (controller-runtime
   *   `cache.Options.SyncPeriod`)
   */
  readonly syncPeriodMs?: number;
  /** Options of the HTTP transport (limiter, retries). */
  readonly transport?: TransportOptions;
  /** Default field manager for writes through the manager's client. */
  readonly fieldOwner?: string;
  /**
   * How long stopping may take in all, in ms: leader-only runnables, the lease release, the other
   * runnables, the caches and the HTTP servers share it. Past it `start` rejects with
   * {@link GracefulShutdownTimeoutError} and open connections are destroyed. @defaultValue 30000
   */
  readonly gracefulShutdownTimeoutMs?: number;
  /** How long `start` waits for the caches to sync, in ms. @defaultValue 120000 */
  readonly cacheSyncTimeoutMs?: number;
  /**
   * Leader election: when given, leader-only runnables start only once `run` reports this replica leads.
   * Absent: this replica always leads (controller-runtime `LeaderElection: false`).
   */
  readonly leaderElector?: LeaderElectorHook;
  /**
   * Where `/metrics` is served (`":8080"`, `"127.0.0.1:0"`); `"0"` disables. Served on every replica.
   * @defaultValue `"0"` (controller-runtime's default is `":8080"`; off here so that several managers in one
   * process, or tests, never fight over a port)
   */
  readonly metricsBindAddress?: string;
  /**
   * The registry the manager's metrics go to and `/metrics` serves. Pass the process-wide `metricsRegistry` to
   * share it (controller-runtime's global `metrics.Registry`); register your own metrics on
   * `mgr.getMetricsRegistry()`. @defaultValue a new registry of this manager's own (two managers in one process
   * never overwrite each other's series)
   */
  readonly metricsRegistry?: Registry;
  /** More handlers on the metrics server, by path (controller-runtime `Metrics.ExtraHandlers`). */
  readonly metricsExtraHandlers?: Readonly<Record<string, RequestHandler>>;
  /** Where `/healthz` and `/readyz` are served; `"0"` or absent disables (controller-runtime `HealthProbeBindAddress`). */
  readonly healthProbeBindAddress?: string;
  /** @defaultValue `/healthz` */
  readonly livenessEndpointName?: string;
  /** @defaultValue `/readyz` */
  readonly readinessEndpointName?: string;
  /** Options of the event broadcaster behind `getEventRecorderFor` (queue size, series interval, retries). */
  readonly events?: Omit<EventBroadcasterOptions, 'client' | 'logger'>;
  /**
   * Defaults for every controller the builder makes in this manager (controller-runtime
   * `Options.Controller`); `withOptions` overrides them per controller.
   */
  readonly controller?: ManagerControllerOptions;
}

/** Controller defaults of a manager: builder options plus the metrics hooks the manager's metrics set. */
export type ManagerControllerOptions = BuilderControllerOptions &
  Pick<ControllerOptions, 'metrics' | 'queueMetricsProvider'>;

/** FieldIndexer knows how to index a field of a kind for cached `list` field selectors (controller-runtime `client.FieldIndexer`). */
export interface FieldIndexer {
  /**
   * `extract` returns the values an object has for `field`; cached lists may then select on it.
   * @throws StoreError when the field of that kind is already indexed.
   */
  indexField<T extends KubeObject>(
    kind: Kind<T>,
    field: string,
    extract: (obj: T) => readonly string[],
  ): void;
}

/** Manager knows how to own the shared client, cache and runnables of one process (controller-runtime `manager.Manager`). */
export interface Manager {
  /** Reads from the cache, writes (and watches) to the API server — controller-runtime's default client. */
  getClient(): Client;
  /** Reads straight from the API server (no cache). */
  getAPIReader(): Reader;
  getCache(): Cache;
  /** Indexes fields of cached kinds (controller-runtime `GetFieldIndexer`); call before the first read of the kind. */
  getFieldIndexer(): FieldIndexer;
  getRESTMapper(): RESTMapper;
  getLogger(): Logger;
  getConfig(): RestConfig;
  /**
   * Adds a runnable to its group (see {@link Runnable.needLeaderElection}). Before start it waits for its
   * group; after start it starts at once if its group runs (a controller added while the caches sync waits
   * for the sync; a leader-only runnable on a standby waits for the win) — exactly once either way.
   * @throws ControllerError once the manager is stopping.
   */
  add(runnable: Runnable): void;
  /** Adds an HTTP server (probes, metrics): started before the caches, stopped last. @throws ControllerError once stopping. */
  addHTTPServer(server: HTTPServerRunnable): void;
  /**
   * Resolves when this replica may run leader-only work: on winning the election, or right after the
   * caches synced and the non-leader runnables started when there is no leader election. Never resolves
   * on a replica that never leads (controller-runtime `Elected()`).
   */
  elected(): Promise<void>;
  /**
   * Starts, in order: HTTP servers (waiting until they listen), the cache (waiting for its sync, at most
   * `cacheSyncTimeoutMs`), runnables that need no leader election, the leader elector, and — once this
   * replica leads — leader-only runnables. Runs until `signal` aborts or a runnable fails, then stops the
   * groups in reverse order within `gracefulShutdownTimeoutMs` and closes connections.
   * @throws the first runnable error; ControllerError when the cache does not sync or when started twice;
   *   LeaderElectionLostError when the lease is lost; GracefulShutdownTimeoutError when stopping overran.
   */
  start(signal: AbortSignal): Promise<void>;
  /** Defaults for controllers built in this manager (controller-runtime `GetControllerOptions`). */
  getControllerOptions(): ManagerControllerOptions;
  /** Registers a controller name; @throws ControllerError when it is taken (names must be unique). @internal */
  registerControllerName(name: string): void;
  /**
   * Adds a liveness check served on `/healthz` (controller-runtime `AddHealthzCheck`).
   * @throws HealthCheckError when the name is empty, has a `/`, or is taken.
   */
  addHealthzCheck(name: string, check: Checker): void;
  /**
   * Adds a readiness check served on `/readyz` (controller-runtime `AddReadyzCheck`); e.g.
   * `cacheSyncCheck(mgr)`. @throws HealthCheckError as {@link Manager.addHealthzCheck}.
   */
  addReadyzCheck(name: string, check: Checker): void;
  /**
   * A recorder of events.k8s.io/v1 Events reporting as `name` (controller-runtime `GetEventRecorder`);
   * Events are written in the background and flushed when the manager stops.
   */
  getEventRecorderFor(name: string): EventRecorder;
  /** The registry `/metrics` serves; register your own metrics on it. */
  getMetricsRegistry(): Registry;
  /** `host:port` the metrics server listens on, once it does (useful with port 0). */
  metricsServerAddress(): string | undefined;
  /** `host:port` the health probe server listens on, once it does. */
  healthProbeServerAddress(): string | undefined;
  /**
   * Why this manager is not ready yet, or `undefined` once its start sequence is far enough for
   * readiness: the cache started, and — on the leader, or without leader election — every leader-only
   * runnable that reports `hasSynced()` (controllers) has synced its sources. A standby is ready once its
   * caches synced. Used by `cacheSyncCheck(mgr)`. The reason names the controllers not synced and the
   * informers (GVKs, e.g. `ConfigMap.v1`) still syncing.
   */
  readinessPending(): string | undefined;
}

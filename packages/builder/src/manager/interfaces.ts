import type { Cache } from '@kubeloop/cache';
import type { CachedClient, Kind, KubeObject, RESTMapper, Reader } from '@kubeloop/client';
import type { RestConfig } from '@kubeloop/config';
import type { Registry } from 'prom-client';
import type { Checker } from '../healthz/healthz.js';
import type { Logger } from '../logger.js';
import type { EventRecorder } from '../recorder/recorder.js';
import type { ManagerControllerOptions, ResolvedManagerOptions } from './options.js';
import type { HTTPServerRunnable, Runnable } from './runnable.js';

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
  getClient(): CachedClient;
  /** Reads straight from the API server (no cache). */
  getAPIReader(): Reader;
  getCache(): Cache;
  /** Indexes fields of cached kinds (controller-runtime `GetFieldIndexer`); call before the first read of the kind. */
  getFieldIndexer(): FieldIndexer;
  getRESTMapper(): RESTMapper;
  getLogger(): Logger;
  getConfig(): RestConfig;
  /**
   * The options this manager runs with: a frozen copy of what `newManager` got, every default applied
   * (`resolveManagerOptions`). Add-ons read their settings here, e.g. `@kubeloop/webhook` its `webhook`.
   */
  getOptions(): ResolvedManagerOptions;
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
   * `cache.syncTimeoutMs`), runnables that need no leader election, the leader elector, and — once this
   * replica leads — leader-only runnables. Runs until `signal` aborts or a runnable fails, then stops the
   * groups in reverse order within `gracefulShutdownTimeoutMs` and closes connections.
   * @throws the first runnable error; ControllerError when the cache does not sync or when started twice;
   *   LeaderElectionLostError when the lease is lost; GracefulShutdownTimeoutError when stopping overran.
   */
  start(signal: AbortSignal): Promise<void>;
  /** Defaults for controllers built in this manager (controller-runtime `GetControllerOptions`). */
  getControllerOptions(): ManagerControllerOptions;
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

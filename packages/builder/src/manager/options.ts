/**
 * The options of `newManager`, one nested shape per concern, and {@link resolveManagerOptions}, the one place
 * their defaults live. controller-runtime's `manager.Options` names are kept per concern, so a Go reader finds
 * `LeaderElectionID` as `leaderElection.id`, `HealthProbeBindAddress` as `health.bindAddress`,
 * `Metrics.BindAddress` as `metrics.bindAddress` and `Cache.DefaultNamespaces` as `cache.defaultNamespaces`.
 */
import type { InformerCacheOptions } from '@kubeloop/cache';
import type { NewClientOptions } from '@kubeloop/client';
import type { RestConfig } from '@kubeloop/config';
import type { Registry } from 'prom-client';
import type { BuilderControllerOptions, ControllerOptions } from '../controller-options.js';
import type { RequestHandler } from '../healthz/http-server.js';
import {
  DEFAULT_LEASE_DURATION_MS,
  DEFAULT_RENEW_DEADLINE_MS,
  DEFAULT_RETRY_PERIOD_MS,
} from '../leaderelection/defaults.js';
import { LeaderElectionConfigError } from '../leaderelection/errors.js';
import { discardLogger, type Logger } from '../logger.js';
import type { EventBroadcasterOptions } from '../recorder/recorder.js';
import type { LeaderElectorHook } from './runnable.js';

/**
 * Leader election of a manager (controller-runtime `manager.Options.LeaderElection*`, durations in ms). Giving
 * this object turns leader election on: leader-only runnables start only while this replica holds the
 * `coordination.k8s.io/v1` Lease `namespace/id`. Absent: this replica always leads (controller-runtime
 * `LeaderElection: false`).
 */
export interface LeaderElectionOptions {
  /** Name of the Lease (controller-runtime `LeaderElectionID`). Required, not empty. */
  readonly id: string;
  /** Namespace of the Lease (`LeaderElectionNamespace`). @defaultValue the in-cluster namespace file's content */
  readonly namespace?: string;
  /** This replica's identity, written as the Lease's `holderIdentity`. @defaultValue `<hostname>_<uuid>` */
  readonly identity?: string;
  /** Labels put on the Lease when this replica creates it (`LeaderElectionLabels`). */
  readonly labels?: Readonly<Record<string, string>>;
  /**
   * Give the Lease up when the manager stops, after every leader-only runnable has stopped, so a standby takes
   * over at its next attempt instead of after expiry (`LeaderElectionReleaseOnCancel`). @defaultValue false
   */
  readonly releaseOnCancel?: boolean;
  /** Config for the Lease requests: another cluster, other credentials (`LeaderElectionConfig`). @defaultValue the manager's config */
  readonly restConfig?: RestConfig;
  /** How long others wait after the last renew they saw before taking the Lease, in ms (`LeaseDuration`). @defaultValue 15000 */
  readonly leaseDurationMs?: number;
  /** The leader gives up when it has not renewed for this long, in ms (`RenewDeadline`). @defaultValue 10000 */
  readonly renewDeadlineMs?: number;
  /** Pause between acquire and renew attempts, in ms (`RetryPeriod`). @defaultValue 2000 */
  readonly retryPeriodMs?: number;
  /**
   * Campaign with this instead of the Lease elector (a test double, another kind of lock); the Lease fields
   * above are then unused. @defaultValue a `LeaderElector` on a `LeaseLock` built from the fields above
   */
  readonly elector?: LeaderElectorHook;
}

/** Where and how `/metrics` is served (controller-runtime `manager.Options.Metrics`, a `metricsserver.Options`). */
export interface MetricsOptions {
  /**
   * Where `/metrics` is served (`":8080"`, `"127.0.0.1:0"`); `"0"` disables. Served on every replica.
   * @defaultValue `"0"` (controller-runtime's default is `":8080"`; off here so that several managers in one
   *   process, or tests, never fight over a port)
   */
  readonly bindAddress?: string;
  /**
   * The registry the manager's metrics go to and `/metrics` serves. Pass the process-wide `metricsRegistry` to
   * share it (controller-runtime's global `metrics.Registry`); register your own metrics on
   * `mgr.getMetricsRegistry()`. @defaultValue a new registry of this manager's own (two managers in one process
   *   never overwrite each other's series)
   */
  readonly registry?: Registry;
  /** More handlers on the metrics server, by path (controller-runtime `Metrics.ExtraHandlers`). */
  readonly extraHandlers?: Readonly<Record<string, RequestHandler>>;
  /**
   * Serve over HTTPS (controller-runtime `SecureServing`) with the PEM certificate `certDir/certName` and key
   * `certDir/keyName`, read when the server starts. @defaultValue false
   */
  readonly secureServing?: boolean;
  /** Directory of the serving certificate and key (controller-runtime `CertDir`). @defaultValue `/tmp/k8s-metrics-server/serving-certs` */
  readonly certDir?: string;
  /** @defaultValue `tls.crt` */
  readonly certName?: string;
  /** @defaultValue `tls.key` */
  readonly keyName?: string;
  /**
   * Let a request through only when its bearer token passes a TokenReview and its user may `get` the path as
   * a non-resource URL by a SubjectAccessReview (controller-runtime `FilterProvider:
   * filters.WithAuthenticationAndAuthorization`): 401 without a valid token, 403 without the permission. Covers
   * every path of the metrics server (`/metrics`, `/debug/cache`, profiling, extra handlers). The manager's
   * credentials need `create` on `tokenreviews` and `subjectaccessreviews`. Use with `secureServing`, so tokens
   * do not cross the network in clear. @defaultValue false
   */
  readonly authenticationAndAuthorization?: boolean;
  /**
   * Serve `/debug/pprof/profile?seconds=N` (a CPU profile, `.cpuprofile` JSON, via `node:inspector`) and
   * `/debug/pprof/heap` (a V8 heap snapshot) on the metrics server, behind its filter. @defaultValue false
   */
  readonly profiling?: boolean;
}

/** Where the liveness and readiness probes are served (controller-runtime `HealthProbeBindAddress`, `*EndpointName`). */
export interface HealthOptions {
  /** Where `/healthz` and `/readyz` are served; `"0"` disables (`HealthProbeBindAddress`). @defaultValue `"0"` */
  readonly bindAddress?: string;
  /** Path of the liveness endpoint (`LivenessEndpointName`). @defaultValue `/healthz` */
  readonly livenessEndpointName?: string;
  /** Path of the readiness endpoint (`ReadinessEndpointName`). @defaultValue `/readyz` */
  readonly readinessEndpointName?: string;
}

/**
 * The settings of the manager's webhook server that a manager user chooses (controller-runtime
 * `webhook.Options`: `Host`/`Port` as one bind address, `CertDir`, `CertName`, `KeyName`). `@kubeloop/webhook`'s
 * `getWebhookServer(mgr)` starts from these; its `WebhookServerOptions` extends this shape.
 */
export interface ManagerWebhookOptions {
  /** `host:port` to listen on; `"0"` disables. @defaultValue `":9443"` (applied by the webhook server) */
  readonly bindAddress?: string;
  /** Directory of the serving certificate and key. @defaultValue `/tmp/k8s-webhook-server/serving-certs` */
  readonly certDir?: string;
  /** File name of the serving certificate in `certDir`. @defaultValue `tls.crt` */
  readonly certName?: string;
  /** File name of the serving key in `certDir`. @defaultValue `tls.key` */
  readonly keyName?: string;
}

/**
 * Options of the manager's informer cache (controller-runtime `manager.Options.Cache`, a `cache.Options`):
 * `defaultNamespaces`, `defaultLabelSelector`, `defaultFieldSelector`, `defaultTransform`, `byObject`,
 * `syncPeriodMs`, `readerFailOnMissingInformer`, `useWatchList`, reflector knobs; plus how long the manager
 * waits for the first sync.
 */
export type ManagerCacheOptions = Omit<
  InformerCacheOptions,
  'client' | 'logger' | 'namespace' | 'transform' | 'resyncPeriodMs'
> & {
  /**
   * How long `start` waits for the caches to sync, in ms on the cache's `clock` (a test's `FakeClock` decides
   * when it runs out), before it fails with a `ControllerError` (controller-runtime
   * `Controller.CacheSyncTimeout`, here for the manager's cache). @defaultValue 120000
   */
  readonly syncTimeoutMs?: number;
};

/** Controller defaults of a manager: builder options plus the metrics hooks the manager's metrics set. */
export type ManagerControllerOptions = BuilderControllerOptions &
  Pick<ControllerOptions, 'metrics' | 'queueMetricsProvider'>;

/** Options of `newManager` (controller-runtime `manager.Options`, the parts this package has). */
export interface ManagerOptions {
  /** Root logger; components log through children of it. @defaultValue a logger that drops everything */
  readonly logger?: Logger;
  /**
   * Options of the manager's live client (controller-runtime `Options.Client`): `transport` (limiter, retries),
   * `fieldOwner` (default field manager of writes), `restMapper`, `maxWatchEventBytes`. The transport logs
   * through the manager's logger unless `transport.logger` says otherwise.
   */
  readonly client?: NewClientOptions;
  /** Options of the informer cache (controller-runtime `Options.Cache`). */
  readonly cache?: ManagerCacheOptions;
  /** Leader election on a Lease; absent, this replica always leads. */
  readonly leaderElection?: LeaderElectionOptions;
  /** The metrics server and registry. */
  readonly metrics?: MetricsOptions;
  /** The health probe server. */
  readonly health?: HealthOptions;
  /** The webhook server `@kubeloop/webhook` adds to this manager (controller-runtime `Options.WebhookServer`). */
  readonly webhook?: ManagerWebhookOptions;
  /** Options of the event broadcaster behind `getEventRecorderFor` (queue size, series interval, retries). */
  readonly events?: Omit<EventBroadcasterOptions, 'client' | 'logger'>;
  /**
   * Defaults for every controller the builder makes in this manager (controller-runtime
   * `Options.Controller`); `withOptions` overrides them per controller.
   */
  readonly controller?: ManagerControllerOptions;
  /**
   * How long stopping may take in all, in ms: leader-only runnables, the lease release, the other
   * runnables, the caches and the HTTP servers share it. Past it `start` rejects with a
   * `GracefulShutdownTimeoutError` and open connections are destroyed (`GracefulShutdownTimeout`).
   * @defaultValue 30000
   */
  readonly gracefulShutdownTimeoutMs?: number;
}

/** {@link LeaderElectionOptions} with every default applied (see {@link resolveManagerOptions}). */
export interface ResolvedLeaderElectionOptions {
  readonly id: string;
  /** `undefined`: read from the in-cluster namespace file when the Lease lock is made. */
  readonly namespace: string | undefined;
  /** `undefined`: `<hostname>_<uuid>`, made when the Lease lock is made. */
  readonly identity: string | undefined;
  readonly labels: Readonly<Record<string, string>>;
  readonly releaseOnCancel: boolean;
  /** `undefined`: the manager's config. */
  readonly restConfig: RestConfig | undefined;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  /** `undefined`: the Lease elector. */
  readonly elector: LeaderElectorHook | undefined;
}

/** {@link MetricsOptions} with every default applied. */
export interface ResolvedMetricsOptions {
  readonly bindAddress: string;
  readonly secureServing: boolean;
  readonly certDir: string;
  readonly certName: string;
  readonly keyName: string;
  readonly authenticationAndAuthorization: boolean;
  readonly profiling: boolean;
  /** `undefined`: the manager makes a registry of its own. */
  readonly registry: Registry | undefined;
  readonly extraHandlers: Readonly<Record<string, RequestHandler>>;
}

/** {@link HealthOptions} with every default applied. */
export type ResolvedHealthOptions = Required<HealthOptions>;

/** {@link ManagerCacheOptions} with the manager's default applied (the cache defaults the rest itself). */
export type ResolvedManagerCacheOptions = ManagerCacheOptions & { readonly syncTimeoutMs: number };

/**
 * {@link ManagerOptions} with every default applied, frozen: what `newManager` runs with and
 * `Manager.getOptions()` returns.
 */
export interface ResolvedManagerOptions {
  readonly logger: Logger;
  readonly client: NewClientOptions;
  readonly cache: ResolvedManagerCacheOptions;
  /** `undefined`: no leader election (this replica always leads). */
  readonly leaderElection: ResolvedLeaderElectionOptions | undefined;
  readonly metrics: ResolvedMetricsOptions;
  readonly health: ResolvedHealthOptions;
  readonly webhook: ManagerWebhookOptions;
  readonly events: Omit<EventBroadcasterOptions, 'client' | 'logger'>;
  readonly controller: ManagerControllerOptions;
  readonly gracefulShutdownTimeoutMs: number;
}

/** The manager's default graceful shutdown timeout, in ms (controller-runtime's 30 s). */
export const DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT_MS = 30_000;
/** How long the manager waits for its cache to sync by default, in ms (controller-runtime's 2 min). */
export const DEFAULT_CACHE_SYNC_TIMEOUT_MS = 120_000;

/**
 * `options` with every default applied, copied and frozen (nested objects too; loggers, registries, clients
 * and other live objects are kept by reference), so a caller mutating its options object afterwards changes
 * nothing. Defaults follow controller-runtime's `setOptionsDefaults`, except that the metrics and probe
 * servers are off (`"0"`) unless an address is given.
 * @throws LeaderElectionConfigError when `leaderElection.id` is empty; a `RangeError` naming the field when a
 *   duration is not a finite number of ms >= 0.
 */
export function resolveManagerOptions(options: ManagerOptions = {}): ResolvedManagerOptions {
  const logger = options.logger ?? discardLogger;
  const cache = options.cache ?? {};
  const metrics = options.metrics ?? {};
  const health = options.health ?? {};
  return Object.freeze({
    logger,
    client: Object.freeze({
      ...options.client,
      transport: Object.freeze({
        logger: logger.child({ component: 'client' }),
        ...options.client?.transport,
      }),
    }),
    cache: Object.freeze({
      ...cache,
      syncTimeoutMs: duration('cache.syncTimeoutMs', cache.syncTimeoutMs, DEFAULT_CACHE_SYNC_TIMEOUT_MS),
    }),
    leaderElection: options.leaderElection && resolveLeaderElectionOptions(options.leaderElection),
    metrics: Object.freeze({
      bindAddress: metrics.bindAddress ?? '0',
      secureServing: metrics.secureServing ?? false,
      certDir: metrics.certDir ?? '/tmp/k8s-metrics-server/serving-certs',
      certName: metrics.certName ?? 'tls.crt',
      keyName: metrics.keyName ?? 'tls.key',
      authenticationAndAuthorization: metrics.authenticationAndAuthorization ?? false,
      profiling: metrics.profiling ?? false,
      registry: metrics.registry,
      extraHandlers: Object.freeze({ ...metrics.extraHandlers }),
    }),
    health: Object.freeze({
      bindAddress: health.bindAddress ?? '0',
      livenessEndpointName: health.livenessEndpointName ?? '/healthz',
      readinessEndpointName: health.readinessEndpointName ?? '/readyz',
    }),
    webhook: Object.freeze({ ...options.webhook }),
    events: Object.freeze({ ...options.events }),
    controller: Object.freeze({ ...options.controller }),
    gracefulShutdownTimeoutMs: duration(
      'gracefulShutdownTimeoutMs',
      options.gracefulShutdownTimeoutMs,
      DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT_MS,
    ),
  });
}

/**
 * `options` with the defaults of controller-runtime's manager applied (15 s lease, 10 s renew deadline, 2 s
 * retry period), frozen. The durations and their relations (lease > renew deadline > 1.2 × retry period) are
 * checked by the `LeaderElector` that uses them, which throws a `LeaderElectionConfigError`.
 * @throws LeaderElectionConfigError when `id` is empty.
 */
export function resolveLeaderElectionOptions(options: LeaderElectionOptions): ResolvedLeaderElectionOptions {
  if (!options.id) {
    throw new LeaderElectionConfigError('leaderElection.id (the Lease name) must be set');
  }
  return Object.freeze({
    id: options.id,
    namespace: options.namespace,
    identity: options.identity,
    labels: Object.freeze({ ...options.labels }),
    releaseOnCancel: options.releaseOnCancel ?? false,
    restConfig: options.restConfig,
    leaseDurationMs: options.leaseDurationMs ?? DEFAULT_LEASE_DURATION_MS,
    renewDeadlineMs: options.renewDeadlineMs ?? DEFAULT_RENEW_DEADLINE_MS,
    retryPeriodMs: options.retryPeriodMs ?? DEFAULT_RETRY_PERIOD_MS,
    elector: options.elector,
  });
}

/** `value` or `fallback`, checked to be a finite number of ms >= 0. @throws RangeError naming `field`. */
function duration(field: string, value: number | undefined, fallback: number): number {
  const ms = value ?? fallback;
  if (!Number.isFinite(ms) || ms < 0) {
    throw new RangeError(`${field} must be a finite number of ms >= 0, got ${String(value)}`);
  }
  return ms;
}

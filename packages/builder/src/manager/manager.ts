import type { Cache, InformerCache } from '@kubeloop/cache';
import type { ApiClient, CachedClient, RESTMapper, Reader } from '@kubeloop/client';
import type { DelegatingClient } from '@kubeloop/client/apiutil';
import type { RestConfig } from '@kubeloop/config';
import { onAbort } from '@kubeloop/core';
import type { Registry } from 'prom-client';
import { type Cluster, ClusterImpl } from '../cluster/cluster.js';
import { ControllerError } from '../controller-options.js';
import { type Checker, HealthProbeServer } from '../healthz/healthz.js';
import { settledBefore, signalWithTimeout, whenAborted } from '../internal-signals.js';
import { managerLeaderElector } from '../leaderelection/manager-elector.js';
import type { Logger } from '../logger.js';
import { registerCacheMetrics } from '../metrics/cache-metrics.js';
import { DEBUG_CACHE_PATH, debugCacheHandler, type MemberCache } from '../metrics/debug-cache.js';
import { withAuthenticationAndAuthorization } from '../metrics/filters.js';
import { type ManagerMetrics, managerMetrics } from '../metrics/manager-metrics.js';
import { profilingHandlers } from '../metrics/profiling.js';
import { newMetricsRegistry } from '../metrics/registry.js';
import { MetricsServer, readServingCertificate } from '../metrics/server.js';
import type { EventRecorder } from '../recorder/recorder.js';
import { GracefulShutdownTimeoutError, LeaderElectionLostError } from './errors.js';
import type { FieldIndexer, Manager } from './interfaces.js';
import {
  type ManagerControllerOptions,
  type ManagerOptions,
  type ResolvedManagerOptions,
  resolveManagerOptions,
} from './options.js';
import type { HTTPServerRunnable, LeaderElectorHook, Runnable, WarmupRunnable } from './runnable.js';
import { RunnableGroup } from './runnable-group.js';

export type { FieldIndexer, Manager } from './interfaces.js';

/** The implementation behind {@link newManager}; the multi-cluster manager extends it. @internal */
export class ControllerManager implements Manager {
  readonly #config: RestConfig;
  readonly #cluster: ClusterImpl;
  readonly #options: ResolvedManagerOptions;
  readonly #log: Logger;
  readonly #live: ApiClient;
  readonly #cache: InformerCache;
  readonly #client: DelegatingClient;
  readonly #stop = new AbortController();
  readonly #http: RunnableGroup;
  readonly #caches: RunnableGroup;
  readonly #others: RunnableGroup;
  readonly #leaderOnly: RunnableGroup;
  /** Warmups of leader-only runnables (controller-runtime's `warmup` group), run before the election. */
  readonly #warmups: RunnableGroup;
  readonly #elected: Promise<void>;
  #markElected!: () => void;
  #started = false;
  #firstError: unknown;
  readonly #metrics: ManagerMetrics;
  readonly #probes: HealthProbeServer;
  readonly #metricsServer: MetricsServer;
  readonly #elector: LeaderElectorHook | undefined;
  readonly #ownsRegistry: boolean;
  readonly #releaseCacheMetrics: () => void;
  readonly #syncing: Array<{ readonly name: string; hasSynced(): boolean }> = [];
  #campaigning = false;
  #leading = false;

  /**
   * @throws LeaderElectionConfigError or BindAddressError for bad options, RangeError for a negative or
   *   non-finite duration, CacheOptionsError for bad cache options.
   */
  constructor(config: RestConfig, options: ManagerOptions) {
    // Resolved and frozen once: a caller changing its options object later changes nothing here.
    const o = resolveManagerOptions(options);
    this.#config = config;
    this.#options = o;
    this.#log = o.logger;
    // The manager is built on a Cluster of its own (controller-runtime's manager embeds a cluster.Cluster):
    // its client, cache and RESTMapper; the manager runs the cache in its caches group and closes the
    // connections at the end of its own shutdown.
    this.#cluster = new ClusterImpl(config, {
      logger: this.#log,
      client: o.client,
      cache: o.cache,
      events: o.events,
    });
    this.#live = this.#cluster.live;
    this.#cache = this.#cluster.cache;
    this.#client = this.#cluster.client;
    const onError = (err: unknown) => this.#fail(err);
    this.#http = new RunnableGroup('http servers', onError);
    this.#caches = new RunnableGroup('caches', onError);
    this.#others = new RunnableGroup('others', onError);
    this.#leaderOnly = new RunnableGroup('leader election', onError);
    this.#warmups = new RunnableGroup('warmup', onError);
    this.#elected = new Promise<void>((resolve) => {
      this.#markElected = resolve;
    });
    // One registry per manager unless one is given (the process-wide `metricsRegistry` is the opt-in): two
    // managers in one process — a leader and a standby, two clusters — must not overwrite each other's series
    // (a standby's leader_election_master_status 0 replaced the leader's 1 on the shared registry).
    this.#ownsRegistry = o.metrics.registry === undefined;
    this.#metrics = managerMetrics(o.metrics.registry ?? newMetricsRegistry());
    this.#releaseCacheMetrics = registerCacheMetrics(this.#metrics.registry, this.#cache);
    this.#elector =
      o.leaderElection &&
      managerLeaderElector(config, o.leaderElection, {
        logger: this.#log,
        metrics: this.#metrics.leaderElection,
      });
    this.#probes = new HealthProbeServer({
      ...o.health,
      logger: this.#log.child({ component: 'health-probes' }),
    });
    this.#metricsServer = new MetricsServer({
      bindAddress: o.metrics.bindAddress,
      registry: this.#metrics.registry,
      // The cache's state as JSON beside /metrics; a handler the user gives for the same path wins.
      extraHandlers: {
        [DEBUG_CACHE_PATH]: debugCacheHandler(this.#cache, () => this.memberCaches()),
        ...(o.metrics.profiling ? profilingHandlers() : {}),
        ...o.metrics.extraHandlers,
      },
      ...(o.metrics.secureServing
        ? { tls: () => readServingCertificate(o.metrics.certDir, o.metrics.certName, o.metrics.keyName) }
        : {}),
      ...(o.metrics.authenticationAndAuthorization
        ? {
            filter: withAuthenticationAndAuthorization(this.#live, this.#log.child({ component: 'metrics' })),
          }
        : {}),
      logger: this.#log.child({ component: 'metrics' }),
    });
    for (const server of [this.#probes, this.#metricsServer]) {
      if (server.enabled) this.addHTTPServer(server);
    }
    const syncTimeoutMs = o.cache.syncTimeoutMs;
    this.#caches.add({
      start: (signal) => this.#cache.start(signal),
      ready: async (signal) => {
        // On the cache's clock, so a test with a fake one decides when the wait runs out.
        const wait = signalWithTimeout(signal, syncTimeoutMs, o.cache.clock);
        try {
          // Rejects with InformerSyncError (naming the kind, its error as cause) when an informer died.
          const synced = await this.#cache.waitForCacheSync(wait.signal);
          if (!synced && !signal.aborted) {
            const why = this.#cache.syncError();
            throw new ControllerError(
              `timed out after ${syncTimeoutMs} ms waiting for the cache to sync${why ? `: ${why.message}` : ''}`,
              { cause: why },
            );
          }
        } finally {
          wait.clear();
        }
      },
    });
  }

  getClient(): CachedClient {
    return this.#client;
  }
  getAPIReader(): Reader {
    return this.#live;
  }
  getCache(): Cache {
    return this.#cache;
  }
  getFieldIndexer(): FieldIndexer {
    return this.#cache;
  }
  /** The caches of other clusters `/debug/cache` lists after the manager's own (a multi-cluster manager's). @internal */
  protected memberCaches(): readonly MemberCache[] {
    return [];
  }
  getRESTMapper(): RESTMapper {
    return this.#live.restMapper;
  }
  getLogger(): Logger {
    return this.#log;
  }
  getConfig(): RestConfig {
    return this.#config;
  }
  getOptions(): ResolvedManagerOptions {
    return this.#options;
  }
  elected(): Promise<void> {
    return this.#elected;
  }
  getControllerOptions(): ManagerControllerOptions {
    return {
      metrics: this.#metrics.controller,
      queueMetricsProvider: this.#metrics.queue,
      ...this.#options.controller,
    };
  }
  addHealthzCheck(name: string, check: Checker): void {
    this.#probes.addHealthzCheck(name, check);
  }
  addReadyzCheck(name: string, check: Checker): void {
    this.#probes.addReadyzCheck(name, check);
  }
  getEventRecorderFor(name: string): EventRecorder {
    return this.#cluster.getEventRecorderFor(name);
  }
  /** The cluster the manager is built on (name `''`). */
  getLocalCluster(): Cluster {
    return this.#cluster;
  }
  getMetricsRegistry(): Registry {
    return this.#metrics.registry;
  }
  metricsServerAddress(): string | undefined {
    return this.#metricsServer.address();
  }
  healthProbeServerAddress(): string | undefined {
    return this.#probes.address();
  }
  readinessPending(): string | undefined {
    if (!this.#cache.isStarted()) return 'the cache has not started';
    if (this.#elector && this.#campaigning && !this.#leading) return undefined; // a standby
    // Name the informers (GVKs) still syncing, so a probe says which kind holds readiness back.
    const unsynced = this.#cache.unsyncedInformers();
    const informers = unsynced.length > 0 ? `; informers not synced: ${unsynced.join(', ')}` : '';
    if (!this.#leaderOnly.started) return `the manager has not started its controllers${informers}`;
    const waiting = this.#syncing.filter((r) => !r.hasSynced()).map((r) => r.name);
    return waiting.length > 0 ? `not synced: ${waiting.join(', ')}${informers}` : undefined;
  }

  add(runnable: Runnable): void {
    this.#refuseWhenStopping('runnable');
    const r = runnable as Runnable & { hasSynced?: () => boolean; name?: unknown };
    if (runnable.needLeaderElection?.() !== false && typeof r.hasSynced === 'function') {
      const name = typeof r.name === 'string' ? r.name : 'runnable';
      this.#syncing.push({ name, hasSynced: () => r.hasSynced?.() ?? true });
    }
    const leaderOnly = runnable.needLeaderElection?.() !== false;
    const group = leaderOnly ? this.#leaderOnly : this.#others;
    group.add({ start: (signal) => runnable.start(signal) });
    const warm = (runnable as Partial<WarmupRunnable>).warmup;
    if (leaderOnly && typeof warm === 'function') this.#warmups.add({ start: (s) => warm.call(runnable, s) });
  }

  addHTTPServer(server: HTTPServerRunnable): void {
    this.#refuseWhenStopping('HTTP server');
    this.#http.add({
      start: (signal) => server.start(signal),
      ready: server.ready && ((signal: AbortSignal) => server.ready?.(signal) ?? Promise.resolve()),
    });
  }

  #refuseWhenStopping(what: string): void {
    if (this.#started && this.#stop.signal.aborted) {
      throw new ControllerError(`can not add a ${what}: the manager is stopping`);
    }
  }

  #fail(err: unknown): void {
    // A runnable that rejects with an AbortError once the manager is stopping was just told to stop.
    if (this.#stop.signal.aborted && (err as { name?: unknown })?.name === 'AbortError') {
      this.#log.debug({ err }, 'runnable ended with an abort while stopping');
      return;
    }
    if (this.#firstError === undefined && !this.#stop.signal.aborted) {
      this.#log.error({ err }, 'runnable failed, stopping the manager');
    }
    this.#firstError ??= err;
    this.#stop.abort();
  }

  async start(signal: AbortSignal): Promise<void> {
    if (this.#started) throw new ControllerError('the manager was already started');
    this.#started = true;
    const stop = this.#stop;
    const offCaller = onAbort(signal, () => stop.abort());
    this.#log.info({}, 'Starting manager');
    // Node exits once nothing holds its event loop, and the stack's own timers are unref'd on purpose. A
    // running manager keeps the process alive, as Go's blocking mgr.Start keeps main running: a standby
    // replica that only campaigns for the lease has no open socket and would otherwise exit silently.
    const keepAlive = setInterval(() => {}, 1 << 30);
    const elector = this.#elector;
    const electorStop = new AbortController();
    let electorRun: Promise<void> | undefined;
    let leaderStopped = false;
    let leading = false;
    try {
      for (const group of [this.#http, this.#caches, this.#others]) {
        if (stop.signal.aborted) break;
        await group.start(stop.signal);
      }
      // Before campaigning, not waited for: a standby warms its controllers' informers while it waits.
      if (!stop.signal.aborted) void this.#warmups.start(stop.signal);
      if (!stop.signal.aborted) {
        if (elector) {
          this.#campaigning = true;
          electorRun = elector
            .run(electorStop.signal, {
              onStartedLeading: () => {
                if (leading || stop.signal.aborted) return;
                leading = true;
                this.#leading = true;
                this.#log.info({}, 'became leader, starting leader-only runnables');
                this.#markElected();
                void this.#leaderOnly.start(stop.signal);
              },
              onStoppedLeading: () => {
                if (!leading) return;
                leading = false;
                if (!stop.signal.aborted) this.#fail(new LeaderElectionLostError('leader election lost'));
              },
              mayRelease: () => leaderStopped,
            })
            .catch((err: unknown) => this.#fail(err));
        } else {
          this.#markElected();
          void this.#leaderOnly.start(stop.signal);
        }
        await whenAborted(stop.signal).promise;
      }
    } finally {
      offCaller();
      stop.abort();
      await this.#shutdown(
        electorStop,
        () => electorRun,
        (ok) => {
          leaderStopped = ok;
        },
      );
      clearInterval(keepAlive);
      // A registry of its own is this manager's alone: stop feeding it (a shared one may serve others).
      if (this.#ownsRegistry) this.#metrics.release();
      this.#releaseCacheMetrics();
    }
    if (this.#firstError !== undefined) throw this.#firstError;
  }

  /** Stops the groups in reverse start order within the graceful shutdown timeout, then closes connections. */
  async #shutdown(
    electorStop: AbortController,
    electorRun: () => Promise<void> | undefined,
    setLeaderStopped: (ok: boolean) => void,
  ): Promise<void> {
    this.#log.info({}, 'Stopping and waiting for runnables');
    const graceMs = this.#options.gracefulShutdownTimeoutMs;
    const deadline = signalWithTimeout(new AbortController().signal, graceMs);
    try {
      const leaderOk = await this.#leaderOnly.stop(deadline.signal);
      setLeaderStopped(leaderOk);
      electorStop.abort();
      const run = electorRun();
      let electorOk = true;
      if (run) electorOk = await settledBefore(run, deadline.signal);
      let ok = leaderOk && electorOk;
      for (const group of [this.#warmups, this.#others, this.#caches, this.#http]) {
        ok = (await group.stop(deadline.signal)) && ok;
      }
      // Events recorded until now are written before the connections close (controller-runtime flushes
      // the event broadcaster during its stop procedure).
      await this.#cluster.flushEvents(deadline.signal);
      // Past the grace period (or once it passes while closing), connections are destroyed, not drained.
      if (!(await this.#cluster.close(deadline.signal))) ok = false;
      if (!ok) {
        this.#log.error(
          { timeoutMs: graceMs },
          'runnables did not stop within the graceful shutdown timeout',
        );
        this.#firstError ??= new GracefulShutdownTimeoutError(
          `failed waiting for all runnables to end within the graceful shutdown timeout of ${graceMs} ms`,
        );
      }
    } finally {
      deadline.clear();
      this.#log.info({}, 'Manager stopped');
    }
  }
}

/**
 * A manager for `config` (controller-runtime `ctrl.NewManager`): one client made by `newClient` (pooled
 * transport, lazy RESTMapper), an informer cache and a client whose reads go to the cache and writes to
 * the API server.
 */
export function newManager(config: RestConfig, options: ManagerOptions = {}): Manager {
  return new ControllerManager(config, options);
}

import { InformerCache } from '@kubeloop/cache';
import type { RestConfig } from '@kubeloop/config';
import { onAbort } from '@kubeloop/core';
import { Gauge } from 'prom-client';
import type { Cluster } from '../cluster/cluster.js';
import { ControllerError } from '../controller-options.js';
import { whenAborted } from '../internal-signals.js';
import type { Manager } from '../manager/interfaces.js';
import { ControllerManager } from '../manager/manager.js';
import type { ManagerOptions } from '../manager/options.js';
import { registerCacheMetrics } from '../metrics/cache-metrics.js';
import type { MemberCache } from '../metrics/debug-cache.js';
import {
  type Aware,
  anySignal,
  ClusterEngageError,
  ClusterNotFoundError,
  isValidClusterName,
  type Provider,
} from './provider.js';

/** Options of {@link newMultiClusterManager}: the manager's options and the provider of the clusters. */
export interface MultiClusterManagerOptions extends ManagerOptions {
  /** Engages and disengages the member clusters; absent: only clusters engaged by hand (`mgr.engage`). */
  readonly provider?: Provider;
}

/** How one engaged cluster is doing (for per-cluster readiness; the manager's own readiness ignores them). */
export interface ClusterStatus {
  readonly name: string;
  /** Whether its cache has synced every informer created so far. */
  readonly synced: boolean;
  /** Why not, when not (not started, informers not synced and their last error). */
  readonly reason?: string;
  /** Local ms since the epoch when it was engaged. */
  readonly engagedAt: number;
}

/**
 * Something that acts per engaged cluster (a multi-cluster controller): told of each cluster while it runs,
 * with a signal aborted when the cluster is disengaged or the hook stops. Not exported from the package.
 */
export interface ClusterHook {
  engage(name: string, cluster: Cluster, signal: AbortSignal): void;
}

/**
 * A manager over many clusters (multicluster-runtime `mcmanager.Manager`): the manager of the management
 * cluster (its own, named `''`) plus the clusters a {@link Provider} engages at runtime. Multi-cluster
 * controllers (`newMultiClusterControllerManagedBy`) run per engaged cluster and get requests whose
 * `cluster` names it; a reconciler reaches the cluster with `mgr.getCluster(req.cluster)`.
 */
export interface MultiClusterManager extends Manager, Aware {
  /**
   * The engaged cluster `name`, or the manager's own cluster for `''` / `undefined`.
   * @throws ClusterNotFoundError when no cluster of that name is engaged (it may have been disengaged).
   */
  getCluster(name: string | undefined): Cluster;
  /** The manager's own (management) cluster. */
  getLocalCluster(): Cluster;
  /** The names of the engaged clusters, sorted. */
  clusterNames(): string[];
  /** How each engaged cluster is doing (per-cluster readiness), sorted by name. */
  clusterStatus(): ClusterStatus[];
}

interface Engaged {
  readonly name: string;
  readonly cluster: Cluster;
  readonly stop: AbortController;
  readonly engagedAt: number;
  run?: Promise<void>;
}

class MultiClusterControllerManager extends ControllerManager implements MultiClusterManager {
  readonly #engaged = new Map<string, Engaged>();
  readonly #hooks = new Set<{ hook: ClusterHook; signal: AbortSignal }>();
  readonly #stopping = new Set<Promise<void>>();
  #running: AbortSignal | undefined;
  #done = false;

  constructor(config: RestConfig, options: MultiClusterManagerOptions) {
    super(config, options);
    const provider = options.provider;
    // The clusters' registry runs on every replica, before the controllers (a standby keeps warm caches,
    // as it does for its own cluster); the provider is started by it.
    this.add({
      needLeaderElection: () => false,
      start: (signal) => this.#run(signal, provider),
    });
    const self = this;
    const registry = this.getMetricsRegistry();
    if (registry.getSingleMetric('kubeloop_multicluster_cluster_synced')) return;
    new Gauge({
      name: 'kubeloop_multicluster_cluster_synced',
      help: 'Whether each engaged cluster has synced its cache (1) or not (0).',
      labelNames: ['cluster'],
      registers: [registry],
      collect() {
        this.reset();
        for (const s of self.clusterStatus()) this.set({ cluster: s.name }, s.synced ? 1 : 0);
      },
    });
  }

  async #run(signal: AbortSignal, provider: Provider | undefined): Promise<void> {
    this.#running = signal;
    for (const e of this.#engaged.values()) this.#startCluster(e);
    try {
      if (provider) await provider.start(signal, this);
      await whenAborted(signal).promise;
    } finally {
      this.#done = true;
      for (const e of this.#engaged.values()) e.stop.abort();
      await Promise.all([...[...this.#engaged.values()].map((e) => e.run), ...this.#stopping]);
      this.#engaged.clear();
    }
  }

  engage(signal: AbortSignal, name: string, cluster: Cluster): void {
    if (!isValidClusterName(name))
      throw new ClusterEngageError(
        `cluster name ${JSON.stringify(name)} must be 1-63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit`,
      );
    if (this.#done) throw new ClusterEngageError(`can not engage cluster ${name}: the manager has stopped`);
    if (this.#engaged.has(name)) throw new ClusterEngageError(`cluster ${name} is engaged already`);
    if (signal.aborted) return;
    const e: Engaged = { name, cluster, stop: new AbortController(), engagedAt: Date.now() };
    this.#engaged.set(name, e);
    this.getLogger().info({ cluster: name }, 'Engaging cluster');
    onAbort(signal, () => this.#disengage(e));
    if (this.#running) this.#startCluster(e);
  }

  #startCluster(e: Engaged): void {
    const running = this.#running;
    if (!running || e.run) return;
    const both = anySignal(running, e.stop.signal);
    // Its informers in the manager's metrics (label `cluster`) while it runs; `/debug/cache` lists them too.
    const cache = e.cluster.getCache();
    const release =
      cache instanceof InformerCache
        ? registerCacheMetrics(this.getMetricsRegistry(), cache, e.name)
        : () => undefined;
    e.run = e.cluster
      .start(both.signal)
      .catch((err: unknown) =>
        this.getLogger().error({ cluster: e.name, err }, 'cluster stopped with an error'),
      )
      .finally(() => {
        both.off();
        release();
      });
    for (const h of this.#hooks) this.#tell(h, e);
  }

  #tell(h: { hook: ClusterHook; signal: AbortSignal }, e: Engaged): void {
    if (h.signal.aborted || e.stop.signal.aborted) return;
    const both = anySignal(h.signal, e.stop.signal);
    onAbort(both.signal, both.off);
    try {
      h.hook.engage(e.name, e.cluster, both.signal);
    } catch (err) {
      this.getLogger().error({ cluster: e.name, err }, 'engaging a cluster in a controller failed');
    }
  }

  #disengage(e: Engaged): void {
    if (this.#engaged.get(e.name) !== e) return;
    this.getLogger().info({ cluster: e.name }, 'Disengaging cluster');
    this.#engaged.delete(e.name);
    e.stop.abort();
    if (e.run) {
      const p = e.run;
      this.#stopping.add(p);
      void p.finally(() => this.#stopping.delete(p));
    }
  }

  /** Registers a hook told of every engaged cluster (those engaged already at once) until `signal` aborts. */
  addClusterHook(hook: ClusterHook, signal: AbortSignal): void {
    const h = { hook, signal };
    this.#hooks.add(h);
    onAbort(signal, () => this.#hooks.delete(h));
    for (const e of this.#engaged.values()) if (e.run) this.#tell(h, e);
  }

  protected override memberCaches(): readonly MemberCache[] {
    return [...this.#engaged.values()].flatMap((e) => {
      const cache = e.cluster.getCache();
      return e.run && cache instanceof InformerCache ? [{ cluster: e.name, cache }] : [];
    });
  }

  getCluster(name: string | undefined): Cluster {
    if (!name) return this.getLocalCluster();
    const e = this.#engaged.get(name);
    if (!e) throw new ClusterNotFoundError(`cluster ${JSON.stringify(name)} is not engaged`);
    return e.cluster;
  }

  clusterNames(): string[] {
    return [...this.#engaged.keys()].sort();
  }

  clusterStatus(): ClusterStatus[] {
    return [...this.#engaged.values()]
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((e) => {
        const reason = e.run ? e.cluster.readinessPending() : 'the manager has not started';
        return {
          name: e.name,
          synced: reason === undefined,
          engagedAt: e.engagedAt,
          ...(reason ? { reason } : {}),
        };
      });
  }
}

/**
 * A multi-cluster manager for the management cluster at `config` (multicluster-runtime `mcmanager.New`):
 * a manager as `newManager` makes it, plus the clusters `options.provider` engages at runtime — each with
 * its own client, cache and lifecycle. The manager's readiness covers its own cluster only; each engaged
 * cluster's is in `clusterStatus()` and the `kubeloop_multicluster_cluster_synced{cluster}` gauge, so an
 * unreachable member never holds the manager back.
 * @throws as `newManager` does.
 */
export function newMultiClusterManager(
  config: RestConfig,
  options: MultiClusterManagerOptions = {},
): MultiClusterManager {
  return new MultiClusterControllerManager(config, options);
}

/** Whether `mgr` is a multi-cluster manager. */
export function isMultiClusterManager(mgr: Manager): mgr is MultiClusterManager {
  return mgr instanceof MultiClusterControllerManager;
}

/**
 * Tells `hook` of every cluster `mgr` engages (those engaged already at once) until `signal` aborts; how a
 * multi-cluster controller learns of clusters. Not exported from the package: a multi-cluster manager is one
 * that {@link newMultiClusterManager} made.
 * @throws ControllerError when `mgr` was not made by newMultiClusterManager.
 */
export function addClusterHook(mgr: MultiClusterManager, hook: ClusterHook, signal: AbortSignal): void {
  if (!(mgr instanceof MultiClusterControllerManager)) {
    throw new ControllerError('a multi-cluster controller needs a manager made by newMultiClusterManager');
  }
  mgr.addClusterHook(hook, signal);
}

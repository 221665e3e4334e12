import type { Kind } from '@kubeloop/client';
import { builderSpec, ControllerBuilderBase } from '../builder-base.js';
import { claimControllerName, entrySource, ownWritesWaiter, type WatchEntry } from '../builder-spec.js';
import type { Cluster } from '../cluster/cluster.js';
import { Controller } from '../controller.js';
import { type BuilderControllerOptions, ControllerError } from '../controller-options.js';
import type { HandlerQueue } from '../handler.js';
import { whenAborted } from '../internal-signals.js';
import type { Logger } from '../logger.js';
import type { Runnable } from '../manager/runnable.js';
import type { Reconciler, Request } from '../reconcile.js';
import type { ShardAttachment } from '../sharding/attachment.js';
import type { Sharding } from '../sharding/sharding.js';
import type { Source } from '../source.js';
import { addClusterHook, type ClusterHook, type MultiClusterManager } from './manager.js';

/** Options of a multi-cluster controller: the builder's controller options plus where it runs. */
export interface MultiClusterControllerOptions extends BuilderControllerOptions {
  /**
   * Also run the controller on the manager's own cluster (requests without `cluster`), as multicluster-runtime's
   * `WithEngageWithLocalCluster`. @defaultValue false
   */
  readonly engageLocalCluster?: boolean;
}

/** How the controller is doing in one cluster. */
export interface MultiClusterControllerStatus {
  /** `''` for the manager's own cluster. */
  readonly cluster: string;
  /** Whether its sources have synced and its workers run. */
  readonly synced: boolean;
}

interface Running {
  readonly controller: Controller;
  readonly run: Promise<void>;
}

/** Makes a {@link MultiClusterController}; set by the class's static block (its constructor is private). */
let newController: (
  mgr: MultiClusterManager,
  name: string,
  entries: readonly WatchEntry[],
  forKind: Kind | undefined,
  reconciler: Reconciler,
  options: MultiClusterControllerOptions,
  sharding: Sharding | undefined,
) => MultiClusterController;

/**
 * A controller over every engaged cluster (multicluster-runtime `mcbuilder` + `mccontroller`): per cluster a
 * {@link Controller} of its own — its own queue, workers (`maxConcurrentReconciles` each), sources on that
 * cluster's cache and metrics under the name `<name>/<cluster>` — started when the cluster is engaged and
 * stopped when it is disengaged (its queued requests are dropped, running reconciles see their signal
 * abort). Requests carry `cluster`; the reconciler reaches it with `mgr.getCluster(req.cluster)`. A cluster
 * that is slow, unreachable or refusing holds only its own workers: the other clusters' reconciles go on,
 * and the controller's sync waits for no cluster (per-cluster status in {@link MultiClusterController.status}).
 * With sharding, each replica reconciles the (cluster, key) or (cluster) shard keys it owns, behind the
 * sharding hand-over gate.
 */
export class MultiClusterController implements Runnable {
  readonly name: string;
  readonly #mgr: MultiClusterManager;
  readonly #entries: readonly WatchEntry[];
  readonly #forKind: Kind | undefined;
  readonly #reconciler: Reconciler;
  readonly #options: MultiClusterControllerOptions;
  readonly #sharding: Sharding | undefined;
  readonly #log: Logger;
  readonly #running = new Map<string, Running>();
  readonly #stopping = new Set<Promise<void>>();
  #started = false;

  // Made only by MultiClusterControllerBuilder.complete (through newController, set below): the entries are
  // internal, so the constructor is not part of the public surface.
  private constructor(
    mgr: MultiClusterManager,
    name: string,
    entries: readonly WatchEntry[],
    forKind: Kind | undefined,
    reconciler: Reconciler,
    options: MultiClusterControllerOptions,
    sharding: Sharding | undefined,
  ) {
    this.#mgr = mgr;
    this.name = name;
    this.#entries = entries;
    this.#forKind = forKind;
    this.#reconciler = reconciler;
    this.#options = options;
    this.#sharding = sharding;
    this.#log = mgr.getLogger().child({ controller: name });
  }

  static {
    newController = (...args) => new MultiClusterController(...args);
  }

  needLeaderElection(): boolean {
    return this.#sharding ? false : (this.#options.needLeaderElection ?? true);
  }

  /** Whether the controller runs on every engaged cluster it was told of; a cluster still syncing does not count. */
  hasSynced(): boolean {
    return this.#started;
  }

  /** Per cluster: whether its sources synced (sorted by cluster name). */
  status(): MultiClusterControllerStatus[] {
    return [...this.#running.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([cluster, r]) => ({ cluster, synced: r.controller.hasSynced() }));
  }

  /** The per-cluster controller of `cluster` while it runs (tests, diagnostics). */
  controllerFor(cluster: string): Controller | undefined {
    return this.#running.get(cluster)?.controller;
  }

  async start(signal: AbortSignal): Promise<void> {
    if (this.#started) throw new ControllerError(`controller ${this.name} was already started`);
    this.#started = true;
    const hook: ClusterHook = { engage: (name, cluster, s) => this.#engage(name, cluster, s) };
    if (this.#options.engageLocalCluster) this.#engage('', this.#mgr.getLocalCluster(), signal);
    addClusterHook(this.#mgr, hook, signal);
    const stopped = whenAborted(signal);
    await stopped.promise;
    await Promise.all([...[...this.#running.values()].map((r) => r.run), ...this.#stopping]);
  }

  #engage(clusterName: string, cluster: Cluster, signal: AbortSignal): void {
    if (signal.aborted) return;
    const sharding = this.#sharding;
    const ctrlName = clusterName ? `${this.name}/${clusterName}` : this.name;
    let shard: ShardAttachment | undefined;
    const stamp = (q: HandlerQueue): HandlerQueue => ({
      add: (req, o) => {
        const r: Request = req.cluster || !clusterName ? req : { ...req, cluster: clusterName };
        // Not owned here: dropped, and remembered by the shard so that it is enqueued once permitted.
        if (shard && !shard.admit(r)) return;
        q.add(r, o);
      },
      handlerError: (err, details) => q.handlerError(err, { ...details, cluster: clusterName }),
    });
    const { engageLocalCluster: _local, skipNameValidation: _skip, ...opts } = this.#options;
    const defaults = this.#mgr.getControllerOptions();
    const log = this.#mgr.getLogger().child(clusterName ? { cluster: clusterName } : {});
    let reconciler = this.#reconciler;
    // Forward reference: the sharding attachment needs the controller's synced state.
    const box: { ctrl?: Controller } = {};
    const forKind = this.#forKind;
    if (sharding && forKind) {
      shard = sharding.attach(
        { add: (req, o) => box.ctrl?.handlerQueue.add(req, o), handlerError: () => undefined },
        async () =>
          (await cluster.getCache().list(forKind)).items.map((o) => ({
            namespace: o.metadata?.namespace ?? '',
            name: o.metadata?.name ?? '',
            ...(clusterName ? { cluster: clusterName } : {}),
          })),
        () => box.ctrl?.hasSynced() ?? false,
        reconciler,
      );
      reconciler = shard.reconciler;
    }
    // Read-your-own-writes per cluster, as the single-cluster builder sets it up (a no-op unless the
    // cluster's cache has `readYourWrites` on).
    const waitForOwnWrites = ownWritesWaiter(cluster.getCache(), forKind);
    const ctrl = new Controller(ctrlName, reconciler, {
      ...defaults,
      ...(waitForOwnWrites ? { waitForOwnWrites } : {}),
      ...opts,
      ...(sharding ? { needLeaderElection: false } : {}),
      // A cluster that never syncs (unreachable) waits for as long as it is engaged, never failing the
      // manager: its informers keep retrying and the controller starts its workers once they synced.
      cacheSyncTimeoutMs: 0,
      logger: log,
    });
    box.ctrl = ctrl;
    for (const e of this.#entries) {
      const inner = entrySource(
        e,
        cluster.getCache(),
        cluster.getRESTMapper(),
        log.child({ controller: ctrlName }),
      );
      const source: Source = {
        start: (s, q) => inner.start(s, stamp(q)),
        waitForSync: (s) => inner.waitForSync(s),
        syncError: () => inner.syncError(),
      };
      ctrl.watch(source);
    }
    const run = ctrl
      .start(signal)
      .catch((err: unknown) =>
        this.#log.error(
          { cluster: clusterName, err },
          'the controller stopped with an error in this cluster',
        ),
      )
      .finally(() => {
        shard?.detach();
        if (this.#running.get(clusterName)?.controller === ctrl) this.#running.delete(clusterName);
      });
    const prev = this.#running.get(clusterName);
    if (prev) {
      this.#stopping.add(prev.run);
      void prev.run.finally(() => this.#stopping.delete(prev.run));
    }
    this.#running.set(clusterName, { controller: ctrl, run });
  }
}

/**
 * The fluent builder of a {@link MultiClusterController} (multicluster-runtime `mcbuilder.ControllerManagedBy`):
 * `newMultiClusterControllerManagedBy(mgr).for(ConfigMap).complete(reconciler)` — the same shape as
 * `newControllerManagedBy`, with every watch made in each engaged cluster.
 */
export class MultiClusterControllerBuilder extends ControllerBuilderBase<MultiClusterControllerOptions> {
  #sharding: Sharding | undefined;

  constructor(private readonly mgr: MultiClusterManager) {
    super();
  }

  /**
   * Shards the reconciles across replicas with `sharding` (made by `newSharding`): its `shardKey` decides
   * the unit — the default `requestKey` shards by (cluster, key); `(req) => req.cluster ?? ''` by cluster.
   * The controller then runs on every replica.
   */
  withSharding(sharding: Sharding): this {
    this.#sharding = sharding;
    return this;
  }

  /**
   * Builds the controller and adds it to the manager.
   * @throws ControllerError — nothing to watch; `owns` without `for`; no name; a malformed or taken name;
   *   sharding without `for`.
   */
  complete(reconciler: Reconciler): MultiClusterController {
    const spec = builderSpec(this);
    if (this.#sharding && !spec.forKind) throw new ControllerError('withSharding() needs for(kind)');
    const name = spec.check(reconciler);
    if (!spec.options.skipNameValidation) claimControllerName(this.mgr, name);
    // every watch is made in each engaged cluster: a watch's own `cluster` option does not apply here
    const entries = spec.entries().map(({ cluster: _cluster, ...e }) => e);
    const ctrl = newController(
      this.mgr,
      name,
      entries,
      spec.forKind,
      reconciler,
      spec.options,
      this.#sharding,
    );
    this.mgr.add(ctrl);
    return ctrl;
  }
}

/** Starts a multi-cluster controller builder for `mgr` (multicluster-runtime `mcbuilder.ControllerManagedBy`). */
export function newMultiClusterControllerManagedBy(mgr: MultiClusterManager): MultiClusterControllerBuilder {
  return new MultiClusterControllerBuilder(mgr);
}

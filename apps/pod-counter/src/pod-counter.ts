import {
  ChannelSource,
  cacheSyncCheck,
  enqueueRequestForObject,
  type Logger,
  type Manager,
  newControllerManagedBy,
  newManager,
  newMetricsRegistry,
  type ReconcileContext,
  type Reconciler,
  type Request,
  type Result,
} from '@kubeloop/builder';
import { newSharding } from '@kubeloop/builder/sharding';
import { type CacheReader, type DeepReadonly, Pod, type Reader } from '@kubeloop/client';
import type { RestConfig } from '@kubeloop/config';
import type { Registry } from 'prom-client';
import { countPods, type PodCounts, type PodObject, totalOf } from './counts.js';
import { PodCountGauges } from './metrics.js';
import { ConfigMapReport, type ReportTarget } from './report.js';

/** Options of {@link PodCounter}. */
export interface PodCounterOptions {
  /** Count only these namespaces. Absent or empty: all namespaces (the walkthrough's behaviour). */
  readonly namespaces?: readonly string[];
  /** Called with every count, after it is logged (gauges, the ConfigMap report). A throw fails the reconcile. */
  readonly onCounts?: (counts: PodCounts, signal: AbortSignal) => void | Promise<void>;
}

/**
 * The controller-runtime walkthrough's `PodCounter`: on every reconcile it lists pods through the
 * manager's client — served from the informer cache — and logs `{"msg":"pod count","count":N}`. It also
 * hands the counts per namespace and phase to `onCounts`.
 */
export class PodCounter implements Reconciler {
  constructor(
    readonly client: Reader | CacheReader,
    readonly options: PodCounterOptions = {},
  ) {}

  async reconcile(ctx: ReconcileContext, _req: Request): Promise<Result> {
    const namespaces = this.options.namespaces?.length ? this.options.namespaces : [undefined];
    const pods: DeepReadonly<PodObject>[] = [];
    for (const namespace of namespaces) {
      const list = await (this.client as CacheReader).list(Pod, {
        signal: ctx.signal,
        ...(namespace ? { namespace } : {}),
      });
      for (const pod of list.items) pods.push(pod);
    }
    const counts = countPods(pods);
    ctx.log.info({ count: totalOf(counts) }, 'pod count');
    await this.options.onCounts?.(counts, ctx.signal);
    return {};
  }
}

/** Leader election settings of {@link runPodCounter} (controller-runtime's manager options). */
export interface PodCounterLeaderElection {
  /** Name of the Lease. @defaultValue `pod-counter` */
  readonly id?: string;
  /** Namespace of the Lease. @defaultValue the in-cluster namespace */
  readonly namespace?: string;
  /** Lease timings in ms (tests shorten them). @defaultValue 15000 / 10000 / 2000 */
  readonly leaseDurationMs?: number;
  readonly renewDeadlineMs?: number;
  readonly retryPeriodMs?: number;
}

/** Sharded counting settings of {@link runPodCounter} (`@kubeloop/builder/sharding`). */
export interface PodCounterSharding {
  /** Name of the sharding group (member Leases `<name>-shard-<identity>`). @defaultValue `pod-counter` */
  readonly name?: string;
  /** Namespace of the member Leases. */
  readonly namespace: string;
  /** This replica's identity. @defaultValue `<hostname>-<random>` */
  readonly identity?: string;
  /** Member Lease timings in ms. @defaultValue 15000 / 10000 / 2000 */
  readonly leaseDurationMs?: number;
  readonly renewDeadlineMs?: number;
  readonly retryPeriodMs?: number;
}

/** Options of {@link runPodCounter}. */
export interface RunPodCounterOptions {
  /** Stops the manager when aborted. */
  readonly signal: AbortSignal;
  readonly logger: Logger;
  /** Watch and count only these namespaces (the cache never makes a cluster-wide request then). */
  readonly namespaces?: readonly string[];
  /** Watch and count only pods matching this label selector. */
  readonly labelSelector?: string;
  /** Run as one of several replicas: only the holder of the Lease reconciles. Absent: always reconcile. */
  readonly leaderElection?: PodCounterLeaderElection;
  /**
   * Run as one of several active replicas: namespaces are spread over the live members by rendezvous
   * hashing and each replica counts, logs and exports (`pod_counter_pods`) only the namespaces it owns,
   * so the sum over the replicas' `/metrics` is the cluster's count. Not with `leaderElection` or `report`.
   */
  readonly sharding?: PodCounterSharding;
  /** Where `/metrics` is served (`":8080"`, `"127.0.0.1:0"`); `"0"` disables. @defaultValue `"0"` */
  readonly metricsBindAddress?: string;
  /** Where `/healthz` and `/readyz` are served; `"0"` disables. @defaultValue `"0"` */
  readonly healthProbeBindAddress?: string;
  /** @defaultValue 1 */
  readonly maxConcurrentReconciles?: number;
  /** Write the counts to this ConfigMap (server-side apply, only when they change). */
  readonly report?: ReportTarget;
  /** The registry of `/metrics`. @defaultValue a new registry per run */
  readonly metricsRegistry?: Registry;
  /** Called once the manager's HTTP servers listen, with their addresses (the demo prints them). */
  readonly onListening?: (addresses: { metrics?: string; probes?: string }) => void;
}

/**
 * The walkthrough's `main`, grown into a small real controller:
 * `mgr := ctrl.NewManager(cfg, Options{…})`,
 * `ctrl.NewControllerManagedBy(mgr).For(&corev1.Pod{}).Complete(&PodCounter{Client: mgr.GetClient()})`,
 * `mgr.Start(ctx)` — plus a one-off event once the controller starts, so an empty cluster still gets a
 * count of 0, gauges on `/metrics`, probes and optional leader election. Resolves when `signal` aborts and
 * the manager has stopped; rejects when the manager fails (e.g. the lease is lost).
 */
export async function runPodCounter(config: RestConfig, options: RunPodCounterOptions): Promise<void> {
  const registry = options.metricsRegistry ?? newMetricsRegistry();
  const le = options.leaderElection;
  const mgr: Manager = newManager(config, {
    logger: options.logger,
    metrics: { registry, bindAddress: options.metricsBindAddress },
    health: { bindAddress: options.healthProbeBindAddress },
    cache: {
      defaultNamespaces: options.namespaces,
      defaultLabelSelector: options.labelSelector,
    },
    leaderElection: le && {
      id: le.id ?? 'pod-counter',
      releaseOnCancel: true,
      namespace: le.namespace,
      leaseDurationMs: le.leaseDurationMs,
      renewDeadlineMs: le.renewDeadlineMs,
      retryPeriodMs: le.retryPeriodMs,
    },
  });
  // Ready once the cache has synced and, on the leader, the controller's informers too (not before start).
  mgr.addReadyzCheck('cache-sync', cacheSyncCheck(mgr));
  const gauges = new PodCountGauges(registry);
  const report = options.report ? new ConfigMapReport(mgr.getClient(), options.report) : undefined;
  const counter = new PodCounter(mgr.getClient(), {
    ...(options.namespaces ? { namespaces: options.namespaces } : {}),
    onCounts: async (counts, signal) => {
      gauges.set(counts);
      if (report && (await report.write(counts, signal))) {
        options.logger.info(
          { configmap: `${report.target.namespace}/${report.target.name}`, count: totalOf(counts) },
          'report written',
        );
      }
    },
  });
  const onListening = options.onListening;
  if (onListening) {
    // Non-leader runnables start after the HTTP servers listen (and the caches synced), on every replica.
    mgr.add({
      needLeaderElection: () => false,
      start: async () => {
        const metrics = mgr.metricsServerAddress();
        const probes = mgr.healthProbeServerAddress();
        onListening({ ...(metrics ? { metrics } : {}), ...(probes ? { probes } : {}) });
      },
    });
  }
  const sh = options.sharding;
  if (sh) {
    const sharding = newSharding(mgr, {
      name: sh.name ?? 'pod-counter',
      namespace: sh.namespace,
      // A namespace is counted whole by one replica.
      shardKey: (req) => req.namespace ?? '',
      ...(sh.identity ? { identity: sh.identity } : {}),
      ...(sh.leaseDurationMs ? { leaseDurationMs: sh.leaseDurationMs } : {}),
      ...(sh.renewDeadlineMs ? { renewDeadlineMs: sh.renewDeadlineMs } : {}),
      ...(sh.retryPeriodMs ? { retryPeriodMs: sh.retryPeriodMs } : {}),
    });
    const client = mgr.getClient();
    sharding.complete(
      newControllerManagedBy(mgr).withOptions({
        maxConcurrentReconciles: options.maxConcurrentReconciles ?? 1,
      }),
      Pod,
      {
        async reconcile(ctx, req) {
          const list = await client.list(Pod, { namespace: req.namespace, signal: ctx.signal });
          const byPhase = countPods(list.items)[req.namespace ?? ''] ?? {};
          gauges.setNamespace(req.namespace ?? '', byPhase, (ns) => sharding.state.owns(ns));
          ctx.log.info(
            { namespace: req.namespace, count: list.items.length },
            'pod count of an owned namespace',
          );
          return {};
        },
      },
    );
    return mgr.start(options.signal);
  }
  newControllerManagedBy(mgr)
    .for(Pod)
    // One event when the controller starts (after the cache synced): an empty cluster reports 0 too.
    .watchesRawSource(new ChannelSource(startEvent(), enqueueRequestForObject()))
    .withOptions({ maxConcurrentReconciles: options.maxConcurrentReconciles ?? 1 })
    .complete(counter);
  return mgr.start(options.signal);
}

/** A single synthetic pod key (`pod-counter/startup`), yielded once. */
async function* startEvent(): AsyncGenerator<PodObject> {
  yield { apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'pod-counter', name: 'startup' } };
}

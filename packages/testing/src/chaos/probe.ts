/**
 * The reconcile probe: wraps the reconciler under test and records, per key, what the reconciles saw and
 * whether two ran at once — the raw data for the lost-change and concurrency figures.
 */
import type { ReconcileContext, Reconciler, Request, Result } from '@kubeloop/builder';
import { type CacheReader, isNotFound, type Kind, type KubeObject, type Reader } from '@kubeloop/client';

/**
 * The probe's key of a request: `namespace/name`, or `cluster/namespace/name` for a request that names its
 * cluster (cluster names hold no `/`), so the same object in two clusters is two keys.
 */
export function probeKey(req: Pick<Request, 'cluster' | 'namespace' | 'name'>): string {
  return req.cluster ? `${req.cluster}/${req.namespace}/${req.name}` : `${req.namespace}/${req.name}`;
}

/** What the reconciles of one key saw. */
export interface KeyObservations {
  /** resourceVersions the cache held for the key when a reconcile started. */
  readonly seen: Set<string>;
  /** A reconcile found the object gone (NotFound) — the last observation, when `lastWasGone`. */
  lastWasGone: boolean;
  reconciles: number;
}

/**
 * Wraps reconcilers so the chaos run can check them. Each wrapped reconcile first reads its object through
 * the manager's cached client (what the reconciler itself would see) and records the resourceVersion or
 * NotFound, then runs the wrapped reconciler; overlapping reconciles of one key are counted.
 */
export class ReconcileProbe {
  readonly #observations = new Map<string, KeyObservations>();
  readonly #inFlight = new Map<string, number>();
  #concurrent = 0;
  #maxConcurrent = 0;
  #errors = 0;
  #total = 0;

  /**
   * A reconciler that records what it saw for {@link ChaosReport} and then calls `inner`.
   * @param kind the kind the controller is `for` (the traffic's kind).
   * @param reader the manager's cached client (`mgr.getClient()`); for a multi-cluster controller, a function
   *   of the request's cluster (`(c) => mgr.getCluster(c).getClient()`).
   */
  wrap<T extends KubeObject>(
    kind: Kind<T>,
    reader: Reader | CacheReader | ((cluster: string | undefined) => Reader | CacheReader),
    inner: Reconciler,
  ): Reconciler {
    return {
      reconcile: async (ctx: ReconcileContext, req: Request): Promise<Result | undefined> => {
        const key = probeKey(req);
        const running = (this.#inFlight.get(key) ?? 0) + 1;
        this.#inFlight.set(key, running);
        if (running > 1) this.#concurrent++;
        this.#maxConcurrent = Math.max(this.#maxConcurrent, running);
        this.#total++;
        try {
          const obs = this.#observe(key);
          obs.reconciles++;
          try {
            const from = typeof reader === 'function' ? reader(req.cluster) : reader;
            const o = await (from as Reader).get(kind, req);
            const rv = o.metadata?.resourceVersion;
            if (rv !== undefined) obs.seen.add(rv);
            obs.lastWasGone = false;
          } catch (err) {
            if (!isNotFound(err)) throw err;
            obs.lastWasGone = true;
          }
          return (await inner.reconcile(ctx, req)) ?? undefined;
        } catch (err) {
          this.#errors++;
          throw err;
        } finally {
          const left = (this.#inFlight.get(key) ?? 1) - 1;
          if (left === 0) this.#inFlight.delete(key);
          else this.#inFlight.set(key, left);
        }
      },
    };
  }

  #observe(key: string): KeyObservations {
    let o = this.#observations.get(key);
    if (o === undefined) {
      o = { seen: new Set(), lastWasGone: false, reconciles: 0 };
      this.#observations.set(key, o);
    }
    return o;
  }

  /** Every key reconciled at least once. */
  knownKeys(): IterableIterator<string> {
    return this.#observations.keys();
  }

  /** What the reconciles of `key` (see {@link probeKey}) saw, if any ran. */
  observations(key: string): Readonly<KeyObservations> | undefined {
    return this.#observations.get(key);
  }

  /** Times a reconcile started while another of the same key was running (must be 0). */
  get concurrentReconciles(): number {
    return this.#concurrent;
  }

  /** Most reconciles of one key seen running at once (must be 1). */
  get maxInFlightPerKey(): number {
    return this.#maxConcurrent;
  }

  /** Reconciles that threw (retried by the controller; not a failure by themselves). */
  get reconcileErrors(): number {
    return this.#errors;
  }

  /** Reconciles run. */
  get reconciles(): number {
    return this.#total;
  }
}

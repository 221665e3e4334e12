import { onAbort } from '@kubeloop/core';
import type { Cluster } from '../cluster/cluster.js';

/**
 * What a {@link Provider} engages clusters with (multicluster-runtime `multicluster.Aware`): the
 * multi-cluster manager.
 */
export interface Aware {
  /**
   * Engages `cluster` under `name` until `signal` aborts, then disengages it (its controllers stop, their
   * queued requests are dropped, its informers stop and its connections close). The manager starts the
   * cluster: do not start it yourself. Returns at once (it does not wait for the cluster's cache to sync:
   * an unreachable cluster never holds up its provider or the other clusters).
   * @throws ClusterEngageError when `name` is not a valid cluster name or is engaged already, or the
   *   manager has stopped.
   */
  engage(signal: AbortSignal, name: string, cluster: Cluster): void;
}

/**
 * Provider knows which clusters exist and engages and disengages them at runtime (multicluster-runtime
 * `multicluster.Provider` + `ProviderRunnable`). The multi-cluster manager runs it on every replica.
 * Providers here: {@link StaticProvider} (a list, changeable at runtime), {@link KubeconfigDirProvider}
 * (kubeconfig files in a folder) and {@link KubeconfigSecretProvider} (labelled kubeconfig Secrets in the
 * management cluster).
 */
export interface Provider {
  /**
   * Runs until `signal` aborts, engaging each cluster with `aware.engage(clusterSignal, name, cluster)` and
   * disengaging it by aborting `clusterSignal`. Resolves once stopped; a rejection stops the manager.
   */
  start(signal: AbortSignal, aware: Aware): Promise<void>;
}

/** A cluster could not be engaged (bad or taken name, manager stopped). Code `'ERR_CLUSTER_ENGAGE'`. */
export class ClusterEngageError extends Error {
  readonly code = 'ERR_CLUSTER_ENGAGE' as const;
  override readonly name = 'ClusterEngageError';
}

/** No cluster of that name is engaged (multicluster-runtime `multicluster.ErrClusterNotFound`). Code `'ERR_CLUSTER_NOT_FOUND'`. */
export class ClusterNotFoundError extends Error {
  readonly code = 'ERR_CLUSTER_NOT_FOUND' as const;
  override readonly name = 'ClusterNotFoundError';
}

/**
 * A cluster name: 1–63 letters, digits, `-`, `_` or `.`, starting and ending with a letter or digit (it
 * appears in logs, metric labels, Request keys and shard keys).
 */
const CLUSTER_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

/** Whether `name` is a valid name for an engaged cluster (see {@link Aware.engage}). */
export function isValidClusterName(name: string): boolean {
  return CLUSTER_NAME.test(name);
}

/** A signal aborted when any of `parents` aborts; `off()` unsubscribes from the parents. @internal */
export function anySignal(...parents: AbortSignal[]): { signal: AbortSignal; off: () => void } {
  const ac = new AbortController();
  const offs: Array<() => void> = [];
  for (const p of parents) {
    if (p.aborted) {
      ac.abort(p.reason);
      break;
    }
    offs.push(onAbort(p, () => ac.abort(p.reason)));
  }
  return {
    signal: ac.signal,
    off: () => {
      for (const f of offs.splice(0)) f();
    },
  };
}

/**
 * @packageDocumentation
 * `@kubeloop/builder/leaderelection` — leader election on a coordination.k8s.io/v1 Lease, usable without a
 * manager (client-go `tools/leaderelection` + `resourcelock`, controller-runtime `pkg/leaderelection`).
 *
 * ```ts
 * const lock = newResourceLock(getConfigOrDie(), { id: 'my-job', namespace: 'default' });
 * const elector = new LeaderElector({ lock, releaseOnCancel: true, callbacks: {
 *   onStartedLeading: (signal) => void doWork(signal),
 * } });
 * await elector.run(setupSignalHandler());
 * ```
 */

// Everything in config.ts is public: the elector's configuration, callbacks, metrics hook and defaults.
export * from './config.js';
export { LeaderElectionConfigError } from './errors.js';
export { LeaderElector } from './leader-elector.js';
export type { LeaderElectionRecord, LeaseSpecJSON } from './record.js';
export {
  defaultIdentity,
  IN_CLUSTER_NAMESPACE_FILE,
  LeaseKind,
  LeaseLock,
  type LeaseLockOptions,
  type LeaseObject,
  newResourceLock,
  type ObservedRecord,
  type ResourceLock,
  type ResourceLockOptions,
  resolveLeaseNamespace,
} from './resource-lock.js';

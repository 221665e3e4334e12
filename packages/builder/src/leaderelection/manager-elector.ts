import type { RestConfig } from '@kubeloop/config';
import type { Logger } from '../logger.js';
import type { ResolvedLeaderElectionOptions } from '../manager/options.js';
import type { LeaderElectorHook } from '../manager/runnable.js';
import type { LeaderElectionMetrics } from './config.js';
import { LeaderElector } from './leader-elector.js';
import { newResourceLock } from './resource-lock.js';

/**
 * The elector a manager runs for its resolved `leaderElection` options: the given `elector`, or a
 * {@link LeaderElector} on a Lease lock (controller-runtime `leaderelection.NewResourceLock` +
 * `leaderelection.NewLeaderElector` in `cm.Start`).
 * @throws LeaderElectionConfigError when the namespace cannot be found or the durations are inconsistent.
 */
export function managerLeaderElector(
  config: RestConfig,
  options: ResolvedLeaderElectionOptions,
  deps: { readonly logger: Logger; readonly metrics?: LeaderElectionMetrics },
): LeaderElectorHook {
  if (options.elector) return options.elector;
  const lock = newResourceLock(options.restConfig ?? config, {
    id: options.id,
    namespace: options.namespace,
    identity: options.identity,
    labels: options.labels,
    renewDeadlineMs: options.renewDeadlineMs,
  });
  return new LeaderElector({
    lock,
    leaseDurationMs: options.leaseDurationMs,
    renewDeadlineMs: options.renewDeadlineMs,
    retryPeriodMs: options.retryPeriodMs,
    releaseOnCancel: options.releaseOnCancel,
    name: options.id,
    logger: deps.logger.child({ component: 'leader-election' }),
    metrics: deps.metrics,
  });
}

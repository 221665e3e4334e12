import type { RestConfig } from '@kubeloop/config';
import type { Logger } from '../logger.js';
import type { LeaderElectionMetrics } from './config.js';
import { LeaderElectionConfigError } from './errors.js';
import { LeaderElector } from './leader-elector.js';
import { newResourceLock } from './resource-lock.js';

/** The manager's leader election options (controller-runtime `manager.Options`, durations in ms). */
export interface ManagerLeaderElectionOptions {
  /** Run leader-only runnables only while this replica holds the Lease. @defaultValue false */
  readonly leaderElection?: boolean;
  /** Name of the Lease; required with `leaderElection`. */
  readonly leaderElectionID?: string;
  /** Namespace of the Lease. @defaultValue the in-cluster namespace file's content */
  readonly leaderElectionNamespace?: string;
  /**
   * Give the Lease up when the manager stops (after every leader-only runnable has stopped), so a standby
   * takes over at its next attempt instead of after expiry. @defaultValue false
   */
  readonly leaderElectionReleaseOnCancel?: boolean;
  /** Labels put on the Lease when this replica creates it. */
  readonly leaderElectionLabels?: Readonly<Record<string, string>>;
  /** This replica's identity. @defaultValue `<hostname>_<uuid>` */
  readonly leaderElectionIdentity?: string;
  /** Config for the Lease requests (another cluster, other credentials). @defaultValue the manager's config */
  readonly leaderElectionConfig?: RestConfig;
  /** @defaultValue 15000 */
  readonly leaseDurationMs?: number;
  /** @defaultValue 10000 */
  readonly renewDeadlineMs?: number;
  /** @defaultValue 2000 */
  readonly retryPeriodMs?: number;
}

/**
 * The {@link LeaderElector} a manager runs for `options`, or `undefined` without `leaderElection`
 * (controller-runtime `leaderelection.NewResourceLock` + `leaderelection.NewLeaderElector` in `cm.Start`).
 * @throws LeaderElectionConfigError when the id is missing, the namespace cannot be found, or the
 *   durations are inconsistent.
 */
export function managerLeaderElector(
  config: RestConfig,
  options: ManagerLeaderElectionOptions,
  deps: { readonly logger: Logger; readonly metrics?: LeaderElectionMetrics },
): LeaderElector | undefined {
  if (!options.leaderElection) return undefined;
  if (!options.leaderElectionID) {
    throw new LeaderElectionConfigError('leaderElectionID must be set when leaderElection is enabled');
  }
  const renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
  const lock = newResourceLock(options.leaderElectionConfig ?? config, {
    id: options.leaderElectionID,
    ...(options.leaderElectionNamespace ? { namespace: options.leaderElectionNamespace } : {}),
    ...(options.leaderElectionIdentity ? { identity: options.leaderElectionIdentity } : {}),
    ...(options.leaderElectionLabels ? { labels: options.leaderElectionLabels } : {}),
    renewDeadlineMs,
  });
  return new LeaderElector({
    lock,
    renewDeadlineMs,
    ...(options.leaseDurationMs !== undefined ? { leaseDurationMs: options.leaseDurationMs } : {}),
    ...(options.retryPeriodMs !== undefined ? { retryPeriodMs: options.retryPeriodMs } : {}),
    releaseOnCancel: options.leaderElectionReleaseOnCancel ?? false,
    name: options.leaderElectionID,
    logger: deps.logger.child({ component: 'leader-election' }),
    ...(deps.metrics ? { metrics: deps.metrics } : {}),
  });
}

import type { MetricsProvider } from '@kubeloop/workqueue';
import type { Registry } from 'prom-client';
import type { ControllerMetricsHook } from '../controller-options.js';
import type { LeaderElectionMetrics } from '../leaderelection/config.js';
import { controllerMetricsHook } from './controller-metrics.js';
import { leaderElectionMetrics } from './leader-election-metrics.js';
import { registerRestClientMetrics } from './rest-client-metrics.js';
import { workqueueMetricsProvider } from './workqueue-metrics.js';

/** Everything a manager reports to one registry. */
export interface ManagerMetrics {
  readonly registry: Registry;
  /** For each controller (`ControllerOptions.metrics`). */
  readonly controller: ControllerMetricsHook;
  /** For each controller's queue (`ControllerOptions.queueMetricsProvider`). */
  readonly queue: MetricsProvider;
  readonly leaderElection: LeaderElectionMetrics;
  /** Stops the rest client metrics of this registry (its diagnostics-channel subscription). */
  readonly release: () => void;
}

/**
 * Binds controller, workqueue, leader election and rest client metrics to `registry` (the rest client
 * metrics subscribe to the process-wide client diagnostics channels once per registry).
 */
export function managerMetrics(registry: Registry): ManagerMetrics {
  const release = registerRestClientMetrics(registry);
  return {
    registry,
    release,
    controller: controllerMetricsHook(registry),
    queue: workqueueMetricsProvider(registry),
    leaderElection: leaderElectionMetrics(registry),
  };
}

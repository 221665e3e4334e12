export {
  type ControllerMetrics,
  controllerMetrics,
  controllerMetricsHook,
  RECONCILE_TIME_BUCKETS_SECONDS,
} from './controller-metrics.js';
export { leaderElectionMetrics } from './leader-election-metrics.js';
export { type ManagerMetrics, managerMetrics } from './manager-metrics.js';
export { metricsRegistry, newMetricsRegistry } from './registry.js';
export { REST_CLIENT_BUCKETS_SECONDS, registerRestClientMetrics } from './rest-client-metrics.js';
export { MetricsServer, type MetricsServerOptions } from './server.js';
export { workqueueMetricsProvider } from './workqueue-metrics.js';

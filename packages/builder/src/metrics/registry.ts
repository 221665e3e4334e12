import { Registry } from 'prom-client';

/**
 * The process-wide Prometheus registry (controller-runtime `metrics.Registry`): a manager serves it on
 * `/metrics` unless given its own, and users register their own metrics on it
 * (`new Counter({ name, help, registers: [metricsRegistry] })`). No default Node.js process metrics are
 * registered; call prom-client's `collectDefaultMetrics({ register: metricsRegistry })` for them.
 */
export const metricsRegistry: Registry = new Registry();

/** A new, empty registry (for a manager of its own, e.g. several managers in one process or a test). */
export function newMetricsRegistry(): Registry {
  return new Registry();
}

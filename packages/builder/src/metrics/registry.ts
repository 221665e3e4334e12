import { Registry } from 'prom-client';

/**
 * The process-wide Prometheus registry (controller-runtime `metrics.Registry`), opt-in: a manager serves it
 * on `/metrics` when given it as `metricsRegistry` (by default each manager has a registry of its own, see
 * `mgr.getMetricsRegistry()`); register your own metrics on whichever the manager serves
 * (`new Counter({ name, help, registers: [mgr.getMetricsRegistry()] })`). No default Node.js process metrics are
 * registered; call prom-client's `collectDefaultMetrics({ register: metricsRegistry })` for them.
 */
export const metricsRegistry: Registry = new Registry();

/** A new, empty registry (for a manager of its own, e.g. several managers in one process or a test). */
export function newMetricsRegistry(): Registry {
  return new Registry();
}

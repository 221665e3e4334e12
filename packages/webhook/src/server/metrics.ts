/** Webhook metrics with controller-runtime's names (`pkg/webhook/internal/metrics`). */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** The three webhook metrics, registered once per registry. */
export interface WebhookMetrics {
  /** `controller_runtime_webhook_requests_total{webhook,code}`: answered requests by path and HTTP code. */
  readonly requestsTotal: Counter<'webhook' | 'code'>;
  /** `controller_runtime_webhook_latency_seconds{webhook}`: time to answer, in seconds. */
  readonly latencySeconds: Histogram<'webhook'>;
  /** `controller_runtime_webhook_requests_in_flight{webhook}`: requests being served. */
  readonly requestsInFlight: Gauge<'webhook'>;
}

const cache = new WeakMap<Registry, WebhookMetrics>();

/** The webhook metrics on `registry`, created on first use (several servers on one registry share them). */
export function webhookMetrics(registry: Registry): WebhookMetrics {
  const known = cache.get(registry);
  if (known) return known;
  const existing = <T>(name: string): T | undefined => registry.getSingleMetric(name) as T | undefined;
  const m: WebhookMetrics = {
    requestsTotal:
      existing<Counter<'webhook' | 'code'>>('controller_runtime_webhook_requests_total') ??
      new Counter({
        name: 'controller_runtime_webhook_requests_total',
        help: 'Total number of admission requests by HTTP status code.',
        labelNames: ['webhook', 'code'],
        registers: [registry],
      }),
    latencySeconds:
      existing<Histogram<'webhook'>>('controller_runtime_webhook_latency_seconds') ??
      new Histogram({
        name: 'controller_runtime_webhook_latency_seconds',
        help: 'Histogram of the latency of processing admission requests',
        labelNames: ['webhook'],
        buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
        registers: [registry],
      }),
    requestsInFlight:
      existing<Gauge<'webhook'>>('controller_runtime_webhook_requests_in_flight') ??
      new Gauge({
        name: 'controller_runtime_webhook_requests_in_flight',
        help: 'Current number of admission requests being served.',
        labelNames: ['webhook'],
        registers: [registry],
      }),
  };
  cache.set(registry, m);
  return m;
}

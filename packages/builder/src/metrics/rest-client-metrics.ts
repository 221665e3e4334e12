import diagnosticsChannel from 'node:diagnostics_channel';
import { Counter, Histogram, type Registry } from 'prom-client';

/** client-go's latency buckets for the rest client histograms, in seconds. */
export const REST_CLIENT_BUCKETS_SECONDS: readonly number[] = Object.freeze([
  0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0,
]);

/** The fields used of a `kubeloop:client:request` message (`RequestDiagnostic` of @kubeloop/client's transport). */
interface RequestDiagnostic {
  readonly method: string;
  readonly url: string;
  readonly status: number;
  readonly durationMs: number;
}

/** The fields used of a `kubeloop:client:throttle` message (`ThrottleDiagnostic`). */
interface ThrottleDiagnostic {
  readonly method: string;
  readonly url: string;
  readonly waitedMs: number;
}

const subscribed = new WeakMap<Registry, () => void>();

/** `host[:port]` of a diagnostic URL (`host/path`). */
function hostOf(url: string): string {
  const i = url.indexOf('/');
  return i < 0 ? url : url.slice(0, i);
}

/**
 * client-go's rest client metrics (`tools/metrics`, registered by controller-runtime
 * `pkg/metrics/client_go_adapter.go`) on `registry`, fed from `@kubeloop/client`'s diagnostics channels:
 * - `rest_client_requests_total{code,method,host}` — one per attempt (retries count), `code` the HTTP
 *   status or `<error>` when there was no answer;
 * - `rest_client_request_duration_seconds{verb,host}` — per attempt;
 * - `rest_client_rate_limiter_duration_seconds{verb,host}` — time a request waited for the client-side
 *   limiter (the transport reports waits over 1 ms).
 * The channels are process-wide, so the counts cover every client in the process (as client-go's global
 * metrics do). Subscribes once per registry; returns a function that unsubscribes.
 */
export function registerRestClientMetrics(registry: Registry): () => void {
  const existing = subscribed.get(registry);
  if (existing) return existing;
  const registers = [registry];
  const buckets = [...REST_CLIENT_BUCKETS_SECONDS];
  const requests = new Counter({
    name: 'rest_client_requests_total',
    help: 'Number of HTTP requests, partitioned by status code, method, and host.',
    labelNames: ['code', 'method', 'host'],
    registers,
  });
  const byVerbAndHost = (name: string, help: string) =>
    new Histogram({ name, help, labelNames: ['verb', 'host'], buckets, registers });
  const duration = byVerbAndHost(
    'rest_client_request_duration_seconds',
    'Request latency in seconds. Broken down by verb, and host.',
  );
  const limiter = byVerbAndHost(
    'rest_client_rate_limiter_duration_seconds',
    'Client side rate limiter latency in seconds. Broken down by verb, and host.',
  );
  const onRequest = (msg: unknown) => {
    const d = msg as RequestDiagnostic;
    const host = hostOf(d.url);
    requests.inc({ code: d.status > 0 ? String(d.status) : '<error>', method: d.method, host });
    duration.observe({ verb: d.method, host }, d.durationMs / 1000);
  };
  const onThrottle = (msg: unknown) => {
    const d = msg as ThrottleDiagnostic;
    limiter.observe({ verb: d.method, host: hostOf(d.url) }, d.waitedMs / 1000);
  };
  diagnosticsChannel.subscribe('kubeloop:client:request', onRequest);
  diagnosticsChannel.subscribe('kubeloop:client:throttle', onThrottle);
  const unsubscribe = () => {
    diagnosticsChannel.unsubscribe('kubeloop:client:request', onRequest);
    diagnosticsChannel.unsubscribe('kubeloop:client:throttle', onThrottle);
  };
  subscribed.set(registry, unsubscribe);
  return unsubscribe;
}

import { ConfigMap, newClient } from '@kubeloop/client';
import { FakeClock } from '@kubeloop/core/testing';
import { startApiServer } from '@kubeloop/envtest';
import { newRateLimitingQueue } from '@kubeloop/workqueue';
import { Counter, Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import {
  controllerMetrics,
  controllerMetricsHook,
  leaderElectionMetrics,
  MetricsServer,
  registerRestClientMetrics,
  workqueueMetricsProvider,
} from '../../src/metrics/index.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

async function scrape(
  registry: Registry,
  extra?: ConstructorParameters<typeof MetricsServer>[0]['extraHandlers'],
) {
  const server = new MetricsServer({
    bindAddress: '127.0.0.1:0',
    registry,
    ...(extra ? { extraHandlers: extra } : {}),
  });
  const stop = new AbortController();
  const run = server.start(stop.signal);
  cleanups.push(async () => {
    stop.abort();
    await run;
  });
  await server.ready(stop.signal);
  return async (path = '/metrics') => {
    const res = await fetch(`http://${server.address()}${path}`);
    return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
  };
}

/** The value of one sample line `name{labels} value`, labels given in the exposition's order. */
function sample(body: string, series: string): number | undefined {
  for (const line of body.split('\n')) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return undefined;
}

describe('metrics (controller-runtime names and labels) over HTTP', () => {
  it('C27 (unit): every series of a controller and its queue is present with 0 before any work', async () => {
    const registry = new Registry();
    controllerMetrics(registry, 'a', { maxConcurrentReconciles: 2 });
    const clock = new FakeClock();
    const q = newRateLimitingQueue<string>({
      name: 'a',
      metricsProvider: workqueueMetricsProvider(registry),
      clock,
    });
    cleanups.push(() => q.shutDown());
    const get = await scrape(registry);
    const { status, type, body } = await get();
    expect(status).toBe(200);
    expect(type).toMatch(/^text\/plain; version=0\.0\.4/);
    for (const result of ['success', 'error', 'requeue', 'requeue_after']) {
      expect(sample(body, `controller_runtime_reconcile_total{controller="a",result="${result}"}`)).toBe(0);
    }
    expect(sample(body, 'controller_runtime_reconcile_errors_total{controller="a"}')).toBe(0);
    expect(sample(body, 'controller_runtime_terminal_reconcile_errors_total{controller="a"}')).toBe(0);
    expect(sample(body, 'controller_runtime_reconcile_panics_total{controller="a"}')).toBe(0);
    expect(sample(body, 'controller_runtime_reconcile_time_seconds_count{controller="a"}')).toBe(0);
    expect(sample(body, 'controller_runtime_max_concurrent_reconciles{controller="a"}')).toBe(2);
    expect(sample(body, 'controller_runtime_active_workers{controller="a"}')).toBe(0);
    expect(sample(body, 'workqueue_depth{name="a",controller="a",priority=""}')).toBe(0);
    expect(sample(body, 'workqueue_adds_total{name="a",controller="a"}')).toBe(0);
    expect(sample(body, 'workqueue_retries_total{name="a",controller="a"}')).toBe(0);
    expect(sample(body, 'workqueue_queue_duration_seconds_count{name="a",controller="a"}')).toBe(0);
    expect(sample(body, 'workqueue_work_duration_seconds_count{name="a",controller="a"}')).toBe(0);
    expect(sample(body, 'workqueue_unfinished_work_seconds{name="a",controller="a"}')).toBe(0);
    expect(sample(body, 'workqueue_longest_running_processor_seconds{name="a",controller="a"}')).toBe(0);

    // Then the queue moves: 2 s in the queue on the test clock, and the histogram sees it.
    q.add('k');
    clock.step(2000);
    const got = await q.get();
    q.done(got.item as string);
    const after = (await get()).body;
    expect(sample(after, 'workqueue_adds_total{name="a",controller="a"}')).toBe(1);
    expect(sample(after, 'workqueue_queue_duration_seconds_bucket{le="1",name="a",controller="a"}')).toBe(0);
    expect(sample(after, 'workqueue_queue_duration_seconds_bucket{le="10",name="a",controller="a"}')).toBe(1);
  });

  it('records reconcile results, errors and time; users register their own metrics on the same registry', async () => {
    const registry = new Registry();
    const m = controllerMetrics(registry, 'b', { maxConcurrentReconciles: 1 });
    m.reconciled('error');
    m.reconcileError();
    m.reconciled('requeue_after');
    m.terminalError();
    m.observeReconcileTime(0.2);
    m.activeWorkers(1);
    const mine = new Counter({ name: 'my_operator_widgets_total', help: 'widgets', registers: [registry] });
    mine.inc(3);
    const body = (await (await scrape(registry))()).body;
    expect(sample(body, 'controller_runtime_reconcile_total{controller="b",result="error"}')).toBe(1);
    expect(sample(body, 'controller_runtime_reconcile_total{controller="b",result="requeue_after"}')).toBe(1);
    expect(sample(body, 'controller_runtime_reconcile_total{controller="b",result="success"}')).toBe(0);
    expect(sample(body, 'controller_runtime_reconcile_errors_total{controller="b"}')).toBe(1);
    expect(sample(body, 'controller_runtime_terminal_reconcile_errors_total{controller="b"}')).toBe(1);
    expect(sample(body, 'controller_runtime_reconcile_time_seconds_bucket{le="0.15",controller="b"}')).toBe(
      0,
    );
    expect(sample(body, 'controller_runtime_reconcile_time_seconds_bucket{le="0.2",controller="b"}')).toBe(1);
    expect(sample(body, 'controller_runtime_active_workers{controller="b"}')).toBe(1);
    expect(sample(body, 'my_operator_widgets_total')).toBe(3);
  });

  it('the controller hook counts errors, terminal errors and panics as controller-runtime does', async () => {
    const registry = new Registry();
    const hook = controllerMetricsHook(registry);
    hook.init('c', 3);
    hook.reconciled('c', { result: 'error', seconds: 0.01, terminal: true, panic: false });
    hook.reconciled('c', { result: 'error', seconds: 0.01, terminal: false, panic: true });
    hook.reconciled('c', { result: 'success', seconds: 0.01, terminal: false, panic: false });
    hook.activeWorkers('c', 1);
    const body = (await (await scrape(registry))()).body;
    expect(sample(body, 'controller_runtime_max_concurrent_reconciles{controller="c"}')).toBe(3);
    expect(sample(body, 'controller_runtime_reconcile_total{controller="c",result="error"}')).toBe(2);
    expect(sample(body, 'controller_runtime_reconcile_total{controller="c",result="success"}')).toBe(1);
    expect(sample(body, 'controller_runtime_reconcile_errors_total{controller="c"}')).toBe(2);
    expect(sample(body, 'controller_runtime_terminal_reconcile_errors_total{controller="c"}')).toBe(1);
    expect(sample(body, 'controller_runtime_reconcile_panics_total{controller="c"}')).toBe(1);
    expect(sample(body, 'controller_runtime_reconcile_time_seconds_count{controller="c"}')).toBe(3);
    expect(sample(body, 'controller_runtime_active_workers{controller="c"}')).toBe(1);
  });

  it('leader_election_master_status follows the elector; extra handlers; unknown paths 404', async () => {
    const registry = new Registry();
    const le = leaderElectionMetrics(registry);
    expect(leaderElectionMetrics(registry)).toBe(le);
    le.leaderOff('ns/lock');
    const get = await scrape(registry, { '/debug': (_req, res) => void res.end('dbg') });
    expect(sample((await get()).body, 'leader_election_master_status{name="ns/lock"}')).toBe(0);
    le.leaderOn('ns/lock');
    expect(sample((await get()).body, 'leader_election_master_status{name="ns/lock"}')).toBe(1);
    expect((await get('/debug')).body).toBe('dbg');
    expect((await get('/nope')).status).toBe(404);
    expect(new MetricsServer({ bindAddress: '0', registry }).enabled).toBe(false);
  });

  it('rest_client_* from the client diagnostics channels: code, method, host per attempt', async () => {
    const server = await startApiServer();
    cleanups.push(() => server.stop());
    const registry = new Registry();
    const unsubscribe = registerRestClientMetrics(registry);
    cleanups.push(unsubscribe);
    expect(registerRestClientMetrics(registry)).toBe(unsubscribe);
    const client = newClient({
      host: server.url,
      tlsClientConfig: { caData: server.caPem },
      bearerToken: server.token,
      qps: -1,
      burst: 0,
      timeoutMs: 0,
      userAgent: 'metrics-test',
    });
    cleanups.push(() => client.close());
    await client.create(ConfigMap, { metadata: { namespace: 'default', name: 'm1' } });
    await expect(client.get(ConfigMap, { namespace: 'default', name: 'missing' })).rejects.toThrow();
    const host = new URL(server.url).host;
    const body = (await (await scrape(registry))()).body;
    expect(sample(body, `rest_client_requests_total{code="201",method="POST",host="${host}"}`)).toBe(1);
    expect(sample(body, `rest_client_requests_total{code="404",method="GET",host="${host}"}`)).toBe(1);
    expect(sample(body, `rest_client_request_duration_seconds_count{verb="POST",host="${host}"}`)).toBe(1);
    expect(body).toContain('# TYPE rest_client_rate_limiter_duration_seconds histogram');
  });
});

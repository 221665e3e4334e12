import { newControllerManagedBy, newManager, newMetricsRegistry } from '@kubeloop/builder';
import { ConfigMap } from '@kubeloop/client';
import type { RestConfig } from '@kubeloop/config';
import { FakeClock } from '@kubeloop/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { realCluster, useFaultServer } from './support/fault-server.js';
import { testConfig, useLiveCluster, waitFor } from './support.js';

/** The value of one exposition line `series value` (labels in the exposition's order). */
function sample(body: string, series: string): number | undefined {
  for (const line of body.split('\n'))
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  return undefined;
}

/**
 * A manager on `config` watching `ns` with controllers a (2 workers, 200 ms reconciles) and b (fails once, then
 * requeues after 10 min), its metrics served on a free port; stopped through `stops`. With `clock`, controller
 * a's queue and reconcile timing run on it and each of its reconciles moves it on by exactly 200 ms (so both
 * durations are exact, whatever the load); without, a reconcile waits 200 ms of real time.
 */
async function startMetricsManager(
  config: RestConfig,
  ns: string,
  stops: Array<() => Promise<void>>,
  clock?: FakeClock,
) {
  const registry = newMetricsRegistry();
  const mgr = newManager(config, {
    cache: { defaultNamespaces: [ns] },
    metrics: { bindAddress: '127.0.0.1:0', registry: registry },
  });
  const a = newControllerManagedBy(mgr)
    .for(ConfigMap)
    .named('a')
    .withOptions({ maxConcurrentReconciles: 2, ...(clock ? { clock } : {}) })
    .complete({
      async reconcile() {
        if (clock) clock.setTime(clock.now() + 200);
        else await new Promise<void>((r) => setTimeout(r, 200));
      },
    });
  let bCalls = 0;
  const b = newControllerManagedBy(mgr)
    .for(ConfigMap)
    .named('b')
    .complete({
      async reconcile() {
        bCalls += 1;
        if (bCalls === 1) throw new Error('b fails once');
        return { requeueAfterMs: 600_000 };
      },
    });
  const stop = new AbortController();
  const run = mgr.start(stop.signal);
  stops.push(async () => {
    stop.abort();
    await run;
  });
  await waitFor(() => mgr.metricsServerAddress() !== undefined, 'the metrics server');
  const scrape = async () => (await fetch(`http://${mgr.metricsServerAddress()}/metrics`)).text();
  return { mgr, a, b, scrape };
}

/** Every controller series is present with 0 before anything was reconciled; the worker counts are set. */
function expectZeroSeries(before: string): void {
  for (const c of ['a', 'b']) {
    for (const result of ['success', 'error', 'requeue', 'requeue_after']) {
      expect(
        sample(before, `controller_runtime_reconcile_total{controller="${c}",result="${result}"}`),
        `${c} ${result}`,
      ).toBe(0);
    }
    expect(sample(before, `controller_runtime_reconcile_errors_total{controller="${c}"}`)).toBe(0);
    expect(sample(before, `controller_runtime_terminal_reconcile_errors_total{controller="${c}"}`)).toBe(0);
    expect(sample(before, `controller_runtime_reconcile_panics_total{controller="${c}"}`)).toBe(0);
    expect(sample(before, `controller_runtime_active_workers{controller="${c}"}`)).toBe(0);
    expect(sample(before, `controller_runtime_reconcile_time_seconds_count{controller="${c}"}`)).toBe(0);
    expect(sample(before, `workqueue_adds_total{name="${c}",controller="${c}"}`)).toBe(0);
    expect(before).toMatch(
      new RegExp(`workqueue_depth\\{name="${c}",controller="${c}",priority="[^"]*"\\} 0`),
    );
  }
  expect(sample(before, 'controller_runtime_max_concurrent_reconciles{controller="a"}')).toBe(2);
  expect(sample(before, 'controller_runtime_max_concurrent_reconciles{controller="b"}')).toBe(1);
  expect(before).toContain('# TYPE rest_client_requests_total counter');
}

/** The outcomes of one request to each controller: a succeeded, b failed once and then requeued after. */
async function expectOutcomes(scrape: () => Promise<string>, host: string): Promise<string> {
  await waitFor(async () => {
    const m = await scrape();
    return (
      sample(m, 'controller_runtime_reconcile_total{controller="a",result="success"}') === 1 &&
      sample(m, 'controller_runtime_reconcile_total{controller="b",result="requeue_after"}') === 1
    );
  }, 'both reconciles counted');
  const after = await scrape();
  expect(sample(after, 'controller_runtime_reconcile_total{controller="b",result="error"}')).toBe(1);
  expect(sample(after, 'controller_runtime_reconcile_errors_total{controller="b"}')).toBe(1);
  expect(sample(after, 'controller_runtime_reconcile_total{controller="b",result="success"}')).toBe(0);
  expect(sample(after, 'controller_runtime_reconcile_time_seconds_count{controller="a"}')).toBe(1);
  expect(sample(after, `rest_client_requests_total{code="200",method="GET",host="${host}"}`)).toBeGreaterThan(
    0,
  );
  return after;
}

describe('C27 metrics before the first reconcile, scraped over HTTP', () => {
  const live = useLiveCluster();

  it('C27: every series is present with 0 before any object; one request each is then counted by result', async () => {
    const { ns } = await live.namespace('c27');
    const config = testConfig();
    const { a, b, scrape } = await startMetricsManager(config, ns, live.cleanups);
    expectZeroSeries(await scrape());
    a.queue.add({ namespace: ns, name: 'x' });
    b.queue.add({ namespace: ns, name: 'y' });
    await expectOutcomes(scrape, new URL(config.host).host);
  });
});

// Fault injection: the in-process server holds the ConfigMap list, which a real cluster cannot be made to do.
describe.skipIf(realCluster)(
  'C27 reconcile time excludes queue wait (fault injection: a held list; envtest only)',
  () => {
    const ctx = useFaultServer('kubeloop-c27');
    const stops: Array<() => Promise<void>> = [];
    afterEach(async () => {
      while (stops.length) await stops.pop()?.();
    });

    it('C27: with the ConfigMap list held, reconcile time excludes the queue wait before the workers start', async () => {
      const ns = await ctx.namespace('c27');
      // The ConfigMap list is held until the test lets it go (a barrier no count reaches; clear() releases
      // it): the caches sync, and the workers start, only then. Controller a's timing runs on a fake clock.
      const list = ctx.server.faults.delayRequests({
        match: { initialList: true, resource: 'configmaps', namespace: ns },
        barrier: 1_000_000,
        delayMs: 120_000,
      });
      const clock = new FakeClock();
      const { a, b, scrape } = await startMetricsManager(ctx.config, ns, stops, clock);
      await waitFor(() => list.hits >= 1, 'the ConfigMap list held at the server');
      expectZeroSeries(await scrape());

      // One request waits in a's queue 2 s (of a's clock) before the workers start, then reconciles in 200 ms.
      a.queue.add({ namespace: ns, name: 'x' });
      b.queue.add({ namespace: ns, name: 'y' });
      clock.setTime(clock.now() + 2000);
      list.clear();
      const after = await expectOutcomes(scrape, new URL(ctx.server.url).host);
      expect(
        sample(after, 'controller_runtime_reconcile_time_seconds_bucket{le="0.15",controller="a"}'),
      ).toBe(0);
      expect(
        sample(after, 'controller_runtime_reconcile_time_seconds_bucket{le="0.25",controller="a"}'),
      ).toBe(1);
      expect(sample(after, 'workqueue_queue_duration_seconds_bucket{le="1",name="a",controller="a"}')).toBe(
        0,
      );
      expect(sample(after, 'workqueue_queue_duration_seconds_bucket{le="10",name="a",controller="a"}')).toBe(
        1,
      );
    });
  },
);

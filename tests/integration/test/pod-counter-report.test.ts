// pod-counter as a small real controller: a count of 0 on an empty namespace, pod_counter_pods gauges on
// /metrics and the ConfigMap report (server-side apply, written only when the counts change) all match the
// server's pods. Runs the app's runPodCounter in-process against the run's API server (envtest or a cluster).
import { ConfigMap, Pod } from '@kubeloop/client';
import { type PodCounts, runPodCounter } from '@kubeloop/pod-counter';
import { describe, expect, it } from 'vitest';
import {
  captureLogger,
  type LogRecord,
  type liveClient,
  podManifest,
  testConfig,
  uniqueName,
  useLiveCluster,
  waitFor,
  withNamespace,
} from './support.js';

/** The phase counts of the server's pods in `namespaces` (a pod without a phase counts as `Unknown`). */
async function serverCounts(api: ReturnType<typeof liveClient>, namespaces: string[]): Promise<PodCounts> {
  const out: Record<string, Record<string, number>> = {};
  for (const ns of namespaces) {
    for (const pod of (await api.list(Pod, { namespace: ns })).items) {
      const phase = pod.status?.phase || 'Unknown';
      out[ns] ??= {};
      out[ns][phase] = (out[ns][phase] ?? 0) + 1;
    }
  }
  return out;
}

/** `pod_counter_pods{namespace,phase}` series from a Prometheus text scrape. */
function gaugeSeries(scrape: string): PodCounts {
  const out: Record<string, Record<string, number>> = {};
  for (const m of scrape.matchAll(/^pod_counter_pods\{namespace="([^"]*)",phase="([^"]*)"\} (\d+)$/gm)) {
    out[m[1] as string] ??= {};
    (out[m[1] as string] as Record<string, number>)[m[2] as string] = Number(m[3]);
  }
  return out;
}

describe('pod-counter: count, gauges and ConfigMap report', () => {
  const live = useLiveCluster();

  it('reports 0 once the cache has synced when the namespace has no pods', async () => {
    const { ns } = await live.namespace('pc-empty');
    const records: LogRecord[] = [];
    const ac = new AbortController();
    const run = runPodCounter(testConfig(), {
      signal: ac.signal,
      logger: captureLogger(records),
      namespaces: [ns],
    });
    live.cleanups.push(async () => {
      ac.abort();
      await run;
    });
    await waitFor(() => records.some((r) => r.msg === 'pod count'), 'a first pod count');
    expect(records.filter((r) => r.msg === 'pod count').map((r) => r.count)).toEqual([0]);
  });

  it('gauges and the ConfigMap follow the pods of two namespaces; no write while nothing changes', async () => {
    const api = live.client();
    const [a, b] = [uniqueName('pc-a'), uniqueName('pc-b')];
    live.cleanups.push(await withNamespace(api, a));
    live.cleanups.push(await withNamespace(api, b));
    const other = uniqueName('pc-other');
    live.cleanups.push(await withNamespace(api, other));
    for (const n of ['p1', 'p2']) await api.create(Pod, podManifest(a, n));
    await api.create(Pod, podManifest(b, 'q1'));
    await api.create(Pod, podManifest(other, 'not-counted'));

    const records: LogRecord[] = [];
    const ac = new AbortController();
    let metricsAddress: string | undefined;
    let probesAddress: string | undefined;
    const run = runPodCounter(testConfig(), {
      signal: ac.signal,
      logger: captureLogger(records),
      namespaces: [a, b],
      metricsBindAddress: '127.0.0.1:0',
      healthProbeBindAddress: '127.0.0.1:0',
      report: { namespace: a, name: 'pod-counts' },
      onListening: ({ metrics, probes }) => {
        metricsAddress = metrics;
        probesAddress = probes;
      },
    });
    live.cleanups.push(async () => {
      ac.abort();
      await run;
    });
    const reportData = async () => {
      try {
        return (await api.get(ConfigMap, { namespace: a, name: 'pod-counts' })).data ?? {};
      } catch {
        return {};
      }
    };
    const scrape = async () => gaugeSeries(await (await fetch(`http://${metricsAddress}/metrics`)).text());
    const matches = async () => {
      const want = await serverCounts(api, [a, b]);
      const data = await reportData();
      return (
        metricsAddress !== undefined &&
        JSON.stringify(await scrape()) === JSON.stringify(want) &&
        data['counts.json'] === JSON.stringify(want) &&
        data.total ===
          String(Object.values(want).reduce((t, p) => t + Object.values(p).reduce((x, y) => x + y, 0), 0))
      );
    };
    await waitFor(matches, "the gauges and the ConfigMap report to match the server's pods");
    // Readiness includes the cache sync check (the Deployment's readiness probe relies on it).
    const ready = await fetch(`http://${probesAddress}/readyz?verbose`);
    expect(ready.status).toBe(200);
    expect(await ready.text()).toContain('[+]cache-sync ok');
    const perNamespace = (c: PodCounts) =>
      Object.fromEntries(
        Object.entries(c).map(([ns, p]) => [ns, Object.values(p).reduce((x, y) => x + y, 0)]),
      );
    expect(perNamespace(await scrape())).toEqual({ [a]: 2, [b]: 1 });

    // Churn, then converge again.
    await api.create(Pod, podManifest(b, 'q2'));
    await api.create(Pod, podManifest(b, 'q3'));
    await api.delete(Pod, { namespace: a, name: 'p1' }, { gracePeriodSeconds: 0 });
    await waitFor(matches, "the gauges and the ConfigMap report to match the server's pods");
    expect(perNamespace(JSON.parse((await reportData())['counts.json'] ?? '{}') as PodCounts)).toEqual({
      [a]: 1,
      [b]: 3,
    });

    // Changes that leave the counts as they are trigger reconciles but no write: the ConfigMap keeps its
    // resourceVersion and no further "report written" is logged.
    const written = () => records.filter((r) => r.msg === 'report written').length;
    const before = written();
    const rv = (await api.get(ConfigMap, { namespace: a, name: 'pod-counts' })).metadata?.resourceVersion;
    const reconciles = () => records.filter((r) => r.msg === 'pod count').length;
    const r0 = reconciles();
    for (let i = 0; i < 5; i++) {
      await api.patch(
        Pod,
        { namespace: b, name: 'q1' },
        { type: 'merge', data: { metadata: { labels: { touch: String(i) } } } },
      );
      // One at a time: updates that arrive together are one queued request (the workqueue dedupes them).
      await waitFor(() => reconciles() >= r0 + i + 1, `reconcile after touch ${i}`);
    }
    expect(written()).toBe(before);
    expect((await api.get(ConfigMap, { namespace: a, name: 'pod-counts' })).metadata?.resourceVersion).toBe(
      rv,
    );
    // The report is owned by pod-counter's own field manager, through apply.
    const managers =
      (await api.get(ConfigMap, { namespace: a, name: 'pod-counts' })).metadata?.managedFields ?? [];
    expect(managers.map((m) => [m.manager, m.operation])).toContainEqual(['pod-counter', 'Apply']);
    expect(records.filter((r) => r.level === 'error')).toEqual([]);
  });
});

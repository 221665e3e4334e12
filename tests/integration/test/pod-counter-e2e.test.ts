import { Pod } from '@kubeloop/client';
import { runPodCounter } from '@kubeloop/pod-counter';
import { describe, expect, it } from 'vitest';
import {
  captureLogger,
  type LogRecord,
  podManifest,
  testConfig,
  useLiveCluster,
  waitFor,
} from './support.js';

describe('pod-counter end to end (manager → builder → cache → client → config, over HTTPS)', () => {
  const live = useLiveCluster();

  it('reports a pod count that converges to the server count while pods are created and deleted', async () => {
    const { api, ns } = await live.namespace('e2e-pods');

    for (const n of ['p1', 'p2', 'p3']) await api.create(Pod, podManifest(ns, n));

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

    const counts = () => records.filter((r) => r.msg === 'pod count').map((r) => r.count as number);
    const lastCount = () => counts().at(-1);
    const serverCount = async () => (await api.list(Pod, { namespace: ns })).items.length;
    const converged = async () => lastCount() === (await serverCount());
    const status = () => `last reported ${lastCount()} (reports: ${counts().join(',')})`;

    await waitFor(async () => lastCount() === 3 && (await converged()), status);

    for (const n of ['p4', 'p5', 'p6', 'p7']) await api.create(Pod, podManifest(ns, n));
    await api.delete(Pod, { namespace: ns, name: 'p1' }, { gracePeriodSeconds: 0 });
    await api.delete(Pod, { namespace: ns, name: 'p5' }, { gracePeriodSeconds: 0 });
    await waitFor(converged, status);

    for (const p of (await api.list(Pod, { namespace: ns })).items) {
      await api.delete(Pod, p, { gracePeriodSeconds: 0 });
    }
    await waitFor(async () => lastCount() === 0 && (await converged()), status);

    // Every report is a number and the reconciler's log lines carry the controller's fields.
    const report = records.find((r) => r.msg === 'pod count' && r.namespace === ns)!;
    expect(report).toMatchObject({ controller: 'pod', namespace: ns });
    expect(typeof report.reconcileID).toBe('string');
    expect(counts().every((c) => Number.isInteger(c) && c >= 0)).toBe(true);
    expect(records.filter((r) => r.level === 'error')).toEqual([]);

    ac.abort();
    await run;
    expect(records.at(-1)?.msg).toBe('Manager stopped');
  });
});

import { newManager } from '@kubeloop/builder';
import { ConfigMap, type KubeObject, kind } from '@kubeloop/client';
import { describe, expect, it } from 'vitest';
import { testConfig, useLiveCluster, waitFor } from './support.js';

interface EventV1 extends KubeObject {
  regarding?: { name?: string };
  reason?: string;
  type?: string;
  reportingController?: string;
  series?: { count: number };
}
const EventV1Kind = kind<EventV1>('events.k8s.io/v1', 'Event');

describe('events through the manager (getEventRecorderFor), observed at the server', () => {
  const live = useLiveCluster();

  it('50 identical warnings → one Event with series.count 50: created on the first, series started (count 2) on the second, the rest flushed on stop', async () => {
    const { api, ns } = await live.namespace('events');
    const cm = await api.create(ConfigMap, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { namespace: ns, name: 'noisy' },
    });
    // The Event's write history: a watch from the resourceVersion of an (empty) list made before anything is recorded.
    const { metadata } = await api.list(EventV1Kind, { namespace: ns });
    const seen: Array<{ type: string; count: number | undefined }> = [];
    const watchStop = new AbortController();
    live.cleanups.push(async () => watchStop.abort());
    void (async () => {
      try {
        const from = {
          namespace: ns,
          resourceVersion: metadata?.resourceVersion ?? '',
          signal: watchStop.signal,
        };
        for await (const ev of api.watch(EventV1Kind, from)) {
          if (ev.type !== 'ADDED' && ev.type !== 'MODIFIED' && ev.type !== 'DELETED') continue;
          if (ev.object.reportingController !== 'noisy-controller') continue;
          seen.push({ type: ev.type, count: ev.object.series?.count });
        }
      } catch {
        // stopped
      }
    })();
    const mgr = newManager(testConfig(), { cache: { defaultNamespaces: [ns] } });
    const stop = new AbortController();
    const run = mgr.start(stop.signal);
    live.cleanups.push(async () => {
      stop.abort();
      await run;
    });
    const rec = mgr.getEventRecorderFor('noisy-controller');
    rec.event(cm, 'Warning', 'BackOff', 'Sync', 'try 0');
    await waitFor(
      async () => (await api.list(EventV1Kind, { namespace: ns })).items.length === 1,
      'the Event',
    );
    // The second occurrence starts the series at once; the other 48 wait for the (30 min) refresh — until the
    // stop flushes them.
    for (let i = 1; i < 50; i++) rec.event(cm, 'Warning', 'BackOff', 'Sync', `try ${i}`);
    await waitFor(() => seen.some((s) => s.count === 2), 'the series start');
    stop.abort();
    await run;
    const events = (await api.list(EventV1Kind, { namespace: ns })).items;
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      reason: 'BackOff',
      type: 'Warning',
      reportingController: 'noisy-controller',
      regarding: { name: 'noisy' },
      series: { count: 50 },
    });
    await waitFor(() => seen.some((s) => s.count === 50), 'the watch to see the flushed series');
    expect(seen).toEqual([
      { type: 'ADDED', count: undefined },
      { type: 'MODIFIED', count: 2 },
      { type: 'MODIFIED', count: 50 },
    ]);
  });
});

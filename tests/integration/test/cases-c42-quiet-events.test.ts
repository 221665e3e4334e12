import { newManager } from '@kubeloop/builder';
import { ConfigMap, type KubeObject, kind } from '@kubeloop/client';
import { FakeClock } from '@kubeloop/core/testing';
import { describe, expect, it } from 'vitest';
import { testConfig, useLiveCluster, waitFor } from './support.js';

// C42: the event recorder must not flood the server: 100 identical warnings in a minute cost about 2 writes
// (client-go's events broadcaster: the first occurrence is created, the second starts the series, then the
// count is refreshed on an interval of minutes), the same when the note carries a counter, and the last counts
// are flushed at shutdown. Writes are counted at the server through a watch on the Events.

interface EventV1 extends KubeObject {
  regarding?: { name?: string };
  note?: string;
  reportingController?: string;
  series?: { count: number };
}
const EventV1Kind = kind<EventV1>('events.k8s.io/v1', 'Event');

describe('C42: quiet events', () => {
  const live = useLiveCluster();

  it('C42: 100 identical warnings over 60 s, and 100 whose note carries a counter, cost 2 writes each in the minute; the stop flushes count 100', async () => {
    const { api, ns } = await live.namespace('c42');
    const targets = await Promise.all(
      ['identical', 'counter'].map((name) =>
        api.create(ConfigMap, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: ns, name } }),
      ),
    );
    const { metadata } = await api.list(EventV1Kind, { namespace: ns });
    /** Every write of an Event, as the server saw it: by regarding object, the series count written. */
    const writes = new Map<string, Array<number | undefined>>();
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
          if (ev.type !== 'ADDED' && ev.type !== 'MODIFIED') continue;
          if (ev.object.reportingController !== 'c42-controller') continue;
          const who = ev.object.regarding?.name ?? '';
          writes.set(who, [...(writes.get(who) ?? []), ev.object.series?.count]);
        }
      } catch {
        // stopped
      }
    })();
    const clock = new FakeClock();
    const mgr = newManager(testConfig(), { events: { clock }, cache: { defaultNamespaces: [ns] } });
    const stop = new AbortController();
    const run = mgr.start(stop.signal);
    let stopped = false;
    live.cleanups.push(async () => {
      if (stopped) return;
      stop.abort();
      await run;
    });
    const rec = mgr.getEventRecorderFor('c42-controller');
    const [identical, counter] = targets as [KubeObject, KubeObject];
    const record = (i: number) => {
      rec.event(identical, 'Warning', 'BackOff', 'Sync', 'Back-off restarting failed container');
      rec.event(counter, 'Warning', 'BackOff', 'Sync', `Back-off restarting failed container (attempt ${i})`);
    };
    record(0);
    await waitFor(
      () => writes.get('identical')?.length === 1 && writes.get('counter')?.length === 1,
      'the creates',
    );
    clock.step(600);
    record(1);
    // The second occurrence starts the series at once.
    await waitFor(
      () => writes.get('identical')?.length === 2 && writes.get('counter')?.length === 2,
      'the series starts',
    );
    for (let i = 2; i < 100; i++) {
      clock.step(600); // 100 occurrences of each over 60 s
      record(i);
    }
    // Nothing more is written within the minute (a write would be a visible MODIFIED; the fence below proves
    // the watch is caught up: an Event about another object recorded after everything above).
    rec.event(identical, 'Normal', 'Fence', 'Sync', 'fence');
    await waitFor(() => (writes.get('identical')?.length ?? 0) >= 3, 'the fence');
    expect(writes.get('identical')).toEqual([undefined, 2, undefined]);
    expect(writes.get('counter')).toEqual([undefined, 2]);
    // The stop flushes the last counts: nothing lost.
    stop.abort();
    await run;
    stopped = true;
    const events = (await api.list(EventV1Kind, { namespace: ns })).items.filter(
      (e) => e.reportingController === 'c42-controller' && e.note !== 'fence',
    );
    expect(events.map((e) => [e.regarding?.name, e.series?.count]).sort()).toEqual([
      ['counter', 100],
      ['identical', 100],
    ]);
    // The first note is kept (client-go keeps the first occurrence's message).
    expect(events.find((e) => e.regarding?.name === 'counter')?.note).toBe(
      'Back-off restarting failed container (attempt 0)',
    );
    await waitFor(() => writes.get('counter')?.length === 3, 'the watch to see the flush');
    // Over the whole run: create, series start, final flush — 3 writes per Event instead of ~60.
    expect(writes.get('counter')).toEqual([undefined, 2, 100]);
  });
});

import { newManager } from '@kubeloop/builder';
import { ConfigMap, type KubeObject, kind } from '@kubeloop/client';
import { afterEach, describe, expect, it } from 'vitest';
import { realCluster, useFaultServer } from './support/fault-server.js';
import { waitFor } from './support.js';

interface EventV1 extends KubeObject {
  regarding?: { name?: string };
  reason?: string;
  type?: string;
  reportingController?: string;
  series?: { count: number };
}
const EventV1Kind = kind<EventV1>('events.k8s.io/v1', 'Event');

describe.skipIf(realCluster)(
  'events through the manager (getEventRecorderFor), counted at the server',
  () => {
    const ctx = useFaultServer('kubeloop-events');
    const stops: Array<() => Promise<void>> = [];
    afterEach(async () => {
      while (stops.length) await stops.pop()?.();
    });

    it('50 identical warnings in a second → one Event with series.count 50, one POST, the rest folded into PATCHes; flushed on stop', async () => {
      const ns = await ctx.namespace('events');
      const cm = await ctx.api.create(ConfigMap, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { namespace: ns, name: 'noisy' },
      });
      const mgr = newManager(ctx.config, { namespace: ns, events: { seriesUpdateIntervalMs: 10_000 } });
      const stop = new AbortController();
      const run = mgr.start(stop.signal);
      stops.push(async () => {
        stop.abort();
        await run;
      });
      const rec = mgr.getEventRecorderFor('noisy-controller');
      const t0 = Date.now();
      for (let i = 0; i < 50; i++) rec.event(cm, 'Warning', 'BackOff', 'Sync', `try ${i}`);
      // The create goes out at once; the 49 repeats wait for the (long) series interval — until the stop flushes them.
      await waitFor(
        async () => (await ctx.api.list(EventV1Kind, { namespace: ns })).items.length === 1,
        'the Event',
      );
      stop.abort();
      await run;
      stops.length = 0;
      const events = (await ctx.api.list(EventV1Kind, { namespace: ns })).items;
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        reason: 'BackOff',
        type: 'Warning',
        reportingController: 'noisy-controller',
        regarding: { name: 'noisy' },
        series: { count: 50 },
      });
      const writes = ctx.server.faults.requests({ group: 'events.k8s.io', namespace: ns, since: t0 });
      expect(writes.filter((r) => r.verb === 'create')).toHaveLength(1);
      expect(writes.filter((r) => r.verb === 'patch')).toHaveLength(1);
    });
  },
);

import { listWatchFor, SharedIndexInformer } from '@kubeloop/cache';
import { ConfigMap, Namespace, newClient, Pod } from '@kubeloop/client';
import type { V1Pod } from '@kubeloop/client/models';
import { describe, expect, it } from 'vitest';
import { SelfAdvancingClock } from './support/fake-time.js';
import { realCluster, useFaultServer } from './support/fault-server.js';
import { podManifest, uniqueName, waitFor } from './support.js';

/**
 * Forced watch reconnects (each cycle is a 10 ms watch, a relist and a backoff). The informer's backoff runs
 * on an injected fake clock that moves to each wait as soon as it starts: client-go's own numbers (800 ms
 * doubling to 30 s) at no real cost (the real backoff timer has its canary in reflector-faults, C02). What is
 * left is ~50 ms of real requests per cycle on the loaded CI box, so CI runs 200 cycles: a socket, handle or
 * timer kept per reconnect would show as +200 against a bound of 4, as +500 would with the case's full 500
 * (`C11_RECONNECTS=500`, 25-40 s).
 */
const RECONNECTS = Number(process.env.C11_RECONNECTS ?? 200);
/** One CRUD request per this many reconnects: about one a second at the pace of the cycles. */
const RECONNECTS_PER_CRUD = 20;

describe.skipIf(realCluster)('C11 socket leak (envtest fault injection)', () => {
  const ctx = useFaultServer('kubeloop-c11');

  it(`C11: ${RECONNECTS} forced watch reconnects with ~1 CRUD request/s alongside keep ≤ 4 TCP connections at the server and the client's handles flat`, async () => {
    // One client for everything (setup, informer, CRUD), as a controller's manager has: every connection
    // the server counts is this client's.
    const client = newClient(ctx.config);
    const ns = uniqueName('c11');
    await client.create(Namespace, { metadata: { name: ns } });
    await client.create(Pod, podManifest(ns, 'p0'));
    const clock = new SelfAdvancingClock();
    const inf = new SharedIndexInformer<V1Pod>(listWatchFor(client, Pod, { namespace: ns }), {
      name: 'c11',
      clock,
    });
    // Watches are shaped when they start: the rule must be there before the informer's first watch.
    const t0 = Date.now();
    const ends = ctx.server.faults.endWatches({
      match: { verb: 'watch', namespace: ns },
      afterMs: 10,
      times: RECONNECTS,
    });
    const ac = new AbortController();
    const running = inf.run(ac.signal);
    try {
      await waitFor(() => inf.hasSynced(), 'informer sync');
      await waitFor(() => ends.hits >= 10, 'the first forced watch ends');
      // The baseline once the reconnect cycle runs (pool warm, first watches ended).
      const resources = () => process.getActiveResourcesInfo();
      const handleCount = () => resources().filter((r) => r !== 'Timeout').length;
      const baseline = handleCount();
      const open: number[] = [];
      const handles: number[] = [];
      const timers: number[] = [];
      let crud = 0;
      await waitFor(
        async () => {
          open.push(ctx.server.faults.openConnections());
          handles.push(handleCount());
          timers.push(resources().filter((r) => r === 'Timeout').length);
          // CRUD requests through the same client alongside, one per RECONNECTS_PER_CRUD reconnects.
          if (crud * RECONNECTS_PER_CRUD <= ends.hits) {
            const name = `cm-${crud}`;
            const step = crud++ % 4;
            if (step === 0) await client.create(ConfigMap, { metadata: { namespace: ns, name: 'cm' } });
            if (step === 1) await client.get(ConfigMap, { namespace: ns, name: 'cm' });
            if (step === 2)
              await client.patch(
                ConfigMap,
                { namespace: ns, name: 'cm' },
                { type: 'merge', data: { data: { n: name } } },
              );
            if (step === 3) await client.delete(ConfigMap, { namespace: ns, name: 'cm' });
          }
          return ends.hits >= RECONNECTS;
        },
        () => `${RECONNECTS} forced watch ends (hits ${ends.hits})`,
        240_000,
      );
      const watches = ctx.server.faults.requests({ verb: 'watch', namespace: ns, since: t0 }).length;
      expect(watches).toBeGreaterThanOrEqual(RECONNECTS);
      expect(crud).toBeGreaterThanOrEqual(RECONNECTS / RECONNECTS_PER_CRUD);
      // The informer is still healthy: a change reaches the cache.
      await client.create(Pod, podManifest(ns, 'p1'));
      await waitFor(() => inf.getIndexer().list().length === 2, 'p1 in the cache');
      const histogram = (xs: number[]) => {
        const h: Record<number, number> = {};
        for (const n of xs) h[n] = (h[n] ?? 0) + 1;
        return JSON.stringify(h);
      };
      expect(Math.max(...open), `open connections seen ${histogram(open)}`).toBeLessThanOrEqual(4);
      // Flat: a few handles of slack for requests in flight when sampled, not one per reconnect.
      expect(
        Math.max(...handles) - baseline,
        `handles ${histogram(handles)}, baseline ${baseline}`,
      ).toBeLessThanOrEqual(4);
      // Real timers come and go with the requests in flight, so they are judged by trend: the last quarter
      // of the samples holds no more than the first quarter (medians) plus two, not one more per reconnect.
      const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] ?? 0;
      const quarter = Math.max(1, Math.floor(timers.length / 4));
      expect(
        median(timers.slice(-quarter)) - median(timers.slice(0, quarter)),
        `timers ${histogram(timers)}`,
      ).toBeLessThanOrEqual(2);
    } finally {
      ac.abort();
      await running;
      await client.close();
    }
  }, 300_000);
});

import { listWatchFor, SharedIndexInformer } from '@kubeloop/cache';
import { ConfigMap, Namespace, newClient } from '@kubeloop/client';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { realCluster, useFaultServer } from './support/fault-server.js';
import { uniqueName, waitFor } from './support.js';

describe.skipIf(realCluster)('C13 429 through the limiter, at the informer (envtest fault injection)', () => {
  const ctx = useFaultServer('kubeloop-cases-throttling');

  it('C13: QPS 5 burst 10, informer + 50 GETs under 429 Retry-After 2: retries wait and take tokens, ≤ 5/s after the burst, nothing lost', async () => {
    const ns = uniqueName('c13');
    await ctx.api.create(Namespace, { metadata: { name: ns } });
    const names = Array.from({ length: 50 }, (_, i) => `cm-${i}`);
    await Promise.all(
      names.map((name) => ctx.api.create(ConfigMap, { metadata: { namespace: ns, name }, data: { name } })),
    );

    const throttled = newClient({ ...ctx.config, qps: 5, burst: 10 });
    const lists = ctx.server.faults.failRequests({
      match: { verb: 'list', namespace: ns },
      status: 429,
      retryAfterSeconds: 2,
      times: 3,
    });
    const gets = ctx.server.faults.failRequests({
      match: { verb: 'get', namespace: ns },
      status: 429,
      retryAfterSeconds: 2,
      probability: 0.2,
      seed: 13,
    });
    const inf = new SharedIndexInformer<V1ConfigMap>(listWatchFor(throttled, ConfigMap, { namespace: ns }), {
      name: 'c13',
    });
    const added: string[] = [];
    inf.addEventHandler({ onAdd: (o) => added.push(o.metadata?.name ?? '') });
    const ac = new AbortController();
    const t0 = Date.now();
    const running = inf.run(ac.signal);
    try {
      const results = await Promise.all(
        names.map((name) => throttled.get(ConfigMap, { namespace: ns, name })),
      );
      expect(results.map((r) => r.data?.name)).toEqual(names);
      await waitFor(() => inf.hasSynced(), 'informer sync', 60_000);
      // No event lost: a change after the sync reaches the handler.
      await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: 'late' } });
      await waitFor(() => added.includes('late'), 'the late ADDED event');
      expect(added.filter((n) => n !== 'late').sort()).toEqual([...names].sort());

      expect(lists.hits).toBe(3);
      expect(gets.hits).toBeGreaterThan(0);
      // Every throttled request of this client, as the server saw it (lists and gets; watches are streams).
      const log = ctx.server.faults
        .requests({ namespace: ns, since: t0 })
        .filter((r) => r.verb === 'get' || (r.verb === 'list' && new URLSearchParams(r.query).has('limit')));
      expect(log.filter((r) => r.verb === 'get' && r.status === 200)).toHaveLength(50);
      expect(log.filter((r) => r.verb === 'list' && r.status === 200)).toHaveLength(1);
      expect(log).toHaveLength(50 + gets.hits + 1 + 3);

      // Each retry waited Retry-After: the next request for the same object came ≥ 2 s after its 429
      // (100 ms of slack for the server's clock reading two separate arrivals).
      const byKey = new Map<string, number[]>();
      for (const r of log) {
        const k = `${r.verb}/${r.name ?? ''}`;
        byKey.set(k, [...(byKey.get(k) ?? []), r.time]);
      }
      for (const [k, times] of byKey)
        for (let i = 1; i < times.length; i++)
          expect(times[i]! - times[i - 1]!, `${k} retry ${i}`).toBeGreaterThanOrEqual(1900);

      // Rate: any window holds at most burst + qps × window (token bucket); windows starting ≥ 2 s after
      // the first request hold at most qps × window + 1 (the burst is spent, demand is continuous).
      // Two requests of slack for arrival jitter at the server.
      const times = log.map((r) => r.time).sort((a, b) => a - b);
      const first = times[0]!;
      const last = times[times.length - 1]!;
      const count = (a: number, b: number) => times.filter((t) => t >= a && t < b).length;
      for (let a = first; a <= last; a += 100) {
        expect(count(a, a + 2000), `window at +${a - first} ms`).toBeLessThanOrEqual(10 + 10 + 2);
        if (a >= first + 2000)
          expect(count(a, a + 2000), `window at +${a - first} ms`).toBeLessThanOrEqual(10 + 1 + 2);
      }
    } finally {
      ac.abort();
      await running;
      await throttled.close();
    }
  }, 120_000);
});

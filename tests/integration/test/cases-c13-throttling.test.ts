import { listWatchFor, SharedIndexInformer } from '@kubeloop/cache';
import { ConfigMap, Namespace, newClient } from '@kubeloop/client';
import type { V1ConfigMap } from '@kubeloop/client/models';
import { FakeClock } from '@kubeloop/core/testing';
import { describe, expect, it } from 'vitest';
import {
  mostInWindow,
  recordingLimiter,
  recordTransport,
  runClockUntil,
  settleOnClock,
} from './support/fake-time.js';
import { realCluster, useFaultServer } from './support/fault-server.js';
import { uniqueName, waitFor } from './support.js';

describe.skipIf(realCluster)('C13 429 through the limiter, at the informer (envtest fault injection)', () => {
  const ctx = useFaultServer('kubeloop-cases-throttling');

  // The throttled client's limiter and retry waits run on an injected FakeClock (the transport's `clock`), so
  // Retry-After and the token waits are exact in clock time and cost no real time; the real timer path of
  // the same behaviour is the canary in config-transport-throttling.test.ts.
  it('C13: QPS 5 burst 10, informer + 50 GETs under 429 Retry-After 2: retries wait and take tokens, ≤ 5/s after the burst, nothing lost', async () => {
    const ns = uniqueName('c13');
    await ctx.api.create(Namespace, { metadata: { name: ns } });
    const names = Array.from({ length: 50 }, (_, i) => `cm-${i}`);
    await Promise.all(
      names.map((name) => ctx.api.create(ConfigMap, { metadata: { namespace: ns, name }, data: { name } })),
    );

    const clock = new FakeClock();
    const limiter = recordingLimiter(5, 10, clock);
    const throttled = newClient(
      { ...ctx.config, qps: 5, burst: 10 },
      { transport: { clock, rateLimiter: limiter } },
    );
    const diag = recordTransport(clock, `/namespaces/${ns}/`);
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
      const results = await settleOnClock(
        clock,
        Promise.all(names.map((name) => throttled.get(ConfigMap, { namespace: ns, name }))),
        '50 GETs',
        60_000,
      );
      await runClockUntil(clock, () => inf.hasSynced(), 'informer sync', 60_000);
      expect(results.map((r) => r.data?.name)).toEqual(names);
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
      // Each attempt took a limiter token (discovery requests of the client take theirs too).
      expect(limiter.granted.length).toBeGreaterThanOrEqual(log.length);

      // Each retry waited Retry-After: retry k of a request ended ≥ 2 s of clock time after attempt k - 1,
      // which was a 429.
      const attempts = diag.seen.filter((d) => d.kind === 'request');
      const retried = attempts.filter((d) => d.attempt > 1);
      expect(retried).toHaveLength(gets.hits + 3);
      for (const r of retried) {
        const prev = attempts.findLast((d) => d.url === r.url && d.attempt === r.attempt - 1 && d.at <= r.at);
        expect(prev?.status, `${r.url} attempt ${r.attempt - 1}`).toBe(429);
        expect(r.at - prev!.at, `${r.url} retry ${r.attempt - 1}`).toBeGreaterThanOrEqual(2000);
      }
      const retryWaits = diag.seen.filter((d) => d.kind === 'retry').map((d) => d.waitMs);
      expect(retryWaits).toEqual(Array(gets.hits + 3).fill(2000));

      // Rate, in clock time and exact (the bucket's own bounds): any window of W ms holds at most
      // burst + qps × W tokens, and after the burst of 10 the tokens come at 5/s at most (the n-th token is
      // handed out no earlier than (n - 10) × 200 ms after the client started, at clock time 0).
      expect(mostInWindow(limiter.granted, 2000)).toBeLessThanOrEqual(10 + 10);
      expect(mostInWindow(limiter.granted, 1000)).toBeLessThanOrEqual(10 + 5);
      const sorted = [...limiter.granted].sort((x, y) => x - y);
      sorted.forEach((at, i) => {
        expect(at, `token ${i + 1}`).toBeGreaterThanOrEqual(Math.max(0, i + 1 - 10) * 200);
      });
    } finally {
      diag.stop();
      ac.abort();
      await running;
      await throttled.close();
    }
  }, 120_000);
});

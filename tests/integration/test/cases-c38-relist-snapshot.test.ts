import { listWatchFor, SharedIndexInformer } from '@kubeloop/cache';
import { ConfigMap, Namespace, newClient } from '@kubeloop/client';
import { describe, expect, it, vi } from 'vitest';
import { realCluster, useFaultServer } from './support/fault-server.js';
import { captureLogger, type LogRecord, uniqueName } from './support.js';

// C38 needs envtest's fault injection (drop the watch, shrink the watch history), so this file starts its own
// server; envtest answers `resourceVersion=X&limit=N` as kube-apiserver does (an exact read of the state at X).
describe.skipIf(realCluster)('C38: relist served as an old snapshot', () => {
  const ctx = useFaultServer('kubeloop-c38-test');

  it('C38: after "too old resource version" the informer relists "not older than" its RV (no limit), reaches the latest state and sees a new ConfigMap', async () => {
    const ns = uniqueName('c38');
    await ctx.api.create(Namespace, { metadata: { name: ns } });
    for (const n of ['a', 'b', 'c'])
      await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: n } });
    const client = newClient(ctx.config);
    const records: LogRecord[] = [];
    const inf = new SharedIndexInformer(listWatchFor(client, ConfigMap, { namespace: ns }), {
      name: `configmaps/${ns}`,
      logger: captureLogger(records),
      reflector: { backoff: { initialMs: 200, maxMs: 1000 } },
    });
    const ac = new AbortController();
    const running = inf.run(ac.signal);
    try {
      await vi.waitFor(() => expect(inf.hasSynced()).toBe(true), { timeout: 20_000 });
      const syncedRV = Number(inf.lastSyncResourceVersion);
      // The informer loses its watch and cannot get one back while writes happen (an API server restart) ...
      const outage = ctx.server.faults.failRequests({ match: { verb: 'watch', namespace: ns }, status: 503 });
      await ctx.server.faults.restart({ keepState: true });
      for (const n of ['missed-1', 'missed-2'])
        await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: n } });
      // ... and when it is back, its resourceVersion is older than the watch cache's window: a watch from it
      // gets 410 "too old resource version", as after a kube-apiserver restart.
      ctx.server.faults.setWatchHistoryLimit(1);
      const since = Date.now();
      outage.clear();
      const fresh = await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: 'after' } });
      await vi.waitFor(
        () =>
          expect(inf.getIndexer().get(`${ns}/after`)?.metadata?.resourceVersion).toBe(
            fresh.metadata?.resourceVersion,
          ),
        { timeout: 20_000, interval: 50 },
      );
      expect(inf.getIndexer().get(`${ns}/missed-2`)).toBeDefined();
      const lists = ctx.server.faults
        .requests({ verb: 'list', resource: 'configmaps', namespace: ns })
        .map((r) => new URLSearchParams(r.query));
      // Never an exact read of an old state: a list at a specific resourceVersion carries no limit.
      const exactReads = lists.filter(
        (q) => q.has('limit') && !['', '0', null].includes(q.get('resourceVersion')) && !q.has('continue'),
      );
      expect(exactReads).toEqual([]);
      const relists = ctx.server.faults
        .requests({ verb: 'list', resource: 'configmaps', namespace: ns })
        .filter((r) => r.time >= since);
      expect(relists.length).toBeLessThanOrEqual(3);
      expect(lists.some((q) => Number(q.get('resourceVersion')) >= syncedRV && !q.has('limit'))).toBe(true);
    } finally {
      ctx.server.faults.setWatchHistoryLimit(10_000);
      ctx.server.faults.reset();
      ac.abort();
      await running;
      await client.close();
    }
  });
});

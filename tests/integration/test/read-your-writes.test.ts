import { newControllerManagedBy, newManager } from '@kubeloop/builder';
import { InformerCache } from '@kubeloop/cache';
import { ConfigMap, deepCopy, isNotFound } from '@kubeloop/client';
import type { V1ConfigMap } from '@kubeloop/client/models';
import { describe, expect, it } from 'vitest';
import { realCluster, useFaultServer } from './support/fault-server.js';
import { waitFor } from './support.js';

// Read-your-own-writes (the manager cache's `readYourWrites` option) against the stale read of C08: the
// controller's own write reaches the watch late, and a read right after it must still see it.
describe.skipIf(realCluster)('read-your-own-writes (envtest fault injection)', () => {
  const ctx = useFaultServer('kubeloop-ryow');

  it('a cached get after an update through the tracking client returns the written version, not the older cached one; off, it returns the older one', async () => {
    const ns = await ctx.namespace('ryow-get');
    await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: 'a' }, data: { v: '0' } });
    for (const on of [false, true]) {
      // The update's MODIFIED event reaches the cache's watch 1.5 s late. The rule is in place before the cache
      // starts: a watch takes the rules there are when it opens, and a streaming list (WatchList, the cache's
      // default) opens the one watch the cache keeps before the first read returns.
      const delayed = ctx.server.faults.delayEvents({
        namespace: ns,
        name: 'a',
        delayMs: 1500,
        eventTypes: ['MODIFIED'],
        times: 1,
      });
      const cache = new InformerCache({ client: ctx.api, namespace: ns, readYourWrites: on });
      const client = cache.trackWrites(ctx.api);
      const ac = new AbortController();
      const run = cache.start(ac.signal);
      try {
        const before = await cache.get(ConfigMap, { namespace: ns, name: 'a' });
        const written = await client.update(ConfigMap, {
          ...deepCopy(before),
          data: { v: on ? 'on' : 'off' },
        });
        const read = await cache.get(ConfigMap, { namespace: ns, name: 'a' });
        if (on) {
          expect(read.metadata?.resourceVersion).toBe(written.metadata?.resourceVersion);
          expect(delayed.hits).toBe(1);
          expect(cache.readYourWrites()?.stats().waits.observed).toBe(1);
        } else {
          expect(read.metadata?.resourceVersion).toBe(before.metadata?.resourceVersion);
          expect(cache.readYourWrites()).toBeUndefined();
        }
        // A cached list of the namespace waits the same way (here: nothing is pending any more).
        const listed = await cache.list(ConfigMap, { namespace: ns });
        if (on) expect(listed.items[0]?.metadata?.resourceVersion).toBe(written.metadata?.resourceVersion);
        await waitFor(() => delayed.hits >= 1, 'the delayed event delivered');
      } finally {
        ctx.server.faults.reset();
        ac.abort();
        await run;
      }
    }
  });

  it('C08 with readYourWrites: a second reconcile before the watch delivers our own child never conflicts (0 AlreadyExists, one create), and the wait is in the metrics', async () => {
    const ns = await ctx.namespace('ryow-c08');
    const mgr = newManager(ctx.config, {
      cache: { readYourWrites: { timeoutMs: 10_000 }, defaultNamespaces: [ns] },
    });
    const client = mgr.getClient();
    const outcomes: string[] = [];
    newControllerManagedBy(mgr)
      .for(ConfigMap)
      .named('one-child')
      .withEventFilter<V1ConfigMap>({
        create: (o) => o.metadata?.labels?.role === 'parent',
        update: (_old, o) => o.metadata?.labels?.role === 'parent',
        delete: () => false,
      })
      .complete({
        async reconcile(_ctx, req) {
          try {
            await client.get(ConfigMap, req);
          } catch (err) {
            if (isNotFound(err)) return;
            throw err;
          }
          const existing = await client.list(ConfigMap, {
            namespace: req.namespace,
            labelSelector: { parent: req.name },
          });
          if (existing.items.length === 0) {
            try {
              await client.create(ConfigMap, {
                metadata: {
                  namespace: req.namespace,
                  name: `${req.name}-child`,
                  labels: { parent: req.name },
                },
              });
            } catch (err) {
              outcomes.push('error');
              throw err;
            }
          }
          outcomes.push('ok');
        },
      });
    const ac = new AbortController();
    const run = mgr.start(ac.signal);
    ctx.cleanups.push(async () => {
      ac.abort();
      await run;
    });
    const delayed = ctx.server.faults.delayEvents({
      namespace: ns,
      name: 'p1-child',
      delayMs: 2000,
      order: 'object',
      eventTypes: ['ADDED'],
    });
    const t0 = Date.now();
    await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: 'p1', labels: { role: 'parent' } } });
    await waitFor(
      async () =>
        (await ctx.api.list(ConfigMap, { namespace: ns, labelSelector: { parent: 'p1' } })).items.length ===
        1,
      'the child at the server',
    );
    const before = outcomes.length;
    await ctx.api.patch(
      ConfigMap,
      { namespace: ns, name: 'p1' },
      { type: 'merge', data: { data: { n: '2' } } },
    );
    await waitFor(
      () => outcomes.length > before && delayed.hits >= 1,
      'the second reconcile and the delayed event',
    );
    expect(outcomes).not.toContain('error');
    const creates = ctx.server.faults.requests({
      method: 'POST',
      resource: 'configmaps',
      namespace: ns,
      since: t0,
    });
    expect(creates.filter((r) => r.status === 409)).toEqual([]);
    expect(creates.filter((r) => r.status === 201)).toHaveLength(2); // the parent (admin) and one child
    const text = await mgr.getMetricsRegistry().metrics();
    expect(text).toMatch(/kubeloop_cache_read_your_writes_waits_total\{outcome="observed"\} [1-9]/);
    expect(text).toMatch(/kubeloop_cache_read_your_writes_pending 0/);
  });
});

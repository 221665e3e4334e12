import { newControllerManagedBy, newManager } from '@kubeloop/builder';
import { type CacheInformerInfo, InformerCache, listWatchFor, SharedIndexInformer } from '@kubeloop/cache';
import { ConfigMap } from '@kubeloop/client';
import { describe, expect, it } from 'vitest';
import { realCluster, useFaultServer } from './support/fault-server.js';
import { series } from './support/prometheus.js';
import { waitFor } from './support.js';

// What a user sees of the manager's caches: the informer_* metrics and /debug/cache, scraped over HTTP.
describe.skipIf(realCluster)('cache observability: informer metrics and /debug/cache', () => {
  const ctx = useFaultServer('kubeloop-cache-obs');

  it('per informer: objects, bytes, events by type, watch restarts and relists (after faults), handler time, last event age; /debug/cache lists the informers as JSON', async () => {
    const ns = await ctx.namespace('cache-obs');
    for (let i = 0; i < 5; i++)
      await ctx.api.create(ConfigMap, {
        metadata: { namespace: ns, name: `c${i}` },
        data: { v: 'x'.repeat(100) },
      });
    const mgr = newManager(ctx.config, {
      cache: { defaultNamespaces: [ns] },
      metrics: { bindAddress: '127.0.0.1:0' },
    });
    let reconciles = 0;
    newControllerManagedBy(mgr)
      .for(ConfigMap)
      .complete({
        async reconcile() {
          reconciles++;
        },
      });
    const ac = new AbortController();
    const run = mgr.start(ac.signal);
    ctx.cleanups.push(async () => {
      ac.abort();
      await run;
    });
    await waitFor(() => reconciles >= 5, 'the initial reconciles');
    const base = `http://${mgr.metricsServerAddress()}`;
    const scrape = async () => (await fetch(`${base}/metrics`)).text();
    const cm = { kind: 'ConfigMap', version: 'v1', group: '' };

    // Events through the watch: an add, an update, a delete.
    await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: 'new' } });
    await ctx.api.patch(
      ConfigMap,
      { namespace: ns, name: 'c0' },
      { type: 'merge', data: { data: { v: 'y' } } },
    );
    await ctx.api.delete(ConfigMap, { namespace: ns, name: 'c1' });
    await waitFor(
      async () => series(await scrape(), 'informer_events_total', { ...cm, type: 'DELETED' }) === 1,
      'the DELETED event counted',
    );
    let text = await scrape();
    expect(series(text, 'informer_store_objects', cm)).toBe(5);
    expect(series(text, 'informer_events_total', { ...cm, type: 'ADDED' })).toBe(1);
    expect(series(text, 'informer_events_total', { ...cm, type: 'MODIFIED' })).toBe(1);
    expect(series(text, 'informer_synced', cm)).toBe(1);
    expect(series(text, 'informer_store_bytes', cm)).toBeGreaterThan(5 * 100);
    expect(series(text, 'informer_last_event_age_seconds', cm)).toBeGreaterThanOrEqual(0);
    expect(series(text, 'informer_handler_notifications_total', cm)).toBe(3);
    expect(series(text, 'informer_handler_seconds_total', cm)).toBeGreaterThanOrEqual(0);
    expect(series(text, 'informer_store_resource_version', cm)).toBeGreaterThan(0);
    expect(series(text, 'informer_relists_total', cm)).toBe(0);
    expect(series(text, 'informer_watch_restarts_total', cm)).toBe(0);

    // A server restart (state kept) ends the watch: a re-watch; a 410 on that watch: a relist.
    ctx.server.faults.expire({ match: { verb: 'watch' }, times: 1 });
    await ctx.server.faults.restart({ keepState: true });
    await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: 'after' } });
    await waitFor(async () => {
      const t = await scrape();
      return (
        (series(t, 'informer_relists_total', cm) ?? 0) >= 1 &&
        (series(t, 'informer_watch_restarts_total', cm) ?? 0) >= 1 &&
        series(t, 'informer_store_objects', cm) === 6
      );
    }, 'a relist and a watch restart counted, and the cache caught up');

    const res = await fetch(`${base}/debug/cache`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await res.json()) as { informers: CacheInformerInfo[]; readYourWrites: unknown };
    expect(body.readYourWrites).toBeNull();
    const inf = body.informers.find((i) => i.kind === 'ConfigMap');
    expect(inf).toMatchObject({
      name: 'v1/ConfigMap',
      group: '',
      version: 'v1',
      metadataOnly: false,
      namespaces: [ns],
      synced: true,
      stats: { objects: 6, bytesEstimated: true },
    });
    expect(inf?.stats.relists).toBeGreaterThanOrEqual(1);
    // Objects themselves are not served.
    expect(JSON.stringify(body)).not.toContain('x'.repeat(100));
    expect((await fetch(`${base}/debug/cache`, { method: 'POST' })).status).toBe(405);
    text = await scrape();
    expect(series(text, 'informer_store_objects', cm)).toBe(6);
  });

  it('a compact store reports its exact JSON bytes; a cache of several namespaces sums its namespaces', async () => {
    const lw = listWatchFor(ctx.api, ConfigMap, {});
    const compact = new SharedIndexInformer(lw, { compactStore: true });
    const stop = new AbortController();
    const running = compact.run(stop.signal);
    try {
      await compact.waitForSync();
      const st = compact.stats();
      expect(st.bytesEstimated).toBe(false);
      const exact = compact
        .getIndexer()
        .list()
        .reduce((n, o) => n + Buffer.byteLength(JSON.stringify(o)), 0);
      expect(st.bytes).toBe(exact);
    } finally {
      stop.abort();
      await running;
    }
    const a = await ctx.namespace('cache-obs-a');
    const b = await ctx.namespace('cache-obs-b');
    await ctx.api.create(ConfigMap, { metadata: { namespace: a, name: 'x' } });
    await ctx.api.create(ConfigMap, { metadata: { namespace: b, name: 'y' } });
    await ctx.api.create(ConfigMap, { metadata: { namespace: b, name: 'z' } });
    const cache = new InformerCache({
      client: ctx.api,
      defaultNamespaces: [a, b],
    });
    const ac = new AbortController();
    const run = cache.start(ac.signal);
    try {
      await cache.list(ConfigMap, {});
      const [info] = cache.informers();
      expect(info?.stats.objects).toBe(3);
      expect(info?.namespaces).toEqual([a, b]);
      expect(info?.stats.events.added).toBe(0); // the initial lists are not watch events
    } finally {
      ac.abort();
      await run;
    }
  });
});

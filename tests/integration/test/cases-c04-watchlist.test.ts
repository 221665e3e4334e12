import { InformerCache } from '@kubeloop/cache';
import { ConfigMap, Namespace, newClient } from '@kubeloop/client';
import { describe, expect, it, vi } from 'vitest';
import { realCluster, useFaultServer } from './support/fault-server.js';
import { captureLogger, type LogRecord, uniqueName } from './support.js';

// C04 suppresses the end-of-initial-events bookmark, which needs envtest's fault injection.
describe.skipIf(realCluster)('WatchList: streaming initial sync (C04)', () => {
  const ctx = useFaultServer('kubeloop-c04-test');

  async function setup(prefix: string) {
    const ns = uniqueName(prefix);
    await ctx.api.create(Namespace, { metadata: { name: ns } });
    for (const n of ['a', 'b', 'c'])
      await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: n } });
    const client = newClient(ctx.config);
    const records: LogRecord[] = [];
    const cache = new InformerCache({
      client,
      defaultNamespaces: [ns],
      useWatchList: true,
      logger: captureLogger(records),
      reflector: { watchListTimeoutMs: 1500, backoff: { initialMs: 100, maxMs: 500 } },
    });
    const ac = new AbortController();
    const running = cache.start(ac.signal);
    ctx.cleanups.push(async () => {
      ac.abort();
      await running;
      await client.close();
    });
    const requests = (verb: 'list' | 'watch') =>
      ctx.server.faults
        .requests({ verb, resource: 'configmaps', namespace: ns })
        .map((r) => new URLSearchParams(r.query));
    return { ns, cache, records, requests };
  }

  it('C04 (served): the informer syncs from one streaming watch, with no list, and the same watch delivers later changes', async () => {
    const { ns, cache, requests } = await setup('c04ok');
    expect((await cache.list(ConfigMap)).items.map((o) => o.metadata?.name).sort()).toEqual(['a', 'b', 'c']);
    expect(requests('list')).toEqual([]);
    const [w] = requests('watch');
    expect(w?.get('sendInitialEvents')).toBe('true');
    expect(w?.get('resourceVersionMatch')).toBe('NotOlderThan');
    expect(w?.get('allowWatchBookmarks')).toBe('true');
    await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: 'd' } });
    await vi.waitFor(async () => expect((await cache.list(ConfigMap)).items).toHaveLength(4), {
      timeout: 20_000,
    });
    expect(requests('watch')).toHaveLength(1);
  });

  it('C04: without the end bookmark the informer falls back to list + watch after its timeout, syncs, and logs it once', async () => {
    ctx.server.faults.suppressInitialEventsEnd({ match: { resource: 'configmaps' } });
    const { ns, cache, records, requests } = await setup('c04');
    const inf = cache.getInformer(ConfigMap);
    expect(await cache.waitForCacheSync()).toBe(true);
    expect(inf.hasSynced()).toBe(true);
    expect((await cache.list(ConfigMap)).items.map((o) => o.metadata?.name).sort()).toEqual(['a', 'b', 'c']);
    expect(requests('list').length).toBeGreaterThanOrEqual(1);
    await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: 'd' } });
    await vi.waitFor(async () => expect((await cache.list(ConfigMap)).items).toHaveLength(4), {
      timeout: 20_000,
    });
    const fallbacks = records.filter((r) => r.level === 'warn' && /streaming list/.test(r.msg));
    expect(fallbacks).toHaveLength(1);
    // After the fallback no more streaming watches are tried.
    expect(requests('watch').filter((q) => q.get('sendInitialEvents') === 'true')).toHaveLength(1);
  });
});

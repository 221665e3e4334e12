import { InformerCache } from '@kubeloop/cache';
import { type ApiClient, ConfigMap, Namespace, newClient } from '@kubeloop/client';
import { FakeClock } from '@kubeloop/core/testing';
import { describe, expect, it, vi } from 'vitest';
import { realCluster, useFaultServer } from './support/fault-server.js';
import { probeWatchList } from './support/features.js';
import { type RecordedRequest, recordingClient } from './support/recording-transport.js';
import { captureLogger, type LogRecord, testConfig, uniqueName, useLiveCluster } from './support.js';

/**
 * A streaming-list InformerCache on `client` for `ns`, stopped through `cleanups`. `clock` times the 1.5 s
 * wait for the end bookmark (and the backoff): a test that expects the stream to end well gives a fake
 * clock, so a loaded machine cannot turn a slow stream into a fallback.
 */
function watchListCache(
  client: ApiClient,
  ns: string,
  cleanups: Array<() => Promise<void>>,
  clock?: FakeClock,
) {
  const records: LogRecord[] = [];
  const cache = new InformerCache({
    client,
    defaultNamespaces: [ns],
    useWatchList: true,
    logger: captureLogger(records),
    reflector: { watchListTimeoutMs: 1500, backoff: { initialMs: 100, maxMs: 500 } },
    ...(clock ? { clock } : {}),
  });
  const ac = new AbortController();
  const running = cache.start(ac.signal);
  cleanups.push(async () => {
    ac.abort();
    await running;
    await client.close();
  });
  return { cache, records };
}

describe('WatchList: streaming initial sync (C04)', () => {
  const live = useLiveCluster();

  it('C04 (served): the informer syncs from one streaming watch, with no list, and the same watch delivers later changes', async (ctx) => {
    const { api, ns } = await live.namespace('c04ok');
    // WatchList is the server's choice (a feature gate, and storage support): envtest serves it; a real server may
    // refuse it (kube-apiserver 1.32 on etcd 3.4 answers 500). Detected here, never assumed.
    const probe = await probeWatchList(api, ns);
    // envtest serves it: there the probe must say so (a probe that always said "not served" would skip forever).
    if (!realCluster) expect(probe, 'envtest serves WatchList').toMatchObject({ served: true });
    if (!probe.served) ctx.skip(`the API server does not serve WatchList: ${probe.why}`);
    for (const n of ['a', 'b', 'c']) await api.create(ConfigMap, { metadata: { namespace: ns, name: n } });
    // Every request the cache's client sends, recorded on its own transport (no server request log needed).
    const { client, requests: sent } = recordingClient(testConfig());
    const { cache } = watchListCache(client, ns, live.cleanups, new FakeClock());
    const requests = (verb: 'list' | 'watch') =>
      sent
        .filter((r: RecordedRequest) => r.method === 'GET')
        .map((r) => {
          const [path, query] = r.path.split('?');
          return { path, q: new URLSearchParams(query ?? '') };
        })
        .filter(
          ({ path, q }) =>
            path === `/api/v1/namespaces/${ns}/configmaps` &&
            (q.get('watch') === 'true') === (verb === 'watch'),
        )
        .map(({ q }) => q);
    expect((await cache.list(ConfigMap)).items.map((o) => o.metadata?.name).sort()).toEqual(['a', 'b', 'c']);
    expect(requests('list')).toEqual([]);
    const [w] = requests('watch');
    expect(w?.get('sendInitialEvents')).toBe('true');
    expect(w?.get('resourceVersionMatch')).toBe('NotOlderThan');
    expect(w?.get('allowWatchBookmarks')).toBe('true');
    await api.create(ConfigMap, { metadata: { namespace: ns, name: 'd' } });
    await vi.waitFor(async () => expect((await cache.list(ConfigMap)).items).toHaveLength(4), {
      timeout: 20_000,
    });
    expect(requests('watch')).toHaveLength(1);
  });
});

// Fault injection: the in-process server suppresses the end-of-initial-events bookmark, which a real
// cluster cannot be made to do.
describe.skipIf(realCluster)(
  'WatchList: fallback without the end bookmark (C04, fault injection; envtest only)',
  () => {
    const ctx = useFaultServer('kubeloop-c04-test');

    async function setup(prefix: string) {
      const ns = uniqueName(prefix);
      await ctx.api.create(Namespace, { metadata: { name: ns } });
      for (const n of ['a', 'b', 'c'])
        await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: n } });
      const { cache, records } = watchListCache(newClient(ctx.config), ns, ctx.cleanups);
      const requests = (verb: 'list' | 'watch') =>
        ctx.server.faults
          .requests({ verb, resource: 'configmaps', namespace: ns })
          .map((r) => new URLSearchParams(r.query));
      return { ns, cache, records, requests };
    }

    it('C04: without the end bookmark the informer falls back to list + watch after its timeout, syncs, and logs it once', async () => {
      ctx.server.faults.suppressInitialEventsEnd({ match: { resource: 'configmaps' } });
      const { ns, cache, records, requests } = await setup('c04');
      const inf = cache.getInformer(ConfigMap);
      expect(await cache.waitForCacheSync()).toBe(true);
      expect(inf.hasSynced()).toBe(true);
      expect((await cache.list(ConfigMap)).items.map((o) => o.metadata?.name).sort()).toEqual([
        'a',
        'b',
        'c',
      ]);
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
  },
);

import { InformerCache } from '@kubeloop/cache';
import { type ApiClient, ConfigMap, Namespace, newClient } from '@kubeloop/client';
import type { RestConfig } from '@kubeloop/config';
import { type ApiServer, startApiServer } from '@kubeloop/envtest';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { captureLogger, type LogRecord, uniqueName } from './support.js';

// C04 suppresses the end-of-initial-events bookmark, which needs envtest's fault injection.
const realCluster = process.env.USE_EXISTING_CLUSTER === 'true';

describe.skipIf(realCluster)('WatchList: streaming initial sync (C04)', () => {
  let server: ApiServer;
  let config: RestConfig;
  let api: ApiClient;
  const cleanups: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    server = await startApiServer();
    config = {
      host: server.url,
      tlsClientConfig: { caData: server.caPem },
      bearerToken: server.token,
      qps: -1,
      burst: 0,
      timeoutMs: 0,
      userAgent: 'kubeloop-c04-test',
    };
    api = newClient(config);
  });
  afterAll(async () => {
    await api?.close();
    await server?.stop();
  });
  afterEach(async () => {
    server.faults.reset();
    while (cleanups.length) await cleanups.pop()!();
  });

  async function setup(prefix: string) {
    const ns = uniqueName(prefix);
    await api.create(Namespace, { metadata: { name: ns } });
    for (const n of ['a', 'b', 'c']) await api.create(ConfigMap, { metadata: { namespace: ns, name: n } });
    const client = newClient(config);
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
    cleanups.push(async () => {
      ac.abort();
      await running;
      await client.close();
    });
    const requests = (verb: 'list' | 'watch') =>
      server.faults
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
    await api.create(ConfigMap, { metadata: { namespace: ns, name: 'd' } });
    await vi.waitFor(async () => expect((await cache.list(ConfigMap)).items).toHaveLength(4), {
      timeout: 20_000,
    });
    expect(requests('watch')).toHaveLength(1);
  });

  it('C04: without the end bookmark the informer falls back to list + watch after its timeout, syncs, and logs it once', async () => {
    server.faults.suppressInitialEventsEnd({ match: { resource: 'configmaps' } });
    const { ns, cache, records, requests } = await setup('c04');
    const inf = cache.getInformer(ConfigMap);
    expect(await cache.waitForCacheSync()).toBe(true);
    expect(inf.hasSynced()).toBe(true);
    expect((await cache.list(ConfigMap)).items.map((o) => o.metadata?.name).sort()).toEqual(['a', 'b', 'c']);
    expect(requests('list').length).toBeGreaterThanOrEqual(1);
    await api.create(ConfigMap, { metadata: { namespace: ns, name: 'd' } });
    await vi.waitFor(async () => expect((await cache.list(ConfigMap)).items).toHaveLength(4), {
      timeout: 20_000,
    });
    const fallbacks = records.filter((r) => r.level === 'warn' && /streaming list/.test(r.msg));
    expect(fallbacks).toHaveLength(1);
    // After the fallback no more streaming watches are tried.
    expect(requests('watch').filter((q) => q.get('sendInitialEvents') === 'true')).toHaveLength(1);
  });
});

import { listWatchFor, SharedIndexInformer } from '@kubeloop/cache';
import { type ApiClient, ConfigMap, Namespace, newClient } from '@kubeloop/client';
import type { RestConfig } from '@kubeloop/config';
import { type ApiServer, startApiServer } from '@kubeloop/envtest';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { captureLogger, type LogRecord, uniqueName } from './support.js';

// C38 needs envtest's fault injection (drop the watch, shrink the watch history), so this file starts its own
// server; envtest answers `resourceVersion=X&limit=N` as kube-apiserver does (an exact read of the state at X).
const realCluster = process.env.USE_EXISTING_CLUSTER === 'true';

describe.skipIf(realCluster)('C38: relist served as an old snapshot', () => {
  let server: ApiServer;
  let config: RestConfig;
  let api: ApiClient;

  beforeAll(async () => {
    server = await startApiServer();
    config = {
      host: server.url,
      tlsClientConfig: { caData: server.caPem },
      bearerToken: server.token,
      qps: -1,
      burst: 0,
      timeoutMs: 0,
      userAgent: 'kubeloop-c38-test',
    };
    api = newClient(config);
  });
  afterAll(async () => {
    await api?.close();
    await server?.stop();
  });

  it('C38: after "too old resource version" the informer relists "not older than" its RV (no limit), reaches the latest state and sees a new ConfigMap', async () => {
    const ns = uniqueName('c38');
    await api.create(Namespace, { metadata: { name: ns } });
    for (const n of ['a', 'b', 'c']) await api.create(ConfigMap, { metadata: { namespace: ns, name: n } });
    const client = newClient(config);
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
      const outage = server.faults.failRequests({ match: { verb: 'watch', namespace: ns }, status: 503 });
      await server.faults.restart({ keepState: true });
      for (const n of ['missed-1', 'missed-2'])
        await api.create(ConfigMap, { metadata: { namespace: ns, name: n } });
      // ... and when it is back, its resourceVersion is older than the watch cache's window: a watch from it
      // gets 410 "too old resource version", as after a kube-apiserver restart.
      server.faults.setWatchHistoryLimit(1);
      const since = Date.now();
      outage.clear();
      const fresh = await api.create(ConfigMap, { metadata: { namespace: ns, name: 'after' } });
      await vi.waitFor(
        () =>
          expect(inf.getIndexer().get(`${ns}/after`)?.metadata?.resourceVersion).toBe(
            fresh.metadata?.resourceVersion,
          ),
        { timeout: 20_000, interval: 50 },
      );
      expect(inf.getIndexer().get(`${ns}/missed-2`)).toBeDefined();
      const lists = server.faults
        .requests({ verb: 'list', resource: 'configmaps', namespace: ns })
        .map((r) => new URLSearchParams(r.query));
      // Never an exact read of an old state: a list at a specific resourceVersion carries no limit.
      const exactReads = lists.filter(
        (q) => q.has('limit') && !['', '0', null].includes(q.get('resourceVersion')) && !q.has('continue'),
      );
      expect(exactReads).toEqual([]);
      const relists = server.faults
        .requests({ verb: 'list', resource: 'configmaps', namespace: ns })
        .filter((r) => r.time >= since);
      expect(relists.length).toBeLessThanOrEqual(3);
      expect(lists.some((q) => Number(q.get('resourceVersion')) >= syncedRV && !q.has('limit'))).toBe(true);
    } finally {
      server.faults.setWatchHistoryLimit(10_000);
      server.faults.reset();
      ac.abort();
      await running;
      await client.close();
    }
  });
});

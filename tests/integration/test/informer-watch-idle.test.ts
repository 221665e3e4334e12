// A stalled watch must not leave an informer stale, and the cut must not cost a
// relist. kube-apiserver sends no bookmark to the watches of a resource type that saw no event since it started
// (its cacher skips bookmarks until then), so a quiet watch is silent for its whole timeoutSeconds; the
// transport's idle watchdog cuts it (TransportError IdleTimeout) and the reflector resumes from the last
// resourceVersion. Real time on purpose: the watchdog is undici's body/headers timer (1.5 s here).
import { listWatchFor, SharedIndexInformer } from '@kubeloop/cache';
import { ConfigMap, newClient } from '@kubeloop/client';
import type { V1ConfigMap } from '@kubeloop/client/models';
import { describe, expect, it } from 'vitest';
import { realCluster, useFaultServer } from './support/fault-server.js';
import { waitFor } from './support.js';

describe.skipIf(realCluster)('informer watch cut by the idle watchdog (envtest fault injection)', () => {
  const ctx = useFaultServer('kubeloop-watch-idle-test');

  async function informer(ns: string) {
    const client = newClient(ctx.config, { transport: { watchIdleTimeoutMs: 1500 } });
    const inf = new SharedIndexInformer<V1ConfigMap>(listWatchFor(client, ConfigMap, { namespace: ns }), {
      name: `configmaps/${ns}`,
    });
    const adds: string[] = [];
    inf.addEventHandler({ onAdd: (o) => adds.push(o.metadata?.name ?? '') });
    const ac = new AbortController();
    const running = inf.run(ac.signal);
    ctx.cleanups.push(async () => {
      ac.abort();
      await running;
      await client.close({ force: true });
    });
    await waitFor(() => inf.hasSynced(), 'informer sync');
    return { inf, adds };
  }

  const informerRequests = (ns: string, verb: 'list' | 'watch') =>
    ctx.server.faults
      .requests({ verb, resource: 'configmaps', namespace: ns })
      .filter((r) => verb === 'watch' || new URLSearchParams(r.query).has('resourceVersion'));

  it.each([
    ['after the response headers', true],
    ['before any response header', false],
  ])(
    'a black-holed watch (%s) is cut and resumed from the list resourceVersion, no relist; a later create arrives',
    async (_what, sendHeaders) => {
      const ns = await ctx.namespace('idle');
      await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: 'before' } });
      const hole = ctx.server.faults.blackhole({
        match: { verb: 'watch', resource: 'configmaps', namespace: ns },
        sendHeaders,
        times: 1,
      });
      const { inf, adds } = await informer(ns);
      const listRV = informerRequests(ns, 'list')[0];
      await waitFor(
        () => hole.hits === 1 && informerRequests(ns, 'watch').length >= 2,
        'a second watch after the cut',
      );
      await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: 'after' } });
      await waitFor(
        () => inf.getIndexer().get(`${ns}/after`) !== undefined,
        'the object created after the stall',
      );
      expect(adds.sort()).toEqual(['after', 'before']);
      expect(informerRequests(ns, 'list')).toHaveLength(1);
      const [first, second] = informerRequests(ns, 'watch');
      expect(listRV).toBeDefined();
      expect(new URLSearchParams(second?.query).get('resourceVersion')).toBe(
        new URLSearchParams(first?.query).get('resourceVersion'),
      );
    },
  );
});

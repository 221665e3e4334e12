import { generationChangedPredicate, newControllerManagedBy, newManager } from '@kubeloop/builder';
import { ConfigMap, type KubeObject, kind } from '@kubeloop/client';
import { describe, expect, it, vi } from 'vitest';
import { installCRD } from './support/crds.js';
import {
  captureLogger,
  type LogRecord,
  testConfig,
  uniqueName,
  useLiveCluster,
  withNamespace,
} from './support.js';

interface App extends KubeObject {
  spec?: { replicas?: number };
  status?: { seen?: number };
}
const App = kind<App>('c25.example.com/v1', 'App');

describe('C25 generationChangedPredicate on kinds without metadata.generation', () => {
  const live = useLiveCluster();

  it('C25: owned ConfigMaps (no generation) pass and warn once; App status and label edits give 0 reconciles, spec edits 1 each', async () => {
    const api = live.client();
    await installCRD(api, {
      group: 'c25.example.com',
      kind: 'App',
      plural: 'apps',
      scope: 'Namespaced',
      statusSubresource: true,
    });
    const ns = uniqueName('c25');
    live.cleanups.push(await withNamespace(api, ns));

    const app = await api.create(App, { metadata: { namespace: ns, name: 'a1' }, spec: { replicas: 1 } });
    const fence = await api.create(App, {
      metadata: { namespace: ns, name: 'fence' },
      spec: { replicas: 1 },
    });
    const ownerRef = {
      apiVersion: 'c25.example.com/v1',
      kind: 'App',
      name: 'a1',
      uid: app.metadata?.uid as string,
      controller: true,
    };
    await api.create(ConfigMap, {
      metadata: { namespace: ns, name: 'cfg', ownerReferences: [ownerRef] },
      data: { v: '0' },
    });

    const records: LogRecord[] = [];
    const log = captureLogger(records);
    const mgr = newManager(testConfig(), { logger: log, cache: { defaultNamespaces: [ns] } });
    const counts: Record<string, number> = {};
    newControllerManagedBy(mgr)
      .for(App, { predicates: [generationChangedPredicate({ logger: log })] })
      .owns(ConfigMap, { predicates: [generationChangedPredicate({ logger: log })] })
      .withOptions({ maxConcurrentReconciles: 1 })
      .complete({
        async reconcile(_ctx, req) {
          counts[req.name] = (counts[req.name] ?? 0) + 1;
        },
      });
    const ac = new AbortController();
    const run = mgr.start(ac.signal);
    live.cleanups.push(async () => {
      ac.abort();
      await run;
    });
    await vi.waitFor(() => expect(counts).toMatchObject({ a1: 1, fence: 1 }), { timeout: 20_000 });

    /** Bumps the fence App's spec and waits for its reconcile: every App event before it was handled. */
    let fenceGen = 1;
    const fenceAppEvents = async () => {
      const want = (counts.fence ?? 0) + 1;
      fenceGen++;
      await api.patch(
        App,
        { namespace: ns, name: 'fence' },
        { type: 'merge', data: { spec: { replicas: fenceGen } } },
      );
      await vi.waitFor(() => expect(counts.fence).toBe(want), { timeout: 20_000 });
    };

    // 5 data edits of the owned ConfigMap: each passes (no generation) and reconciles the owner.
    for (let i = 1; i <= 5; i++) {
      const before = counts.a1 ?? 0;
      await api.patch(
        ConfigMap,
        { namespace: ns, name: 'cfg' },
        { type: 'merge', data: { data: { v: `${i}` } } },
      );
      await vi.waitFor(() => expect(counts.a1).toBe(before + 1), { timeout: 20_000 });
    }
    expect(counts.a1).toBe(6);
    expect(records.filter((r) => r.level === 'warn' && /no metadata.generation/.test(r.msg))).toHaveLength(1);

    // 5 status writes and 2 label edits on the App: the generation does not move, nothing reconciles.
    for (let i = 1; i <= 5; i++) {
      await api
        .status()
        .patch(App, { namespace: ns, name: 'a1' }, { type: 'merge', data: { status: { seen: i } } });
    }
    for (const v of ['x', 'y']) {
      await api.patch(
        App,
        { namespace: ns, name: 'a1' },
        { type: 'merge', data: { metadata: { labels: { l: v } } } },
      );
    }
    await fenceAppEvents();
    expect(counts.a1).toBe(6);

    // 3 spec edits: 3 reconciles.
    for (let i = 2; i <= 4; i++) {
      const before = counts.a1 ?? 0;
      await api.patch(App, { namespace: ns, name: 'a1' }, { type: 'merge', data: { spec: { replicas: i } } });
      await vi.waitFor(() => expect(counts.a1).toBe(before + 1), { timeout: 20_000 });
    }
    await fenceAppEvents();
    expect(counts.a1).toBe(9);
    expect(fence.metadata?.generation).toBe(1);
  });
});

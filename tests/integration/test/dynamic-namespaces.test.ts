import { newControllerManagedBy, newManager } from '@kubeloop/builder';
import { type CacheInformerInfo, UnknownNamespaceError } from '@kubeloop/cache';
import { Pod } from '@kubeloop/client';
import { describe, expect, it } from 'vitest';
import { series } from './support/prometheus.js';
import {
  captureLogger,
  type LogRecord,
  podManifest,
  testConfig,
  useLiveCluster,
  waitFor,
} from './support.js';

// The manager's cache changes the namespaces it watches while a controller runs (the feature asked of
// controller-runtime in its #2829), through the builder, over real HTTP (envtest, or the current cluster), with
// either store: objects kept parsed, or kept as the JSON the client received (a namespace added later too).
describe.each(['objects', 'bytes'] as const)(
  'defaultNamespaces changed at runtime (objectRetention: %s): a Pod controller follows added and removed namespaces',
  (objectRetention) => {
    const live = useLiveCluster();

    it('added: informers start and sync, its pods reconcile; removed: reads stop returning them, no delete is reconciled, no informer is left (/debug/cache, informer metrics)', async () => {
      const { api, ns: first } = await live.namespace('dynns-a');
      const { ns: second } = await live.namespace('dynns-b');
      await api.create(Pod, podManifest(first, 'p0'));
      await api.create(Pod, podManifest(second, 'p1'));
      await api.create(Pod, podManifest(second, 'p2'));

      const records: LogRecord[] = [];
      const mgr = newManager(testConfig(), {
        logger: captureLogger(records),
        cache: { defaultNamespaces: [first], objectRetention },
        metrics: { bindAddress: '127.0.0.1:0' },
      });
      const reconciled: string[] = [];
      newControllerManagedBy(mgr)
        .for(Pod)
        .named('dynamic-namespaces')
        .complete({
          async reconcile(_ctx, req) {
            reconciled.push(`${req.namespace}/${req.name}`);
          },
        });
      const ac = new AbortController();
      const run = mgr.start(ac.signal);
      live.cleanups.push(async () => {
        ac.abort();
        await run;
      });
      let ended: unknown = 'running';
      run.then(
        () => (ended = 'resolved'),
        (e: unknown) => (ended = e),
      );
      await waitFor(
        () => reconciled.includes(`${first}/p0`),
        () =>
          `the first namespace reconciled (start: ${String(ended)}; log: ${JSON.stringify(records.slice(-15))})`,
        60_000,
      );
      const cache = mgr.getCache();
      const reader = mgr.getClient();
      await expect(reader.get(Pod, { namespace: second, name: 'p1' })).rejects.toBeInstanceOf(
        UnknownNamespaceError,
      );
      expect(reconciled.some((k) => k.startsWith(`${second}/`))).toBe(false);

      // Add: the Pod informer of the new namespace starts and syncs before the call resolves.
      expect(await cache.addNamespace(second)).toBe(true);
      expect(cache.defaultNamespaces()).toEqual([first, second]);
      const p1 = await reader.get(Pod, { namespace: second, name: 'p1' });
      expect(p1.metadata.name).toBe('p1');
      expect(p1.spec?.containers?.[0]?.name).toBe(podManifest(second, 'p1').spec?.containers?.[0]?.name);
      expect(Object.isFrozen(p1.metadata)).toBe(true);
      const all = await reader.list(Pod);
      expect(all.items.map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`).sort()).toEqual(
        [`${first}/p0`, `${second}/p1`, `${second}/p2`].sort(),
      );
      // The controller's handlers were attached to it: every pod there is reconciled, later ones too.
      await waitFor(
        () => reconciled.includes(`${second}/p1`) && reconciled.includes(`${second}/p2`),
        'the added namespace reconciled',
        60_000,
      );
      await api.create(Pod, podManifest(second, 'p3'));
      await waitFor(() => reconciled.includes(`${second}/p3`), 'a pod created after the add reconciled');

      const base = `http://${mgr.metricsServerAddress()}`;
      const debugPod = async () => {
        const body = (await (await fetch(`${base}/debug/cache`)).json()) as {
          informers: CacheInformerInfo[];
        };
        return body.informers.find((i) => i.kind === 'Pod' && !i.metadataOnly);
      };
      const pod = { kind: 'Pod', version: 'v1', group: '' };
      const scrape = async () => (await fetch(`${base}/metrics`)).text();
      expect(await debugPod()).toMatchObject({
        namespaces: [first, second],
        namespaceInformers: [first, second].sort(),
        synced: true,
        stats: { objects: 4 },
      });
      let text = await scrape();
      expect(series(text, 'informer_namespace_informers', pod)).toBe(2);
      expect(series(text, 'informer_store_objects', pod)).toBe(4);

      // Remove: the informer stops before the call resolves; its pods leave every read.
      const before = reconciled.length;
      expect(await cache.removeNamespace(second)).toBe(true);
      expect(cache.defaultNamespaces()).toEqual([first]);
      await expect(reader.get(Pod, { namespace: second, name: 'p1' })).rejects.toBeInstanceOf(
        UnknownNamespaceError,
      );
      await expect(reader.list(Pod, { namespace: second })).rejects.toBeInstanceOf(UnknownNamespaceError);
      expect((await reader.list(Pod)).items.map((p) => p.metadata?.name)).toEqual(['p0']);
      expect(await debugPod()).toMatchObject({
        namespaces: [first],
        namespaceInformers: [first],
        stats: { objects: 1 },
      });
      text = await scrape();
      expect(series(text, 'informer_namespace_informers', pod)).toBe(1);
      expect(series(text, 'informer_store_objects', pod)).toBe(1);

      // Nothing of the removed namespace reaches the controller any more, and its pods were not "deleted".
      await api.create(Pod, podManifest(second, 'p4'));
      await api.create(Pod, podManifest(first, 'p5'));
      await waitFor(() => reconciled.includes(`${first}/p5`), 'the kept namespace still reconciles');
      expect(reconciled.slice(before)).toEqual([`${first}/p5`]);
    }, 180_000);
  },
);

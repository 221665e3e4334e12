import {
  CacheNotStartedError,
  CacheUnsupportedError,
  DeletedFinalStateUnknown,
  InformerCache,
  objectOfDelete,
} from '@kubeloop/cache';
import { isNotFound, Pod } from '@kubeloop/client';
import { describe, expect, it } from 'vitest';
import { podManifest, useLiveCluster, waitFor } from './support.js';

describe('informer cache against the API server', () => {
  const live = useLiveCluster();

  it('lists then watches into the store; reads are frozen, filtered, and NotFound like the server', async () => {
    const { api, ns } = await live.namespace('cache');
    await api.create(Pod, podManifest(ns, 'a', { app: 'x' }));
    await api.create(Pod, podManifest(ns, 'b', { app: 'y' }));

    const cache = new InformerCache({ client: api, namespace: ns });
    await expect(cache.list(Pod)).rejects.toBeInstanceOf(CacheNotStartedError);
    const events: string[] = [];
    cache.getInformer(Pod).addEventHandler({
      onAdd: (o, initial) => events.push(`add:${o.metadata?.name}:${initial}`),
      onUpdate: (_a, b) => events.push(`update:${b.metadata?.name}`),
      onDelete: (o) =>
        events.push(`delete:${objectOfDelete(o).metadata?.name}:${o instanceof DeletedFinalStateUnknown}`),
    });
    const ac = new AbortController();
    const running = cache.start(ac.signal);
    live.cleanups.push(async () => {
      ac.abort();
      await running;
    });
    expect(await cache.waitForCacheSync()).toBe(true);
    expect(events.sort()).toEqual(['add:a:true', 'add:b:true']);

    const x = await cache.list(Pod, { namespace: ns, labelSelector: { app: 'x' } });
    expect(x.items.map((p) => p.metadata?.name)).toEqual(['a']);
    expect(Object.isFrozen(x.items[0]?.metadata)).toBe(true);
    expect((await cache.list(Pod, { fieldSelector: { 'metadata.name': 'b' } })).items).toHaveLength(1);
    const a1 = await cache.get(Pod, { namespace: ns, name: 'a' });
    const a2 = await cache.get(Pod, { namespace: ns, name: 'a' });
    expect(a1).toBe(a2);
    await expect(cache.get(Pod, { namespace: ns, name: 'zzz' })).rejects.toSatisfy(isNotFound);

    await api.create(Pod, podManifest(ns, 'c'));
    await api.patch(
      Pod,
      { namespace: ns, name: 'a' },
      { type: 'merge', data: { metadata: { labels: { app: 'z' } } } },
    );
    await api.delete(Pod, { namespace: ns, name: 'b' }, { gracePeriodSeconds: 0 });
    await waitFor(
      async () => {
        const names = (await cache.list(Pod)).items.map((p) => p.metadata?.name).sort();
        return (
          names.join(',') === 'a,c' &&
          (await cache.get(Pod, { namespace: ns, name: 'a' })).metadata?.labels?.app === 'z'
        );
      },
      () => `cache to follow the server, events ${events.join(' ')}`,
    );
    expect(events).toContain('add:c:false');
    expect(events).toContain('update:a');
    expect(events).toContain('delete:b:false');
    // Field selectors beyond metadata.* need an index (controller-runtime's rule).
    await expect(cache.list(Pod, { fieldSelector: { 'spec.nodeName': 'n1' } })).rejects.toBeInstanceOf(
      CacheUnsupportedError,
    );
    cache.indexField(Pod, 'spec.nodeName', (p) => [p.spec?.nodeName ?? '']);
    await api.create(Pod, {
      ...podManifest(ns, 'on-n1'),
      spec: { nodeName: 'n1', containers: [{ name: 'app', image: 'x' }] },
    });
    await waitFor(
      async () => (await cache.list(Pod, { fieldSelector: { 'spec.nodeName': 'n1' } })).items.length === 1,
      'the indexed pod',
    );
    expect(
      (await cache.list(Pod, { fieldSelector: 'spec.nodeName!=n1' })).items
        .map((p) => p.metadata?.name)
        .sort(),
    ).toEqual(['a', 'c']);
    const server = (await api.list(Pod, { namespace: ns })).items
      .map((p) => p.metadata?.resourceVersion)
      .sort();
    const cached = (await cache.list(Pod)).items.map((p) => p.metadata?.resourceVersion).sort();
    expect(cached).toEqual(server);
  });
});

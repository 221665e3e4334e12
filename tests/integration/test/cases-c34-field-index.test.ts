import { CacheUnsupportedError, FieldNotIndexedError, InformerCache, StoreError } from '@kubeloop/cache';
import { Pod } from '@kubeloop/client';
import type { V1Pod } from '@kubeloop/client/models';
import { describe, expect, it } from 'vitest';
import { uniqueName, useLiveCluster, withNamespace } from './support.js';

const pod = (namespace: string, name: string, nodeName: string) => ({
  metadata: { namespace, name },
  spec: { nodeName, containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
});

describe('C34: field index misuse', () => {
  const live = useLiveCluster();

  it('C34: indexed exact matches come from the index (with and without namespace), != and two requirements are exact, an unindexed field throws a typed error naming it and how to index it, a second index on the field throws', async () => {
    const api = live.client();
    const a = uniqueName('c34a');
    const b = uniqueName('c34b');
    live.cleanups.push(await withNamespace(api, a));
    live.cleanups.push(await withNamespace(api, b));
    for (const [ns, name, node] of [
      [a, 'p1', 'n1'],
      [a, 'p2', 'n2'],
      [b, 'p3', 'n1'],
      [b, 'p4', 'n2'],
    ] as const)
      await api.create(Pod, pod(ns, name, node));

    const cache = new InformerCache({ client: api, defaultNamespaces: [a, b] });
    cache.indexField<V1Pod>(Pod, 'spec.nodeName', (p) => [p.spec?.nodeName ?? '']);
    const ac = new AbortController();
    const running = cache.start(ac.signal);
    live.cleanups.push(async () => {
      ac.abort();
      await running;
    });
    expect(await cache.waitForCacheSync()).toBe(true);
    const names = async (opts: Parameters<typeof cache.list>[1]) =>
      (await cache.list(Pod, opts)).items.map((p) => p.metadata?.name).sort();

    expect(await names({ fieldSelector: 'spec.nodeName=n1' })).toEqual(['p1', 'p3']);
    expect(await names({ fieldSelector: { 'spec.nodeName': 'n1' }, namespace: b })).toEqual(['p3']);
    expect(await names({ fieldSelector: 'spec.nodeName!=n1' })).toEqual(['p2', 'p4']);
    expect(await names({ fieldSelector: `spec.nodeName=n1,metadata.namespace=${a}` })).toEqual(['p1']);
    expect(await names({ fieldSelector: 'spec.nodeName=n2,metadata.name=p4' })).toEqual(['p4']);

    const err = (await cache
      .list(Pod, { fieldSelector: 'status.phase=Running' })
      .catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(FieldNotIndexedError);
    expect(err).toBeInstanceOf(CacheUnsupportedError);
    expect(err.message).toContain('"status.phase"');
    expect(err.message).toMatch(/indexField/);
    expect(() => cache.indexField<V1Pod>(Pod, 'spec.nodeName', (p) => [p.spec?.nodeName ?? ''])).toThrow(
      StoreError,
    );
  });
});

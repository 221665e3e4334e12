import { ConfigMap, type KubeObject } from '@kubeloop/client';
import { onAbort } from '@kubeloop/core';
import { FakeClock } from '@kubeloop/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  InformerCache,
  type InformerCacheOptions,
  isDeletedFinalStateUnknown,
  StoreError,
  UnknownNamespaceError,
} from '../src/index.js';
import { FakeClient } from './support/fake-client.js';
import { Namespace, names, Secret, seed, startCache as startWith } from './support/namespaced-cache.js';

const running: AbortController[] = [];
afterEach(() => {
  for (const ac of running.splice(0)) ac.abort();
});
const startCache = (fc: FakeClient, opts: Partial<InformerCacheOptions>) => startWith(fc, opts, running);

describe('InformerCache restricted to namespaces (controller-runtime multiNamespaceCache)', () => {
  it('get and list in a namespace the cache does not watch throw UnknownNamespaceError naming the kind, the key and the watched namespaces — never NotFound or an empty list', async () => {
    const fc = new FakeClient({ ConfigMap: 'Namespaced', Secret: 'Namespaced', Namespace: 'Cluster' });
    seed(fc);
    const t = startCache(fc, { defaultNamespaces: ['a', 'b'] });
    const got = (await t.cache
      .get(ConfigMap, { namespace: 'c', name: 'cm0' })
      .catch((e: unknown) => e)) as UnknownNamespaceError;
    expect(got).toBeInstanceOf(UnknownNamespaceError);
    expect(got.code).toBe('ERR_UNKNOWN_NAMESPACE');
    expect(got.namespace).toBe('c');
    expect(got.kind).toBe('ConfigMap.v1');
    expect(got.message).toContain('c/cm0');
    expect(got.message).toContain('a, b');
    const listed = (await t.cache
      .list(ConfigMap, { namespace: 'c' })
      .catch((e: unknown) => e)) as UnknownNamespaceError;
    expect(listed).toBeInstanceOf(UnknownNamespaceError);
    expect(listed.message).toContain('"c"');
    // A get without a namespace, for a namespaced kind, names no watched namespace either.
    await expect(t.cache.get(ConfigMap, { name: 'cm0' })).rejects.toBeInstanceOf(UnknownNamespaceError);
    // No informer was started for the refused reads of another kind.
    await expect(t.cache.get(Secret, { namespace: 'c', name: 's0' })).rejects.toBeInstanceOf(
      UnknownNamespaceError,
    );
    expect(fc.calls.filter((c) => c.kind === 'Secret')).toHaveLength(0);
    await t.stop();
  });

  it('watched namespaces, cluster-wide lists and cluster-scoped kinds read as before', async () => {
    const fc = new FakeClient({ ConfigMap: 'Namespaced', Secret: 'Namespaced', Namespace: 'Cluster' });
    seed(fc);
    const t = startCache(fc, { defaultNamespaces: ['a', 'b'] });
    expect((await t.cache.get(ConfigMap, { namespace: 'b', name: 'cm0' })).metadata?.namespace).toBe('b');
    expect(names((await t.cache.list(ConfigMap, { namespace: 'a' })).items)).toEqual(['a/cm0']);
    expect(names((await t.cache.list(ConfigMap)).items)).toEqual(['a/cm0', 'b/cm0']);
    // Cluster-scoped: one cluster-wide informer; the namespace of a key or list is not checked.
    expect((await t.cache.get(Namespace, { name: 'c' })).metadata?.name).toBe('c');
    expect((await t.cache.get(Namespace, { namespace: 'zzz', name: 'c' })).metadata?.name).toBe('c');
    expect(names((await t.cache.list(Namespace)).items)).toEqual(['/c']);
    await t.stop();
  });

  it('byObject namespaces override defaultNamespaces per kind, for the check too', async () => {
    const fc = new FakeClient({ ConfigMap: 'Namespaced', Secret: 'Namespaced', Namespace: 'Cluster' });
    seed(fc);
    const t = startCache(fc, { defaultNamespaces: ['a'], byObject: [{ kind: Secret, namespaces: ['c'] }] });
    expect((await t.cache.get(Secret, { namespace: 'c', name: 's0' })).metadata?.name).toBe('s0');
    await expect(t.cache.list(Secret, { namespace: 'a' })).rejects.toBeInstanceOf(UnknownNamespaceError);
    await expect(t.cache.list(ConfigMap, { namespace: 'c' })).rejects.toBeInstanceOf(UnknownNamespaceError);
    expect(names((await t.cache.list(ConfigMap, { namespace: 'a' })).items)).toEqual(['a/cm0']);
    await t.stop();
  });

  it('an unrestricted cache reads every namespace (no check)', async () => {
    const fc = new FakeClient({ ConfigMap: 'Namespaced', Secret: 'Namespaced', Namespace: 'Cluster' });
    seed(fc);
    const t = startCache(fc, {});
    expect((await t.cache.get(ConfigMap, { namespace: 'c', name: 'cm0' })).metadata?.name).toBe('cm0');
    expect(names((await t.cache.list(ConfigMap, { namespace: 'c' })).items)).toEqual(['c/cm0']);
    await t.stop();
  });
});

describe('per-namespace informers under faults (breaker probes p5, p9, p13)', () => {
  it('p5: a relist after a 410 in each namespace reports the deletes missed as tombstones of that namespace, and the new object as an add', async () => {
    const fc = new FakeClient();
    const s = fc.server('ConfigMap');
    for (const ns of ['a', 'b']) for (let i = 0; i < 3; i++) s.create(`cm${i}`, {}, ns);
    const clock = new FakeClock();
    const cache = new InformerCache({ client: fc.asClient(), clock, defaultNamespaces: ['a', 'b'] });
    const seen: string[] = [];
    cache.getInformer(ConfigMap).addEventHandler({
      onAdd: (o, initial) => seen.push(`add:${o.metadata?.namespace}/${o.metadata?.name}:${initial}`),
      onDelete: (o) =>
        seen.push(isDeletedFinalStateUnknown(o) ? `tombstone:${o.key}` : `delete:${o.metadata?.name}`),
    });
    const ac = new AbortController();
    running.push(ac);
    const done = cache.start(ac.signal);
    expect(await cache.waitForCacheSync()).toBe(true);
    seen.length = 0;
    // An API server restart: the watches end, the watch cache starts empty; what happens next is missed.
    s.restart();
    s.remove('cm0', 'a');
    s.remove('cm1', 'b');
    s.create('new', {}, 'b');
    // Its watch history starts after them: a re-watch from an older resourceVersion gets 410 and relists.
    s.watchCacheStartRV = s.rv;
    await vi.waitFor(() => {
      clock.step(1000);
      expect(seen.sort()).toEqual(['add:b/new:false', 'tombstone:a/cm0', 'tombstone:b/cm1']);
    });
    expect(names((await cache.list(ConfigMap)).items)).toEqual(['a/cm1', 'a/cm2', 'b/cm0', 'b/cm2', 'b/new']);
    ac.abort();
    await done;
  });

  it('p9: removeInformer while one namespace list is held and another watch is open resolves, and aborts every request of the informer', async () => {
    const fc = new FakeClient();
    const s = fc.server('ConfigMap');
    s.create('cm0', {}, 'a');
    const list = fc.list.bind(fc);
    // Namespace b's list never answers (a black-holed request) until its signal aborts.
    fc.list = (k, o) =>
      o.namespace === 'b'
        ? new Promise((_, reject) => onAbort(o.signal, () => reject(o.signal.reason)))
        : list(k, o);
    // The held request is a list: WatchList (the cache's default) would sync both namespaces by watches.
    const t = startCache(fc, { defaultNamespaces: ['a', 'b'], useWatchList: false });
    const inf = t.cache.getInformer(ConfigMap);
    await vi.waitFor(() => expect(fc.calls.filter((c) => c.verb === 'watch')).toHaveLength(1));
    expect(inf.hasSynced()).toBe(false);
    await t.cache.removeInformer(ConfigMap);
    expect(inf.isStopped()).toBe(true);
    expect(fc.calls.every((c) => c.signal.aborted)).toBe(true);
    expect(s.live).toHaveLength(0);
    await t.stop();
  });

  it('p13: a second index on the same field after start is refused with StoreError on per-namespace informers, and the first keeps answering', async () => {
    const fc = new FakeClient();
    const s = fc.server('ConfigMap');
    for (const ns of ['a', 'b']) s.create('cm', { k: 'v' }, ns);
    const t = startCache(fc, { defaultNamespaces: ['a', 'b'] });
    t.cache.getInformer(ConfigMap);
    expect(await t.cache.waitForCacheSync()).toBe(true);
    const byK = (o: KubeObject) => [String((o as { data?: { k?: string } }).data?.k ?? '')];
    t.cache.indexField(ConfigMap, 'data.k', byK);
    expect(() => t.cache.indexField(ConfigMap, 'data.k', byK)).toThrow(StoreError);
    expect(names((await t.cache.list(ConfigMap, { fieldSelector: 'data.k=v' })).items)).toEqual([
      'a/cm',
      'b/cm',
    ]);
    expect(t.cache.getInformer(ConfigMap).status().terminalError).toBeUndefined();
    await t.stop();
  });
});

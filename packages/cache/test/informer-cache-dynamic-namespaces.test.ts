import { ConfigMap } from '@kubeloop/client';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CacheOptionsError,
  InformerCache,
  type InformerCacheOptions,
  UnknownNamespaceError,
} from '../src/index.js';
import { FakeClient } from './support/fake-client.js';
import { Namespace, names, Secret, seed, startCache as startWith } from './support/namespaced-cache.js';
import { eachRetention, retention } from './support/retention.js';

const running: AbortController[] = [];
afterEach(() => {
  for (const ac of running.splice(0)) ac.abort();
});
const startCache = (fc: FakeClient, opts: Partial<InformerCacheOptions>) => startWith(fc, opts, running);

const scopes = { ConfigMap: 'Namespaced', Secret: 'Namespaced', Namespace: 'Cluster' } as const;

eachRetention(() => {
  describe('InformerCache.setDefaultNamespaces: namespaces added and removed while the cache runs', () => {
    it('an added namespace gets an informer per watched kind that syncs before the call resolves; handlers see its objects as initial-list adds; reads follow', async () => {
      const fc = new FakeClient({ ...scopes });
      const s = seed(fc);
      const t = startCache(fc, { defaultNamespaces: ['a'] });
      const seen: string[] = [];
      t.cache.getInformer(ConfigMap).addEventHandler({
        onAdd: (o, initial) => seen.push(`add:${o.metadata?.namespace}/${o.metadata?.name}:${initial}`),
        onDelete: () => seen.push('delete'),
      });
      expect(await t.cache.waitForCacheSync()).toBe(true);
      expect(seen).toEqual(['add:a/cm0:true']);
      await expect(t.cache.get(ConfigMap, { namespace: 'c', name: 'cm0' })).rejects.toBeInstanceOf(
        UnknownNamespaceError,
      );

      expect(await t.cache.addNamespace('c')).toBe(true);
      expect(t.cache.defaultNamespaces()).toEqual(['a', 'c']);
      expect(seen).toEqual(['add:a/cm0:true', 'add:c/cm0:true']);
      expect((await t.cache.get(ConfigMap, { namespace: 'c', name: 'cm0' })).metadata?.namespace).toBe('c');
      expect(names((await t.cache.list(ConfigMap)).items)).toEqual(['a/cm0', 'c/cm0']);
      // Its watch runs: a change there reaches the handlers.
      s.create('cm1', {}, 'c');
      await expect.poll(() => seen).toContain('add:c/cm1:false');
      // Only namespaced requests, one list per namespace (never cluster-wide).
      expect(fc.calls.filter((c) => c.kind === 'ConfigMap').every((c) => c.namespace !== undefined)).toBe(
        true,
      );
      // The added namespace's informer keeps what the cache's other informers keep (objectRetention reaches it).
      const cmCalls = fc.calls.filter((c) => c.kind === 'ConfigMap');
      // One streaming list (WatchList, the cache's default) or a list and a watch.
      expect(cmCalls.filter((c) => c.namespace === 'c').length).toBeGreaterThanOrEqual(1);
      expect(cmCalls.map((c) => c.keepsJson)).toEqual(cmCalls.map(() => retention() === 'bytes'));
      const added = await t.cache.get(ConfigMap, { namespace: 'c', name: 'cm1' });
      expect(added.metadata.name).toBe('cm1');
      expect(Object.isFrozen(added.metadata)).toBe(true);
      const info = t.cache.informers().find((i) => i.kind === 'ConfigMap');
      expect(info?.namespaces).toEqual(['a', 'c']);
      expect(info?.namespaceInformers).toEqual(['a', 'c']);
      expect(info?.stats.objects).toBe(3);
      // A kind whose informer is made after the change watches the new set.
      expect(names((await t.cache.list(Secret)).items)).toEqual(['c/s0']);
      expect(seen).not.toContain('delete');
      await t.stop();
    });

    it('a removed namespace: its informer stops (no leak in informers()), its objects leave get and list, no delete is invented, reads there are refused', async () => {
      const fc = new FakeClient({ ...scopes });
      const s = seed(fc);
      const t = startCache(fc, { defaultNamespaces: ['a', 'b'] });
      const seen: string[] = [];
      t.cache.getInformer(ConfigMap).addEventHandler({
        onAdd: (o) => seen.push(`add:${o.metadata?.namespace}/${o.metadata?.name}`),
        onUpdate: (_o, n) => seen.push(`update:${n.metadata?.namespace}/${n.metadata?.name}`),
        onDelete: () => seen.push('delete'),
      });
      expect(await t.cache.waitForCacheSync()).toBe(true);
      const watchB = fc.calls.find(
        (c) => c.verb === 'watch' && c.kind === 'ConfigMap' && c.namespace === 'b',
      );
      expect(watchB?.signal.aborted).toBe(false);

      expect(await t.cache.removeNamespace('b')).toBe(true);
      expect(t.cache.defaultNamespaces()).toEqual(['a']);
      // Its requests were stopped and the informer has ended: nothing of it runs.
      expect(watchB?.signal.aborted).toBe(true);
      const info = t.cache.informers().find((i) => i.kind === 'ConfigMap');
      expect(info?.namespaceInformers).toEqual(['a']);
      expect(info?.stats.objects).toBe(1);
      expect(names((await t.cache.list(ConfigMap)).items)).toEqual(['a/cm0']);
      await expect(t.cache.get(ConfigMap, { namespace: 'b', name: 'cm0' })).rejects.toBeInstanceOf(
        UnknownNamespaceError,
      );
      await expect(t.cache.list(ConfigMap, { namespace: 'b' })).rejects.toBeInstanceOf(UnknownNamespaceError);
      // Changes in the removed namespace reach no handler; none was told its objects were deleted.
      s.create('late', {}, 'b');
      s.create('late', {}, 'a');
      await expect.poll(() => seen).toContain('add:a/late');
      expect(seen).toEqual(['add:a/cm0', 'add:b/cm0', 'add:a/late']);
      // Removing it again, or a namespace never watched, changes nothing.
      expect(await t.cache.removeNamespace('b')).toBe(true);
      expect(await t.cache.removeNamespace('zzz')).toBe(true);
      // Added back: a fresh informer, its objects (the new one included) as adds again.
      expect(await t.cache.addNamespace('b')).toBe(true);
      expect(seen.slice(3).sort()).toEqual(['add:b/cm0', 'add:b/late']);
      expect(t.cache.informers().find((i) => i.kind === 'ConfigMap')?.namespaceInformers).toEqual(['a', 'b']);
      await t.stop();
    });

    it('kinds with their own byObject namespaces and cluster-scoped kinds are not touched', async () => {
      const fc = new FakeClient({ ...scopes });
      seed(fc);
      const t = startCache(fc, { defaultNamespaces: ['a'], byObject: [{ kind: Secret, namespaces: ['c'] }] });
      expect(names((await t.cache.list(Secret)).items)).toEqual(['c/s0']);
      expect(names((await t.cache.list(Namespace)).items)).toEqual(['/c']);
      const before = fc.calls.length;
      expect(await t.cache.setDefaultNamespaces(['b'])).toBe(true);
      expect(names((await t.cache.list(Secret)).items)).toEqual(['c/s0']);
      expect(names((await t.cache.list(Namespace)).items)).toEqual(['/c']);
      const after = fc.calls.slice(before);
      expect(after.filter((c) => c.kind !== 'ConfigMap')).toEqual([]);
      const info = t.cache.informers();
      expect(info.find((i) => i.kind === 'Secret')?.namespaces).toEqual(['c']);
      expect(info.find((i) => i.kind === 'Namespace')?.namespaceInformers).toEqual([]);
      await t.stop();
    });

    it('before start it only changes what the informers will watch', async () => {
      const fc = new FakeClient({ ...scopes });
      seed(fc);
      const cache = new InformerCache({
        client: fc.asClient(),
        defaultNamespaces: ['a'],
        objectRetention: retention(),
      });
      cache.getInformer(ConfigMap);
      expect(await cache.setDefaultNamespaces(['b', 'c', 'b'])).toBe(true);
      expect(cache.defaultNamespaces()).toEqual(['b', 'c']);
      expect(fc.calls).toEqual([]);
      const ac = new AbortController();
      running.push(ac);
      const done = cache.start(ac.signal);
      expect(await cache.waitForCacheSync()).toBe(true);
      expect(names((await cache.list(ConfigMap)).items)).toEqual(['b/cm0', 'c/cm0']);
      ac.abort();
      await done;
    });

    it('refuses, naming why: a cache that watches every namespace, an empty set, a bad entry', async () => {
      const fc = new FakeClient({ ...scopes });
      const all = new InformerCache({ client: fc.asClient() });
      await expect(all.addNamespace('a')).rejects.toThrow(/watches every namespace/);
      const restricted = new InformerCache({ client: fc.asClient(), defaultNamespaces: ['a'] });
      await expect(restricted.removeNamespace('a')).rejects.toThrow(CacheOptionsError);
      await expect(restricted.setDefaultNamespaces([])).rejects.toThrow(/at least one namespace/);
      await expect(restricted.setDefaultNamespaces(['b', ''])).rejects.toThrow(/namespaces\[1\]/);
      await expect(restricted.setDefaultNamespaces(['b', 7 as unknown as string])).rejects.toThrow(
        /namespaces\[1\]/,
      );
      // A refused change leaves the set as it was.
      expect(restricted.defaultNamespaces()).toEqual(['a']);
    });
  });
});

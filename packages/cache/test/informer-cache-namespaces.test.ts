import { ConfigMap, FakeClock, kind } from '@kubeloop/client';
import { afterEach, describe, expect, it } from 'vitest';
import { InformerCache, type InformerCacheOptions, UnknownNamespaceError } from '../src/index.js';
import { FakeClient } from './support/fake-client.js';

const Namespace = kind('v1', 'Namespace');
const Secret = kind('v1', 'Secret');

const running: AbortController[] = [];
afterEach(() => {
  for (const ac of running.splice(0)) ac.abort();
});

function startCache(fc: FakeClient, opts: Partial<InformerCacheOptions>) {
  const cache = new InformerCache({ client: fc.asClient(), clock: new FakeClock(), ...opts });
  const ac = new AbortController();
  running.push(ac);
  const done = cache.start(ac.signal);
  return {
    cache,
    stop: async () => {
      ac.abort();
      await done;
    },
  };
}

function seed(fc: FakeClient) {
  const s = fc.server('ConfigMap');
  for (const ns of ['a', 'b', 'c']) s.create('cm0', {}, ns);
  fc.server('Secret').create('s0', {}, 'c');
  fc.server('Namespace').create('c', {}, '');
}

const names = (items: readonly { metadata?: { namespace?: string; name?: string } }[]) =>
  items.map((o) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name}`).sort();

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

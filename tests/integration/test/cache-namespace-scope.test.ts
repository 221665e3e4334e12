import { InformerCache, UnknownNamespaceError } from '@kubeloop/cache';
import { ConfigMap, Namespace } from '@kubeloop/client';
import { afterEach, describe, expect, it } from 'vitest';
import { liveClient, uniqueName, withNamespace } from './support.js';

describe('a namespace-restricted cache on a real API server (controller-runtime multiNamespaceCache)', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });

  it('refuses get and list in a namespace it does not watch with UnknownNamespaceError (not NotFound, not an empty list); watched namespaces, all-namespace lists and cluster-scoped kinds read normally', async () => {
    const api = liveClient();
    cleanups.push(() => api.close());
    const a = uniqueName('scope-a');
    const b = uniqueName('scope-b');
    const c = uniqueName('scope-c');
    for (const ns of [a, b, c]) cleanups.push(await withNamespace(api, ns));
    for (const ns of [a, b, c]) await api.create(ConfigMap, { metadata: { namespace: ns, name: 'cm' } });

    const cache = new InformerCache({ client: api, defaultNamespaces: [a, b] });
    const ac = new AbortController();
    const running = cache.start(ac.signal);
    cleanups.push(async () => {
      ac.abort();
      await running;
    });

    const got = (await cache.get(ConfigMap, { namespace: c, name: 'cm' }).catch((e: unknown) => e)) as Error;
    expect(got).toBeInstanceOf(UnknownNamespaceError);
    expect(got.message).toContain(`${c}/cm`);
    const listed = await cache.list(ConfigMap, { namespace: c }).catch((e: unknown) => e);
    expect(listed).toBeInstanceOf(UnknownNamespaceError);
    expect((listed as UnknownNamespaceError).watched).toEqual([a, b]);

    expect((await cache.get(ConfigMap, { namespace: b, name: 'cm' })).metadata?.namespace).toBe(b);
    const all = (await cache.list(ConfigMap)).items.map((o) => o.metadata?.namespace);
    expect(all).toContain(a);
    expect(all).toContain(b);
    expect(all).not.toContain(c);
    // Cluster-scoped: one cluster-wide informer, so a namespace outside the list is readable as an object.
    expect((await cache.get(Namespace, { name: c })).metadata?.name).toBe(c);
  });
});

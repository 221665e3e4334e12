import {
  isAlreadyExists,
  isConflict,
  isNotFound,
  type KubeObject,
  kind,
  Namespace,
  Pod,
  type WatchEvent,
} from '@kubeloop/client';
import { InvalidRequestError, NoKindMatchError } from '@kubeloop/client/errors';
import { describe, expect, it } from 'vitest';
import { podManifest, useLiveCluster, waitFor } from './support.js';

describe('client against the API server', () => {
  const live = useLiveCluster();

  const setup = () => live.namespace('client');

  it('maps kinds to resources through discovery, and refuses unknown kinds', async () => {
    const { api } = await setup();
    const pod = await api.restMapper.restMapping({ group: '', version: 'v1', kind: 'Pod' });
    expect(pod.resource.resource).toBe('pods');
    expect(pod.scope).toBe('Namespaced');
    expect(await api.restMapper.isNamespaced({ group: '', version: 'v1', kind: 'Namespace' })).toBe(false);
    expect(await api.restMapper.kindFor({ group: '', resource: 'pods' })).toEqual({
      group: '',
      version: 'v1',
      kind: 'Pod',
    });
    await expect(api.get(kind('nothing.example.com/v1', 'Nope'), { name: 'x' })).rejects.toBeInstanceOf(
      NoKindMatchError,
    );
  });

  it('creates, gets, updates with optimistic concurrency, patches and deletes, with typed errors', async () => {
    const { api, ns } = await setup();
    const created = await api.create(Pod, podManifest(ns, 'p1', { app: 'web' }));
    expect(created.metadata?.uid).toBeTruthy();
    expect(created.kind).toBe('Pod');
    await expect(api.create(Pod, podManifest(ns, 'p1'))).rejects.toSatisfy(isAlreadyExists);

    const got = await api.get(Pod, { namespace: ns, name: 'p1' });
    expect(got.metadata?.resourceVersion).toBe(created.metadata?.resourceVersion);

    const updated = await api.update(Pod, {
      ...got,
      metadata: { ...got.metadata, labels: { app: 'web', v: '2' } },
    });
    expect(updated.metadata?.labels?.v).toBe('2');
    // A write based on the old resourceVersion conflicts.
    await expect(
      api.update(Pod, { ...got, metadata: { ...got.metadata, labels: { stale: 'yes' } } }),
    ).rejects.toSatisfy(isConflict);

    const patched = await api.patch(
      Pod,
      { namespace: ns, name: 'p1' },
      { type: 'merge', data: { metadata: { labels: { v: null, patched: 'true' } } } },
    );
    expect(patched.metadata?.labels).toEqual({ app: 'web', patched: 'true' });
    await expect(
      api.patch(Pod, { namespace: ns, name: 'p1' }, { type: 'apply', data: {} }),
    ).rejects.toBeInstanceOf(InvalidRequestError);

    await api.delete(Pod, { namespace: ns, name: 'p1' }, { gracePeriodSeconds: 0 });
    await waitFor(async () => {
      try {
        await api.get(Pod, { namespace: ns, name: 'p1' });
        return false;
      } catch (err) {
        return isNotFound(err);
      }
    }, 'p1 to be gone');
    await expect(api.delete(Pod, { namespace: ns, name: 'p1' })).rejects.toSatisfy(isNotFound);
    // Cluster-scoped kinds need no namespace; namespaced ones do.
    expect((await api.get(Namespace, { name: ns })).metadata?.name).toBe(ns);
    await expect(api.get(Pod, { name: 'p1' })).rejects.toBeInstanceOf(InvalidRequestError);
  });

  it('lists with label selectors and pages through with limit/continue', async () => {
    const { api, ns } = await setup();
    for (let i = 0; i < 7; i++) {
      await api.create(
        Pod,
        podManifest(ns, `p${i}`, { tier: i % 2 ? 'odd' : 'even', ...(i === 3 ? { legacy: '' } : {}) }),
      );
    }
    const odd = await api.list(Pod, { namespace: ns, labelSelector: { tier: 'odd' } });
    expect(odd.items.map((p) => p.metadata?.name).sort()).toEqual(['p1', 'p3', 'p5']);
    const expr = await api.list(Pod, { namespace: ns, labelSelector: 'tier in (odd,x),!legacy' });
    expect(expr.items.map((p) => p.metadata?.name).sort()).toEqual(['p1', 'p5']);
    expect(odd.items.every((p) => p.kind === 'Pod' && p.apiVersion === 'v1')).toBe(true);

    const names: string[] = [];
    let cont: string | undefined;
    let pages = 0;
    do {
      const page = await api.list(Pod, { namespace: ns, limit: 3, ...(cont ? { continue: cont } : {}) });
      expect(page.items.length).toBeLessThanOrEqual(3);
      names.push(...page.items.map((p) => p.metadata!.name!));
      cont = page.metadata.continue || undefined;
      pages++;
    } while (cont);
    expect(pages).toBe(3);
    expect(names.sort()).toEqual(['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6']);
  });

  it('watches from a list resourceVersion: typed events in order, ended by the abort signal', async () => {
    const { api, ns } = await setup();
    const list = await api.list(Pod, { namespace: ns });
    const ac = new AbortController();
    const events: WatchEvent[] = [];
    const watching = (async () => {
      for await (const ev of api.watch(Pod, {
        namespace: ns,
        resourceVersion: list.metadata.resourceVersion!,
        signal: ac.signal,
      })) {
        events.push(ev);
      }
    })();
    const p = await api.create(Pod, podManifest(ns, 'w1'));
    await api.patch(
      Pod,
      { namespace: ns, name: 'w1' },
      { type: 'merge', data: { metadata: { labels: { a: 'b' } } } },
    );
    await api.delete(Pod, p, { gracePeriodSeconds: 0 });
    const seen = () =>
      events
        .filter((e) => e.type !== 'BOOKMARK')
        .map((e) => `${e.type}:${(e.object as KubeObject).metadata?.name}`);
    await waitFor(
      () => seen().includes('DELETED:w1'),
      () => `DELETED in ${seen().join(' ')}`,
    );
    ac.abort();
    await watching;
    const s = seen();
    expect(s[0]).toBe('ADDED:w1');
    expect(s.at(-1)).toBe('DELETED:w1');
    expect(s.filter((x) => x.startsWith('MODIFIED')).length).toBeGreaterThanOrEqual(1);
  });
});

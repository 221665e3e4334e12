import { type ApiClient, ConfigMap, isNotFound, StatusError } from '@kubeloop/client';
import { afterEach, describe, expect, it } from 'vitest';
import { realCluster, useFaultServer } from './support/fault-server.js';
import { recordingClient } from './support/recording-transport.js';
import { testConfig, uniqueName, withNamespace } from './support.js';

async function configMaps(
  api: ApiClient,
  ns: string,
  n: number,
  labels: (i: number) => Record<string, string>,
) {
  for (let i = 0; i < n; i++)
    await api.create(ConfigMap, {
      metadata: { namespace: ns, name: `cm-${String(i).padStart(2, '0')}`, labels: labels(i) },
    });
}

describe('client deleteAllOf and the pager', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });

  it('deleteAllOf deletes exactly the matches (label and field selectors), dryRun deletes nothing, finalizers are honoured', async () => {
    const { client: api, requests } = recordingClient(testConfig());
    cleanups.push(() => api.close());
    const ns = uniqueName('dao');
    cleanups.push(await withNamespace(api, ns));
    await configMaps(api, ns, 6, (i) => ({ tier: i % 2 ? 'odd' : 'even' }));
    // kube-root-ca.crt: kube-controller-manager publishes it into every namespace of a full cluster.
    const names = async () =>
      (await api.list(ConfigMap, { namespace: ns })).items
        .map((c) => c.metadata?.name)
        .filter((n) => n !== 'kube-root-ca.crt');

    await api.deleteAllOf(ConfigMap, { namespace: ns, labelSelector: { tier: 'odd' }, dryRun: true });
    expect(await names()).toHaveLength(6);
    const req = requests.at(-2)!;
    expect(req.method).toBe('DELETE');
    expect(req.path).toMatch(/\/namespaces\/dao-[0-9a-f]+\/configmaps\?labelSelector=tier%3Dodd$/);
    expect(JSON.parse(req.body!)).toEqual({ kind: 'DeleteOptions', apiVersion: 'v1', dryRun: ['All'] });

    await api.deleteAllOf(ConfigMap, {
      namespace: ns,
      labelSelector: { tier: 'odd' },
      propagationPolicy: 'Background',
      gracePeriodSeconds: 0,
    });
    expect(await names()).toEqual(['cm-00', 'cm-02', 'cm-04']);

    await api.deleteAllOf(ConfigMap, { namespace: ns, fieldSelector: { 'metadata.name': 'cm-02' } });
    expect(await names()).toEqual(['cm-00', 'cm-04']);

    await api.patch(
      ConfigMap,
      { namespace: ns, name: 'cm-00' },
      { type: 'merge', data: { metadata: { finalizers: ['example.com/keep'] } } },
    );
    await api.deleteAllOf(ConfigMap, { namespace: ns });
    const kept = await api.get(ConfigMap, { namespace: ns, name: 'cm-00' });
    expect(kept.metadata?.deletionTimestamp).toBeTruthy();
    await expect(api.get(ConfigMap, { namespace: ns, name: 'cm-04' })).rejects.toSatisfy(isNotFound);
    await api.patch(
      ConfigMap,
      { namespace: ns, name: 'cm-00' },
      { type: 'merge', data: { metadata: { finalizers: null } } },
    );
  });

  it('deleteAllOf with a selector the server refuses is a typed 400', async () => {
    const { client: api } = recordingClient(testConfig());
    cleanups.push(() => api.close());
    const ns = uniqueName('dao');
    cleanups.push(await withNamespace(api, ns));
    const err = await api
      .deleteAllOf(ConfigMap, { namespace: ns, fieldSelector: { 'data.x': 'y' } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StatusError);
    expect((err as StatusError).httpStatus).toBe(400);
  });

  it('listPages follows continue tokens; listAll yields every object once', async () => {
    const { client: api, requests } = recordingClient(testConfig());
    cleanups.push(() => api.close());
    const ns = uniqueName('pager');
    cleanups.push(await withNamespace(api, ns));
    // Selected by label: on a full cluster the namespace also holds kube-root-ca.crt.
    await configMaps(api, ns, 25, () => ({ pager: 'yes' }));
    const sizes: number[] = [];
    for await (const page of api.listPages(ConfigMap, {
      namespace: ns,
      pageSize: 10,
      labelSelector: { pager: 'yes' },
    }))
      sizes.push(page.items.length);
    expect(sizes).toEqual([10, 10, 5]);
    const lists = requests.filter((r) => r.path.includes('/configmaps?'));
    expect(lists.map((r) => new URLSearchParams(r.path.split('?')[1]).get('limit'))).toEqual([
      '10',
      '10',
      '10',
    ]);
    const names: string[] = [];
    for await (const cm of api.listAll(ConfigMap, {
      namespace: ns,
      pageSize: 7,
      labelSelector: { pager: 'yes' },
    }))
      names.push(cm.metadata!.name!);
    expect(names).toHaveLength(25);
    expect(new Set(names).size).toBe(25);

    // At a resourceVersion (with and without resourceVersionMatch): the first page carries it, later pages
    // only the continue token — the server refuses a continue token with either (client-go's pager).
    const { resourceVersion } = (await api.list(ConfigMap, { namespace: ns, limit: 1 })).metadata;
    for (const match of [undefined, 'NotOlderThan', 'Exact'] as const) {
      const before = requests.length;
      const got: string[] = [];
      for await (const cm of api.listAll(ConfigMap, {
        namespace: ns,
        pageSize: 10,
        labelSelector: { pager: 'yes' },
        resourceVersion,
        ...(match ? { resourceVersionMatch: match } : {}),
      }))
        got.push(cm.metadata!.name!);
      expect(new Set(got).size).toBe(25);
      const params = requests.slice(before).map((r) => new URLSearchParams(r.path.split('?')[1]));
      expect(params.map((q) => [q.get('resourceVersion'), q.get('resourceVersionMatch')])).toEqual([
        [resourceVersion, match ?? null],
        [null, null],
        [null, null],
      ]);
    }
  });
});

describe.skipIf(realCluster)('pager: an expired continue token (envtest compaction)', () => {
  const ctx = useFaultServer('kubeloop-pager');

  it('restarts once with a full list and still yields every object exactly once', async () => {
    const ns = await ctx.namespace('pager410');
    await configMaps(ctx.api, ns, 12, () => ({}));
    const names: string[] = [];
    let restarted = false;
    let first = true;
    for await (const page of ctx.api.listPages(ConfigMap, { namespace: ns, pageSize: 5 })) {
      if (page.restarted) restarted = true;
      for (const cm of page.items) names.push(cm.metadata!.name!);
      if (first) {
        first = false;
        await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: 'late' } });
        ctx.server.store.compact(); // the first page's continue token is now too old: 410
      }
    }
    expect(restarted).toBe(true);
    const seen = new Set<string>();
    for await (const cm of ctx.api.listAll(ConfigMap, { namespace: ns, pageSize: 100 }))
      seen.add(cm.metadata!.name!);
    expect(seen.size).toBe(13);
    // the restarted full list carries all 13 (the 5 of page one again, as client-go's pager does)
    expect(names.length).toBe(5 + 13);
  });
});

/**
 * Conformance with `@kubernetes/client-node` (a client nobody here wrote): its typed CoreV1Api CRUD, its `Watch`
 * and its `makeInformer` against a fresh envtest server loaded from the kubeconfig envtest writes, including the
 * informer's relist after a 410 Expired. Server state is checked over HTTPS independently of client-node.
 */
import {
  ApiException,
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  makeInformer,
  PatchStrategy,
  setHeaderOptions,
  type V1ConfigMap,
  type V1Pod,
  Watch,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServerJson, startCluster, type TestCluster } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';

const NS = 'cn';

function podBody(name: string, labels: Record<string, string> = {}): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels },
    spec: { containers: [{ name: 'c1', image: 'registry.k8s.io/pause:3.10' }] },
  };
}

async function apiError(p: Promise<unknown>): Promise<ApiException<string>> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiException) return err as ApiException<string>;
    throw err;
  }
  throw new Error('expected the call to fail');
}

describe('@kubernetes/client-node conformance', { timeout: 60_000 }, () => {
  let cluster: TestCluster;
  let kc: KubeConfig;
  let core: CoreV1Api;

  beforeAll(async () => {
    cluster = await startCluster();
    kc = new KubeConfig();
    kc.loadFromFile(cluster.kubeconfigPath);
    core = kc.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
  }, 60_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  it('loads the kubeconfig envtest wrote: https with its CA and a bearer token', () => {
    const c = kc.getCurrentCluster();
    expect(c?.server).toBe(cluster.baseUrl);
    expect(c?.server.startsWith('https://')).toBe(true);
    expect(c?.caData).toBeTruthy();
    expect(kc.getCurrentUser()?.token).toBeTruthy();
  });

  it('CoreV1Api: create, read, list with selectors, replace, patch, conflict, delete', async () => {
    // its own namespace: it lists exactly the pods it made, whatever ran before
    const ns = 'cn-core';
    await core.createNamespace({ body: { metadata: { name: ns } } });
    const created = await core.createNamespacedPod({ namespace: ns, body: podBody('a', { app: 'web' }) });
    expect(created.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata?.creationTimestamp).toBeInstanceOf(Date);
    expect(created.status?.phase).toBe('Pending');
    await core.createNamespacedPod({ namespace: ns, body: podBody('b', { app: 'db' }) });
    expect((await cluster.get(`/api/v1/namespaces/${ns}/pods/a`)).body.metadata.uid).toBe(
      created.metadata?.uid,
    );

    const read = await core.readNamespacedPod({ name: 'a', namespace: ns });
    expect(read.metadata?.resourceVersion).toBe(created.metadata?.resourceVersion);

    const all = await core.listNamespacedPod({ namespace: ns });
    expect(all.items.map((p) => p.metadata?.name)).toEqual(['a', 'b']);
    expect(all.metadata?.resourceVersion).toMatch(/^\d+$/);
    const web = await core.listNamespacedPod({ namespace: ns, labelSelector: 'app in (web)' });
    expect(web.items.map((p) => p.metadata?.name)).toEqual(['a']);
    const byField = await core.listNamespacedPod({ namespace: ns, fieldSelector: 'metadata.name=b' });
    expect(byField.items.map((p) => p.metadata?.name)).toEqual(['b']);
    const page = await core.listNamespacedPod({ namespace: ns, limit: 1 });
    expect(page.items).toHaveLength(1);
    expect(page.metadata?._continue).toBeTruthy();
    expect(page.metadata?.remainingItemCount).toBe(1);
    const rest = await core.listNamespacedPod({
      namespace: ns,
      limit: 1,
      _continue: page.metadata?._continue,
    });
    expect(rest.items.map((p) => p.metadata?.name)).toEqual(['b']);

    const toReplace = structuredClone(read);
    toReplace.metadata = { ...toReplace.metadata, labels: { app: 'web', replaced: 'yes' } };
    const replaced = await core.replaceNamespacedPod({ name: 'a', namespace: ns, body: toReplace });
    expect(replaced.metadata?.labels).toEqual({ app: 'web', replaced: 'yes' });
    expect(Number(replaced.metadata?.resourceVersion)).toBeGreaterThan(
      Number(read.metadata?.resourceVersion),
    );

    const stale = await apiError(core.replaceNamespacedPod({ name: 'a', namespace: ns, body: toReplace }));
    expect(stale.code).toBe(409);
    const staleStatus = JSON.parse(stale.body);
    expect(staleStatus.reason).toBe('Conflict');
    expect(staleStatus.message).toContain('the object has been modified');

    const patched = await core.patchNamespacedPod(
      { name: 'a', namespace: ns, body: { metadata: { labels: { replaced: null, patched: 'yes' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(patched.metadata?.labels).toEqual({ app: 'web', patched: 'yes' });
    const jsonPatched = await core.patchNamespacedPod(
      { name: 'a', namespace: ns, body: [{ op: 'add', path: '/metadata/annotations', value: { n: '1' } }] },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
    expect(jsonPatched.metadata?.annotations).toEqual({ n: '1' });
    expect((await cluster.get(`/api/v1/namespaces/${ns}/pods/a`)).body.metadata.labels).toEqual({
      app: 'web',
      patched: 'yes',
    });

    const dup = await apiError(core.createNamespacedPod({ namespace: ns, body: podBody('b') }));
    expect(dup.code).toBe(409);
    expect(JSON.parse(dup.body).reason).toBe('AlreadyExists');

    await core.deleteNamespacedPod({ name: 'a', namespace: ns });
    expect((await cluster.get(`/api/v1/namespaces/${ns}/pods/a`)).status).toBe(404);
    const missing = await apiError(core.readNamespacedPod({ name: 'a', namespace: ns }));
    expect(missing.code).toBe(404);
    expect(JSON.parse(missing.body)).toMatchObject({ kind: 'Status', reason: 'NotFound', code: 404 });
  });

  it('CoreV1Api: configmaps round-trip data, and a stale delete precondition is refused', async () => {
    const cm: V1ConfigMap = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cfg' },
      data: { k: 'v' },
    };
    const created = await core.createNamespacedConfigMap({ namespace: NS, body: cm });
    expect(created.data).toEqual({ k: 'v' });
    const refused = await apiError(
      core.deleteNamespacedConfigMap({
        name: 'cfg',
        namespace: NS,
        body: { preconditions: { resourceVersion: '1' } },
      }),
    );
    expect(refused.code).toBe(409);
    expect((await cluster.get(`/api/v1/namespaces/${NS}/configmaps/cfg`)).status).toBe(200);
    await core.deleteNamespacedConfigMap({ name: 'cfg', namespace: NS });
    expect((await cluster.get(`/api/v1/namespaces/${NS}/configmaps/cfg`)).status).toBe(404);
  });

  it('Watch: receives ADDED, MODIFIED and DELETED in order from a list resourceVersion', async () => {
    const list = await core.listNamespacedConfigMap({ namespace: NS });
    const events: Array<{ type: string; name: string; rv: string }> = [];
    let doneErr: unknown = 'not done';
    const watch = new Watch(kc);
    const ctl = await watch.watch(
      `/api/v1/namespaces/${NS}/configmaps`,
      { resourceVersion: list.metadata?.resourceVersion, allowWatchBookmarks: true },
      (type, obj: V1ConfigMap) => {
        if (type !== 'BOOKMARK')
          events.push({ type, name: obj.metadata?.name ?? '', rv: obj.metadata?.resourceVersion ?? '' });
      },
      (err) => {
        doneErr = err;
      },
    );
    try {
      await core.createNamespacedConfigMap({
        namespace: NS,
        body: { metadata: { name: 'w1' }, data: { a: '1' } },
      });
      await core.patchNamespacedConfigMap(
        { name: 'w1', namespace: NS, body: { data: { a: '2' } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      await core.deleteNamespacedConfigMap({ name: 'w1', namespace: NS });
      await waitFor(() => events.length >= 3, 10_000, 'three watch events');
      expect(events.map((e) => `${e.type} ${e.name}`)).toEqual(['ADDED w1', 'MODIFIED w1', 'DELETED w1']);
      const rvs = events.map((e) => Number(e.rv));
      expect(rvs[0]).toBeLessThan(rvs[1] as number);
      expect(rvs[1]).toBeLessThan(rvs[2] as number);
      expect(doneErr).toBe('not done');
    } finally {
      ctl.abort();
    }
  });

  it('Watch: a resourceVersion older than the history ends with a 410 Expired ERROR', async () => {
    const before = await core.listNamespacedConfigMap({ namespace: NS });
    const oldRv = before.metadata?.resourceVersion;
    for (let i = 0; i < 5; i++) {
      await core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name: `old-${i}` } } });
    }
    cluster.setWatchHistoryLimit(2);
    await cluster.compact();
    const seen: Array<{ type: string; obj: ServerJson }> = [];
    let done: { err: unknown } | undefined;
    const ctl = await new Watch(kc).watch(
      `/api/v1/namespaces/${NS}/configmaps`,
      { resourceVersion: oldRv },
      (type, obj) => seen.push({ type, obj }),
      (err) => {
        done = { err };
      },
    );
    try {
      const ended = await waitFor(() => done, 10_000, 'the watch to end');
      const errorEvent = seen.find((e) => e.type === 'ERROR');
      if (errorEvent) {
        expect(errorEvent.obj).toMatchObject({ kind: 'Status', reason: 'Expired', code: 410 });
        expect(seen.filter((e) => e.type !== 'ERROR' && e.type !== 'BOOKMARK')).toEqual([]);
      } else {
        // A plain HTTP 410 is the other answer upstream allows.
        expect((ended.err as { statusCode?: number }).statusCode).toBe(410);
      }
    } finally {
      ctl.abort();
      cluster.setWatchHistoryLimit(1000);
    }
  });

  it('makeInformer: syncs, follows changes, and relists after a 410 (deletes seen during the gap)', async () => {
    const path = `/api/v1/namespaces/${NS}/pods`;
    for (const n of ['i1', 'i2', 'i3'])
      await core.createNamespacedPod({ namespace: NS, body: podBody(n, { inf: 'yes' }) });
    let lists = 0;
    const informer = makeInformer<V1Pod>(
      kc,
      path,
      () => {
        lists++;
        return core.listNamespacedPod({ namespace: NS, labelSelector: 'inf=yes' });
      },
      'inf=yes',
    );
    const adds: string[] = [];
    const updates: string[] = [];
    const deletes: string[] = [];
    const errors: unknown[] = [];
    informer.on('add', (o) => adds.push(o.metadata?.name ?? ''));
    informer.on('update', (o) => updates.push(o.metadata?.name ?? ''));
    informer.on('delete', (o) => deletes.push(o.metadata?.name ?? ''));
    // Aborting the watch on stop() is reported as an AbortError by client-node; anything else is a failure.
    informer.on('error', (e) => {
      if ((e as { name?: string }).name !== 'AbortError') errors.push(e);
    });
    const cached = () =>
      informer
        .list(NS)
        .map((p) => p.metadata?.name)
        .sort();
    await informer.start();
    try {
      expect(cached()).toEqual(['i1', 'i2', 'i3']);
      expect(lists).toBe(1);

      await core.createNamespacedPod({ namespace: NS, body: podBody('i4', { inf: 'yes' }) });
      await core.patchNamespacedPod(
        { name: 'i1', namespace: NS, body: { metadata: { annotations: { touched: '1' } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      await waitFor(() => adds.includes('i4') && updates.includes('i1'), 10_000, 'i4 added and i1 updated');
      expect(informer.get('i1', NS)?.metadata?.annotations).toEqual({ touched: '1' });

      // Stop the informer, change the world while it is away, and expire its resourceVersion.
      await informer.stop();
      await core.deleteNamespacedPod({ name: 'i2', namespace: NS });
      await core.createNamespacedPod({ namespace: NS, body: podBody('i5', { inf: 'yes' }) });
      // Pods outside the informer's selector push its resourceVersion out of the (shrunk) pod history.
      for (let i = 0; i < 5; i++)
        await core.createNamespacedPod({ namespace: NS, body: podBody(`churn-${i}`) });
      cluster.setWatchHistoryLimit(2);
      await cluster.compact();

      // start() re-watches from the old resourceVersion: 410, then a relist.
      await informer.start();
      await waitFor(() => lists >= 2 && cached().join() === 'i1,i3,i4,i5', 15_000, 'the relist after 410');
      expect(deletes).toContain('i2');
      expect(adds).toContain('i5');
      expect(errors).toEqual([]);
      const server = await cluster.get(`${path}?labelSelector=inf%3Dyes`);
      expect(server.body.items.map((p: V1Pod) => p.metadata?.name).sort()).toEqual(cached());

      // After the relist the informer watches again: a new change arrives without another list.
      const listsAfter = lists;
      await core.deleteNamespacedPod({ name: 'i3', namespace: NS });
      await waitFor(() => deletes.includes('i3'), 10_000, 'the delete of i3');
      expect(lists).toBe(listsAfter);
    } finally {
      await informer.stop();
      cluster.setWatchHistoryLimit(1000);
    }
  });
  it('Watch: a label change that leaves the selector is DELETED, one that joins is ADDED', async () => {
    const list = await core.listNamespacedConfigMap({ namespace: NS, labelSelector: 'sel=yes' });
    await core.createNamespacedConfigMap({
      namespace: NS,
      body: { metadata: { name: 'lj', labels: { sel: 'no' } } },
    });
    const events: string[] = [];
    const ctl = await new Watch(kc).watch(
      `/api/v1/namespaces/${NS}/configmaps`,
      { resourceVersion: list.metadata?.resourceVersion, labelSelector: 'sel=yes' },
      (type, obj: V1ConfigMap) =>
        events.push(
          `${type} ${obj.metadata?.name} ${obj.metadata?.labels?.sel} ${obj.metadata?.resourceVersion}`,
        ),
      () => {},
    );
    try {
      const relabel = (sel: string) =>
        core.patchNamespacedConfigMap(
          { name: 'lj', namespace: NS, body: { metadata: { labels: { sel } } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
      const joined = await relabel('yes');
      const left = await relabel('no');
      await waitFor(() => events.length >= 2, 10_000, 'join and leave events');
      // As the apiserver's watch cache: the DELETED for leaving carries the last matching state at the new RV.
      expect(events).toEqual([
        `ADDED lj yes ${joined.metadata?.resourceVersion}`,
        `DELETED lj yes ${left.metadata?.resourceVersion}`,
      ]);
    } finally {
      ctl.abort();
    }
  });

  it('Watch: allowWatchBookmarks with timeoutSeconds gets a BOOKMARK and a clean end from the server', async () => {
    const list = await core.listNamespacedConfigMap({ namespace: NS });
    // a configmap elsewhere moves the configmaps' watch cache past the list RV: kube-apiserver then sends the
    // watch a BOOKMARK 2 s before its deadline (a quiet resource would get none)
    const elsewhere = `cn-bm-${Date.now().toString(36)}`;
    await core.createNamespace({ body: { metadata: { name: elsewhere } } });
    await core.createNamespacedConfigMap({ namespace: elsewhere, body: { metadata: { name: 'moved' } } });
    const types: string[] = [];
    const bookmarks: KubernetesObject[] = [];
    let done: { err: unknown } | undefined;
    const ctl = await new Watch(kc).watch(
      `/api/v1/namespaces/${NS}/configmaps`,
      { resourceVersion: list.metadata?.resourceVersion, allowWatchBookmarks: true, timeoutSeconds: 3 },
      (type, obj: KubernetesObject) => {
        types.push(type);
        if (type === 'BOOKMARK') bookmarks.push(obj);
      },
      (err) => {
        done = { err };
      },
    );
    try {
      const ended = await waitFor(() => done, 15_000, 'the server to end the watch');
      expect(ended.err).toBeNull();
      expect(types).toEqual(['BOOKMARK']);
      expect(bookmarks[0]?.kind).toBe('ConfigMap');
      expect(Number(bookmarks[0]?.metadata?.resourceVersion)).toBeGreaterThan(
        Number(list.metadata?.resourceVersion),
      );
    } finally {
      ctl.abort();
    }
  });

  it('AppsV1Api: deployment create, scale subresource, status replace keeps spec and generation', async () => {
    const apps = kc.makeApiClient(AppsV1Api);
    const created = await apps.createNamespacedDeployment({
      namespace: NS,
      body: {
        metadata: { name: 'web' },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] },
          },
        },
      },
    });
    expect(created.metadata?.generation).toBe(1);
    const scale = await apps.readNamespacedDeploymentScale({ name: 'web', namespace: NS });
    expect(scale.spec?.replicas).toBe(1);
    expect(scale.status?.selector).toBe('app=web');
    await apps.patchNamespacedDeploymentScale(
      { name: 'web', namespace: NS, body: { spec: { replicas: 4 } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const scaled = await apps.readNamespacedDeployment({ name: 'web', namespace: NS });
    expect(scaled.spec?.replicas).toBe(4);
    expect(scaled.metadata?.generation).toBe(2);

    const withStatus = structuredClone(scaled);
    withStatus.status = { replicas: 4, readyReplicas: 4, observedGeneration: 2 };
    if (withStatus.spec) withStatus.spec.replicas = 99;
    const replaced = await apps.replaceNamespacedDeploymentStatus({
      name: 'web',
      namespace: NS,
      body: withStatus,
    });
    expect(replaced.status?.readyReplicas).toBe(4);
    expect(replaced.spec?.replicas).toBe(4);
    expect(replaced.metadata?.generation).toBe(2);
    const server = await cluster.get(`/apis/apps/v1/namespaces/${NS}/deployments/web`);
    expect(server.body.status.readyReplicas).toBe(4);
    expect(server.body.spec.replicas).toBe(4);
  });

  it('KubernetesObjectApi: discovers a new CRD and does CRUD plus server-side apply on its objects', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'things.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'things', singular: 'thing', kind: 'Thing', listKind: 'ThingList' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: {
                    type: 'object',
                    properties: { size: { type: 'integer' }, color: { type: 'string' } },
                  },
                },
              },
            },
          },
        ],
      },
    };
    const objects = KubernetesObjectApi.makeApiClient(kc);
    await objects.create(crd);
    await waitFor(
      async () => {
        const r = await cluster.get(
          '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/things.example.com',
        );
        return r.body.status?.conditions?.some(
          (c: { type: string; status: string }) => c.type === 'Established' && c.status === 'True',
        );
      },
      10_000,
      'things.example.com Established',
    );
    type Thing = KubernetesObject & { spec?: { size?: number; color?: string } };
    const thing: Thing = {
      apiVersion: 'example.com/v1',
      kind: 'Thing',
      metadata: { name: 't1', namespace: NS },
      spec: { size: 1 },
    };
    const created = await objects.create(thing);
    expect(created.metadata?.uid).toBeTruthy();
    const read = await objects.read<Thing>({
      apiVersion: 'example.com/v1',
      kind: 'Thing',
      metadata: { name: 't1', namespace: NS },
    });
    expect(read.spec).toEqual({ size: 1 });
    const list = await objects.list<Thing>('example.com/v1', 'Thing', NS);
    expect(list.items.map((t) => t.metadata?.name)).toEqual(['t1']);

    const applied = await objects.patch<Thing>(
      {
        apiVersion: 'example.com/v1',
        kind: 'Thing',
        metadata: { name: 't1', namespace: NS },
        spec: { color: 'red' },
      },
      undefined,
      undefined,
      'painter',
      false,
      PatchStrategy.ServerSideApply,
    );
    expect(applied.spec).toEqual({ size: 1, color: 'red' });
    const mf = (applied.metadata?.managedFields ?? []).find((m) => m.manager === 'painter');
    expect(mf?.operation).toBe('Apply');

    const conflict = await apiError(
      objects.patch<Thing>(
        {
          apiVersion: 'example.com/v1',
          kind: 'Thing',
          metadata: { name: 't1', namespace: NS },
          spec: { color: 'blue' },
        },
        undefined,
        undefined,
        'other-painter',
        false,
        PatchStrategy.ServerSideApply,
      ),
    );
    expect(conflict.code).toBe(409);
    expect(JSON.parse(conflict.body).details.causes[0].reason).toBe('FieldManagerConflict');

    await objects.delete({
      apiVersion: 'example.com/v1',
      kind: 'Thing',
      metadata: { name: 't1', namespace: NS },
    });
    expect((await cluster.get(`/apis/example.com/v1/namespaces/${NS}/things/t1`)).status).toBe(404);
  });
});

describe('@kubernetes/client-node informer over watches the server ends every 300 ms', {
  timeout: 60_000,
}, () => {
  it('re-watches from its last resourceVersion: one list, no missed or repeated events', async () => {
    const cluster = await startCluster({ server: { defaultWatchTimeoutMs: 300 } });
    try {
      const kc = new KubeConfig();
      kc.loadFromFile(cluster.kubeconfigPath);
      const core = kc.makeApiClient(CoreV1Api);
      await core.createNamespace({ body: { metadata: { name: 'short' } } });
      let lists = 0;
      const informer = makeInformer<V1ConfigMap>(kc, '/api/v1/namespaces/short/configmaps', () => {
        lists++;
        return core.listNamespacedConfigMap({ namespace: 'short' });
      });
      const adds: string[] = [];
      let connects = 0;
      informer.on('add', (o) => adds.push(o.metadata?.name ?? ''));
      informer.on('connect', () => {
        connects++;
      });
      await informer.start();
      try {
        for (let i = 0; i < 20; i++) {
          await core.createNamespacedConfigMap({ namespace: 'short', body: { metadata: { name: `c${i}` } } });
          // Spread the writes over several watch lifetimes: wait until the informer has reconnected again.
          if (i % 5 === 4) {
            const seen = connects;
            await waitFor(
              () => connects > seen,
              10_000,
              'the informer to re-watch after the server ended its watch',
            );
          }
        }
        await waitFor(() => adds.length >= 20, 10_000, 'all 20 adds');
        expect(adds).toEqual(Array.from({ length: 20 }, (_, i) => `c${i}`));
        expect(lists).toBe(1);
        expect(connects).toBeGreaterThanOrEqual(4);
      } finally {
        await informer.stop();
      }
    } finally {
      await cluster.stop();
    }
  });
});

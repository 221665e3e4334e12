import { newControllerManagedBy, newManager } from '@kubeloop/builder';
import { ConfigMap, type KubeObject, kind, Namespace } from '@kubeloop/client';
import { OwnerReferenceError, setControllerReference } from '@kubeloop/client/controllerutil';
import { describe, expect, it, vi } from 'vitest';
import { installCRD } from './support/crds.js';
import {
  captureLogger,
  type LogRecord,
  testConfig,
  uniqueName,
  useLiveCluster,
  withNamespace,
} from './support.js';

const Tenant = kind<KubeObject>('c26.example.com/v1', 'Tenant');

describe('C26 owner scope: a cluster-scoped owner of a namespaced child', () => {
  const live = useLiveCluster();

  it('C26: editing ns-a/cfg reconciles {namespace: "", name: t1} exactly once; the plain owner t2 only when every owner is asked for', async () => {
    const api = live.client();
    await installCRD(api, { group: 'c26.example.com', kind: 'Tenant', plural: 'tenants', scope: 'Cluster' });
    const ns = uniqueName('c26');
    live.cleanups.push(await withNamespace(api, ns));
    const prefix = uniqueName('t');
    const tenants: Record<string, KubeObject> = {};
    for (const n of ['t1', 't2', 'fence']) {
      tenants[n] = await api.create(Tenant, { metadata: { name: `${prefix}-${n}` } });
      live.cleanups.push(() => api.delete(Tenant, { name: `${prefix}-${n}` }).catch(() => undefined));
    }
    const ref = (n: string, controller: boolean) => ({
      apiVersion: 'c26.example.com/v1',
      kind: 'Tenant',
      name: `${prefix}-${n}`,
      uid: tenants[n]?.metadata?.uid as string,
      controller,
    });
    await api.create(ConfigMap, {
      metadata: { namespace: ns, name: 'cfg', ownerReferences: [ref('t1', true), ref('t2', false)] },
      data: { v: '0' },
    });
    await api.create(ConfigMap, {
      metadata: { namespace: ns, name: 'fence', ownerReferences: [ref('fence', true)] },
    });

    const records: LogRecord[] = [];
    const mgr = newManager(testConfig(), { logger: captureLogger(records) });
    const onlyController: Array<{ namespace: string; name: string }> = [];
    const everyOwner: Array<{ namespace: string; name: string }> = [];
    newControllerManagedBy(mgr)
      .named('c26-controller-owner')
      .for(Tenant, { predicates: [{ create: () => false }] })
      .owns(ConfigMap, { predicates: [{ create: () => false }] })
      .complete({
        async reconcile(_ctx, req) {
          onlyController.push({ ...req });
        },
      });
    newControllerManagedBy(mgr)
      .named('c26-every-owner')
      .for(Tenant, { predicates: [{ create: () => false }] })
      .owns(ConfigMap, { predicates: [{ create: () => false }], onlyControllerOwner: false })
      .complete({
        async reconcile(_ctx, req) {
          everyOwner.push({ ...req });
        },
      });
    const ac = new AbortController();
    const run = mgr.start(ac.signal);
    live.cleanups.push(async () => {
      ac.abort();
      await run;
    });
    // Both controllers synced: edits from now on arrive as updates (creates are filtered out above).
    await vi.waitFor(() => expect(records.filter((r) => r.msg === 'Starting workers')).toHaveLength(2), {
      timeout: 20_000,
    });

    await api.patch(ConfigMap, { namespace: ns, name: 'cfg' }, { type: 'merge', data: { data: { v: '1' } } });
    // The fence ConfigMap's owner reconciles after every earlier ConfigMap event was handled (one worker each).
    await api.patch(
      ConfigMap,
      { namespace: ns, name: 'fence' },
      { type: 'merge', data: { data: { v: '1' } } },
    );
    const fence = { namespace: '', name: `${prefix}-fence` };
    await vi.waitFor(() => expect(onlyController).toContainEqual(fence), { timeout: 20_000 });
    await vi.waitFor(() => expect(everyOwner).toContainEqual(fence), { timeout: 20_000 });
    expect(onlyController).toEqual([{ namespace: '', name: `${prefix}-t1` }, fence]);
    expect(everyOwner.filter((r) => r.name !== fence.name)).toEqual(
      expect.arrayContaining([
        { namespace: '', name: `${prefix}-t1` },
        { namespace: '', name: `${prefix}-t2` },
      ]),
    );
    expect(everyOwner).toHaveLength(3);
  });

  it('C26: setControllerReference refuses a namespaced owner in another namespace, and a namespaced owner of a cluster-scoped child, before any request', () => {
    const owner = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { namespace: 'ns-b', name: 'o', uid: 'u1' },
    };
    const child: KubeObject = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { namespace: 'ns-a', name: 'c' },
    };
    expect(() => setControllerReference(owner, child)).toThrow(OwnerReferenceError);
    expect(child.metadata?.ownerReferences).toBeUndefined();
    const clusterChild: KubeObject = {
      apiVersion: Namespace.apiVersion,
      kind: Namespace.kind,
      metadata: { name: 'n' },
    };
    expect(() => setControllerReference(owner, clusterChild)).toThrow(OwnerReferenceError);
    expect(clusterChild.metadata?.ownerReferences).toBeUndefined();
  });
});

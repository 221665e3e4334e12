import { ConfigMap, isConflict, isNotFound, Namespace, type StatusError } from '@kubeloop/client';
import {
  AlreadyOwnedError,
  addFinalizer,
  createOrUpdate,
  removeFinalizerWithPatch,
  setControllerReference,
  setOwnerReference,
} from '@kubeloop/client/controllerutil';
import { InvalidRequestError } from '@kubeloop/client/errors';
import { Lease } from '@kubeloop/client/kinds';
import { describe, expect, it } from 'vitest';
import { realCluster, useFaultServer } from './support/fault-server.js';
import { useLiveCluster, waitFor } from './support.js';

describe('client.apply (server-side apply with apply configurations)', () => {
  const live = useLiveCluster();
  const setup = () => live.namespace('apply');

  it('creates, owns the applied fields, conflicts with another manager unless forced, and drops fields it stops applying', async () => {
    const { api, ns } = await setup();
    const meta = { name: 'cfg', namespace: ns };
    const created = await api.apply(
      ConfigMap,
      { metadata: meta, data: { a: '1', b: '2' } },
      { fieldManager: 'mgr-a' },
    );
    expect(created.data).toEqual({ a: '1', b: '2' });
    expect(created.metadata?.managedFields?.map((m) => [m.manager, m.operation])).toEqual([
      ['mgr-a', 'Apply'],
    ]);

    const conflict = await api
      .apply(ConfigMap, { metadata: meta, data: { a: 'x' } }, { fieldManager: 'mgr-b' })
      .catch((e: unknown) => e);
    expect(isConflict(conflict)).toBe(true);
    expect((conflict as StatusError).message).toMatch(/mgr-a/);

    const forced = await api.apply(
      ConfigMap,
      { metadata: meta, data: { a: 'x' } },
      { fieldManager: 'mgr-b', force: true },
    );
    expect(forced.data).toEqual({ a: 'x', b: '2' });
    // mgr-a now applies only b: a belongs to mgr-b and stays, nothing else changes
    const again = await api.apply(ConfigMap, { metadata: meta, data: { b: '2' } }, { fieldManager: 'mgr-a' });
    expect(again.data).toEqual({ a: 'x', b: '2' });
    // mgr-b stops applying a: nobody owns it any more, so the server removes it
    const dropped = await api.apply(
      ConfigMap,
      { metadata: meta, data: undefined },
      { fieldManager: 'mgr-b' },
    );
    expect(dropped.data).toEqual({ b: '2' });
  });

  it('a Date in a Lease (client-node types timestamps as Date) is sent as a MicroTime, by create, update, patch and apply', async () => {
    // kube-apiserver parses metav1.MicroTime strictly (six fractional digits): JSON.stringify's ".926Z" is a 400,
    // and the apply body turned a Date into {}.
    const { api, ns } = await setup();
    const at = new Date(Date.UTC(2026, 11, 1, 5, 27, 55, 926));
    const micro = '2026-12-01T05:27:55.926000Z';
    const key = { namespace: ns, name: 'dated' };
    const created = await api.create(Lease, {
      metadata: key,
      spec: { holderIdentity: 'a', leaseDurationSeconds: 10, acquireTime: at, renewTime: at },
    } as never);
    expect([created.spec?.acquireTime, created.spec?.renewTime]).toEqual([micro, micro]);
    const updated = await api.update(Lease, {
      ...created,
      spec: { ...created.spec, renewTime: at },
    } as never);
    expect(updated.spec?.renewTime).toBe(micro);
    const patched = await api.patch(Lease, key, { type: 'merge', data: { spec: { renewTime: at } } });
    expect(patched.spec?.renewTime).toBe(micro);
    const applied = await api.apply(
      Lease,
      { metadata: { namespace: ns, name: 'applied' }, spec: { holderIdentity: 'b', renewTime: at } } as never,
      { fieldManager: 'dates' },
    );
    expect(applied.spec?.renewTime).toBe(micro);
  });

  it('is refused before sending without a field manager or a name', async () => {
    const { api, ns } = await setup();
    await expect(api.apply(ConfigMap, { metadata: { name: 'x', namespace: ns } })).rejects.toBeInstanceOf(
      InvalidRequestError,
    );
    await expect(
      api.apply(ConfigMap, { metadata: { name: '', namespace: ns } }, { fieldManager: 'm' }),
    ).rejects.toThrow(/needs metadata.name/);
  });
});

describe('controllerutil against the API server', () => {
  const live = useLiveCluster();

  it('owner references written by createOrUpdate: the server stores them; a second controller is refused by name (C26)', async () => {
    const { api, ns } = await live.namespace('owners');
    const owner = await api.create(ConfigMap, { metadata: { namespace: ns, name: 'owner' } });
    const other = await api.create(ConfigMap, { metadata: { namespace: ns, name: 'other' } });
    const nsObj = await api.get(Namespace, { name: ns });
    const { result, object } = await createOrUpdate(api, ConfigMap, { namespace: ns, name: 'child' }, (c) => {
      setControllerReference(owner, c);
      setOwnerReference(nsObj, c); // a cluster-scoped owner of a namespaced object is fine
      c.data = { k: 'v' };
    });
    expect(result).toBe('created');
    expect(object.metadata?.ownerReferences?.map((r) => [r.kind, r.name, r.controller ?? false])).toEqual([
      ['ConfigMap', 'owner', true],
      ['Namespace', ns, false],
    ]);
    // the same references again: nothing to write
    expect(
      (
        await createOrUpdate(api, ConfigMap, { namespace: ns, name: 'child' }, (c) => {
          setControllerReference(owner, c);
          setOwnerReference(nsObj, c);
        })
      ).result,
    ).toBe('unchanged');
    await expect(
      createOrUpdate(api, ConfigMap, { namespace: ns, name: 'child' }, (c) =>
        setControllerReference(other, c),
      ),
    ).rejects.toThrow(AlreadyOwnedError);
  });
});

describe.skipIf(realCluster)(
  'controllerutil removeFinalizerWithPatch under a race (C20, envtest barrier)',
  () => {
    const ctx = useFaultServer('kubeloop-finalizers');

    it('two controllers removing their own finalizer at the same moment both succeed, then the object is deleted', async () => {
      const ns = await ctx.namespace('fin');
      const key = { namespace: ns, name: 'fin' };
      const cm = { metadata: { ...key } };
      addFinalizer(cm, 'example.com/a');
      addFinalizer(cm, 'example.com/b');
      await ctx.api.create(ConfigMap, cm);
      await ctx.api.delete(ConfigMap, key);
      // both PATCHes are held until both arrived: both were computed from the same read
      const barrier = ctx.server.faults.delayRequests({
        match: { verb: 'patch', namespace: ns },
        barrier: 2,
        times: 2,
      });
      const removed = await Promise.all([
        removeFinalizerWithPatch(ctx.api, ConfigMap, key, 'example.com/a'),
        removeFinalizerWithPatch(ctx.api, ConfigMap, key, 'example.com/b'),
      ]);
      expect(barrier.hits).toBe(2);
      expect(removed).toEqual([true, true]);
      // the loser's test op failed (422) against the moved list, and it re-read and removed at the new index
      const patches = ctx.server.faults.requests({ verb: 'patch', namespace: ns });
      expect(patches.filter((r) => r.status === 422)).toHaveLength(1);
      expect(patches.filter((r) => r.status === 200)).toHaveLength(2);
      await waitFor(async () => {
        try {
          await ctx.api.get(ConfigMap, key);
          return false;
        } catch (e) {
          if (isNotFound(e)) return true;
          throw e;
        }
      }, 'the object deleted once both finalizers are gone');
      expect(await removeFinalizerWithPatch(ctx.api, ConfigMap, key, 'example.com/a')).toBe(false);
    });
  },
);

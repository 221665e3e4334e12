import { ConfigMap, Deployment, isNotFound } from '@kubeloop/client';
import { createOrPatch, createOrUpdate, removeFinalizerWithPatch } from '@kubeloop/client/controllerutil';
import { InvalidRequestError } from '@kubeloop/client/errors';
import { describe, expect, it } from 'vitest';
import { deploymentManifest } from './support/manifests.js';
import { recordingClient } from './support/recording-transport.js';
import { testConfig, useLiveCluster } from './support.js';

describe('client write options on the new methods (dryRun, fieldManager, scope errors)', () => {
  const live = useLiveCluster();
  const setup = () => live.namespace('wopts');

  it('dryRun on apply, status().update, createOrUpdate and createOrPatch persists nothing', async () => {
    const { api, ns } = await setup();
    const key = { namespace: ns, name: 'cfg' };
    const dry = await api.apply(
      ConfigMap,
      { metadata: key, data: { a: '1' } },
      { fieldManager: 'm', dryRun: true },
    );
    expect(dry.data).toEqual({ a: '1' });
    await expect(api.get(ConfigMap, key)).rejects.toSatisfy(isNotFound);
    const created = await createOrUpdate(
      api,
      ConfigMap,
      key,
      (c) => {
        c.data = { a: '1' };
      },
      {
        dryRun: true,
      },
    );
    expect(created.result).toBe('created');
    await expect(api.get(ConfigMap, key)).rejects.toSatisfy(isNotFound);

    const dep = await api.create(Deployment, deploymentManifest(ns, 'web'));
    await api.status().update(Deployment, { ...dep, status: { observedGeneration: 9 } }, { dryRun: true });
    expect(
      (await api.get(Deployment, { namespace: ns, name: 'web' })).status?.observedGeneration,
    ).toBeUndefined();
    const patched = await createOrPatch(
      api,
      Deployment,
      { namespace: ns, name: 'web' },
      (d) => {
        d.spec!.replicas = 5;
      },
      { dryRun: true },
    );
    expect(patched.result).toBe('updated');
    expect((await api.get(Deployment, { namespace: ns, name: 'web' })).spec?.replicas).toBe(1);
  });

  it('fieldManager of createOrUpdate and removeFinalizerWithPatch is recorded in managedFields', async () => {
    const { api, ns } = await setup();
    const key = { namespace: ns, name: 'cfg' };
    await createOrUpdate(
      api,
      ConfigMap,
      key,
      (c) => {
        c.data = { a: '1' };
        c.metadata!.finalizers = ['example.com/f'];
      },
      { fieldManager: 'creator' },
    );
    const { client: remover, requests } = recordingClient(testConfig());
    live.cleanups.push(() => remover.close());
    expect(
      await removeFinalizerWithPatch(remover, ConfigMap, key, 'example.com/f', {
        fieldManager: 'finalizer-remover',
      }),
    ).toBe(true);
    const managers = (await api.get(ConfigMap, key)).metadata?.managedFields?.map((m) => m.manager);
    expect(managers).toContain('creator');
    // A write that only removes fields owns none, and kube-apiserver drops a manager whose field set is empty
    // (structured-merge-diff), so the remover's manager is checked on the request it sent.
    const patch = requests.find((r) => r.method === 'PATCH');
    expect(new URLSearchParams(patch?.path.split('?')[1]).get('fieldManager')).toBe('finalizer-remover');
  });

  it('deleteAllOf of a namespaced kind without a namespace is refused before sending, deleting nothing', async () => {
    const { api, ns } = await setup();
    await api.create(ConfigMap, { metadata: { namespace: ns, name: 'keep' } });
    // kube-apiserver serves deletecollection only on the namespaced path (405 on /api/v1/configmaps)
    await expect(
      api.deleteAllOf(ConfigMap, { labelSelector: { nothing: 'matches' } }),
    ).rejects.toBeInstanceOf(InvalidRequestError);
    expect((await api.get(ConfigMap, { namespace: ns, name: 'keep' })).metadata?.name).toBe('keep');
  });
});

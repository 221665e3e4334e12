import {
  type ApiClient,
  ConfigMap,
  Deployment,
  isConflict,
  isNotFound,
  Pod,
  StatusError,
} from '@kubeloop/client';
import { InvalidRequestError } from '@kubeloop/client/errors';
import { ServiceAccount } from '@kubeloop/client/kinds';
import type { AuthenticationV1TokenRequest, V1Deployment, V1Scale } from '@kubeloop/client/models';
import { describe, expect, it } from 'vitest';
import { realCluster } from './support/fault-server.js';
import { deploymentManifest } from './support/manifests.js';
import { podManifest, useLiveCluster } from './support.js';

describe('client subresources: status(), subResource(scale|eviction)', () => {
  const live = useLiveCluster();
  async function setup(): Promise<{ api: ApiClient; ns: string }> {
    const { api, ns } = await live.namespace('subres');
    return { api, ns };
  }

  it('status().update / patch / apply change only .status; spec, labels and generation stay as stored', async () => {
    const { api, ns } = await setup();
    const dep = await api.create(Deployment, deploymentManifest(ns, 'web'));
    const key = { namespace: ns, name: 'web' };
    // update: the body also carries a spec and label change, which the server must ignore
    const updated = await api.status().update(Deployment, {
      ...dep,
      metadata: { ...dep.metadata, labels: { app: 'web', sneaky: 'yes' } },
      spec: { ...dep.spec!, replicas: 7 },
      status: { observedGeneration: 1, replicas: 1 },
    });
    expect(updated.status?.observedGeneration).toBe(1);
    expect(updated.spec?.replicas).toBe(1);
    expect(updated.metadata?.labels).toEqual({ app: 'web' });
    expect(updated.metadata?.generation).toBe(dep.metadata?.generation);
    // a stale resourceVersion is a conflict
    await expect(api.status().update(Deployment, { ...dep, status: { replicas: 2 } })).rejects.toSatisfy(
      isConflict,
    );

    const patched = await api.status().patch(Deployment, key, {
      type: 'merge',
      data: { status: { readyReplicas: 1 }, spec: { replicas: 9 } },
    });
    expect(patched.status?.readyReplicas).toBe(1);
    expect(patched.spec?.replicas).toBe(1);

    const applied = await api
      .status()
      .apply(
        Deployment,
        { metadata: { name: 'web', namespace: ns }, spec: { replicas: 5 }, status: { availableReplicas: 1 } },
        { fieldManager: 'status-test', force: true },
      );
    expect(applied.status?.availableReplicas).toBe(1);
    expect(applied.spec?.replicas).toBe(1);
    const mf = applied.metadata?.managedFields?.find((m) => m.manager === 'status-test');
    expect(mf?.operation).toBe('Apply');
    expect(mf?.subresource).toBe('status');
    // the object as read is unchanged by all this: spec never moved
    expect((await api.get(Deployment, key)).spec?.replicas).toBe(1);
    // apply without a field manager is refused before sending
    await expect(
      api.status().apply(Deployment, { metadata: { name: 'web', namespace: ns }, status: {} }),
    ).rejects.toBeInstanceOf(InvalidRequestError);
  });

  it("subResource('scale'): get a Scale, update it with a Scale body, patch it; the parent's spec.replicas follows", async () => {
    const { api, ns } = await setup();
    const dep = await api.create(Deployment, deploymentManifest(ns, 'web', 2));
    const key = { namespace: ns, name: 'web' };
    const scale = await api.subResource('scale').get<V1Deployment, V1Scale>(Deployment, key);
    expect(scale.kind).toBe('Scale');
    expect(scale.apiVersion).toBe('autoscaling/v1');
    expect(scale.spec?.replicas).toBe(2);

    const updated = await api
      .subResource('scale')
      .update(Deployment, dep, { subResourceBody: { ...scale, spec: { replicas: 3 } } });
    expect(updated.kind).toBe('Scale');
    expect(updated.spec?.replicas).toBe(3);
    expect((await api.get(Deployment, key)).spec?.replicas).toBe(3);

    const patched = await api
      .subResource('scale')
      .patch<V1Deployment, V1Scale>(Deployment, key, { type: 'merge', data: { spec: { replicas: 4 } } });
    expect(patched.spec?.replicas).toBe(4);
    expect((await api.get(Deployment, key)).spec?.replicas).toBe(4);
    // a stale Scale (old resourceVersion) conflicts, as a PUT of the object would
    await expect(
      api
        .subResource('scale')
        .update(Deployment, dep, { subResourceBody: { ...scale, spec: { replicas: 1 } } }),
    ).rejects.toSatisfy(isConflict);
  });

  it('a subresource a kind does not have, and a missing object, are typed 404s', async () => {
    const { api, ns } = await setup();
    await api.create(ConfigMap, { metadata: { namespace: ns, name: 'cm' } });
    const noScale = await api
      .subResource('scale')
      .get(ConfigMap, { namespace: ns, name: 'cm' })
      .catch((e: unknown) => e);
    expect(noScale).toBeInstanceOf(StatusError);
    expect(isNotFound(noScale)).toBe(true);
    await expect(api.subResource('scale').get(Deployment, { namespace: ns, name: 'nope' })).rejects.toSatisfy(
      isNotFound,
    );
    expect(() => api.subResource('a/b')).toThrow(InvalidRequestError);
  });

  it("subResource('eviction').create posts a policy/v1 Eviction for the pod", async () => {
    const { api, ns } = await setup();
    await api.create(Pod, podManifest(ns, 'p1'));
    const evicted = api
      .subResource('eviction')
      .create(Pod, { metadata: { namespace: ns, name: 'p1' } }, { deleteOptions: { gracePeriodSeconds: 0 } });
    // No PodDisruptionBudget selects the pod, so the server (kube-apiserver and envtest alike) deletes it with the
    // Eviction's delete options: it is gone, or terminating where a kubelet would still have to confirm.
    await evicted;
    const after = await api.get(Pod, { namespace: ns, name: 'p1' }).catch((e: unknown) => e);
    expect(
      isNotFound(after) ||
        !!(after as { metadata?: { deletionTimestamp?: unknown } }).metadata?.deletionTimestamp,
    ).toBe(true);
  });

  // envtest serves no service accounts: this runs against a real cluster (USE_EXISTING_CLUSTER=true) only
  it.skipIf(!realCluster)(
    "subResource('token').create returns a TokenRequest with a token (real cluster)",
    async () => {
      const { api, ns } = await setup();
      const sa = await api.create(ServiceAccount, { metadata: { namespace: ns, name: 'robot' } });
      const tr = await api
        .subResource('token')
        .create<typeof sa, AuthenticationV1TokenRequest>(ServiceAccount, sa, {
          spec: { audiences: [], expirationSeconds: 600 },
        });
      expect(tr.kind).toBe('TokenRequest');
      expect(typeof tr.status?.token).toBe('string');
      expect(tr.status!.token.length).toBeGreaterThan(20); // never printed
    },
  );
});

import { type ApiClient, isNotFound, type KubeObject, kind, newClient } from '@kubeloop/client';
import { InvalidRequestError } from '@kubeloop/client/errors';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { testConfig, uniqueName, withNamespace } from './support.js';

const CustomResourceDefinition = kind('apiextensions.k8s.io/v1', 'CustomResourceDefinition');
type Crd = KubeObject & { status?: { conditions?: Array<{ type: string; status: string }> } };

function widgetCrd(group: string, scope: 'Namespaced' | 'Cluster'): Crd {
  return {
    metadata: { name: `widgets.${group}` },
    spec: {
      group,
      scope,
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  } as Crd;
}

/**
 * (Re)creates the CRD with `scope` and waits until it is Established and discovery serves the kind with that
 * scope (each check with a fresh client, so no mapping is cached here).
 */
async function installWidgets(group: string, scope: 'Namespaced' | 'Cluster'): Promise<void> {
  const admin = newClient(testConfig());
  try {
    await admin.create(CustomResourceDefinition, widgetCrd(group, scope));
    await vi.waitFor(
      async () => {
        const got = (await admin.get(CustomResourceDefinition, { name: `widgets.${group}` })) as Crd;
        expect(got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')).toBe(
          true,
        );
      },
      { timeout: 30_000, interval: 100 },
    );
    await vi.waitFor(
      async () => {
        const probe = newClient(testConfig());
        try {
          const m = await probe.restMapper.restMapping({ group, version: 'v1', kind: 'Widget' });
          expect(m.scope).toBe(scope);
        } finally {
          await probe.close();
        }
      },
      { timeout: 30_000, interval: 200 },
    );
  } finally {
    await admin.close();
  }
}

async function deleteWidgets(group: string): Promise<void> {
  const admin = newClient(testConfig());
  const name = `widgets.${group}`;
  try {
    await admin.delete(CustomResourceDefinition, { name }).catch((e: unknown) => {
      if (!isNotFound(e)) throw e;
    });
    await vi.waitFor(
      async () => {
        const err = await admin.get(CustomResourceDefinition, { name }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(isNotFound(err)).toBe(true);
      },
      { timeout: 60_000, interval: 200 },
    );
  } finally {
    await admin.close();
  }
}

/**
 * Breaker bug 3: a CRD deleted and re-created with the other scope left the client's cached RESTMapping
 * stale, and the client refused requests on the cached scope before sending anything, so no 404 ever
 * refreshed it. Every scope decision taken from a cached mapping is now checked against discovery once.
 */
describe('a CRD re-created with the other scope: the client follows the new scope at once', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });

  function clientUnderTest(): ApiClient {
    const c = newClient(testConfig());
    cleanups.push(() => c.close());
    return c;
  }

  it('Namespaced → Cluster: create, get, list and delete of a cluster-scoped Widget work with the warmed client', async () => {
    const group = `${uniqueName('scope')}.example.com`;
    const ns = uniqueName('scope');
    const admin = clientUnderTest();
    cleanups.push(await withNamespace(admin, ns));
    cleanups.push(() => deleteWidgets(group));
    await installWidgets(group, 'Namespaced');
    const Widget = kind(`${group}/v1`, 'Widget');
    const client = clientUnderTest();
    await client.create(Widget, { metadata: { namespace: ns, name: 'w1' } });
    expect((await client.restMapper.restMapping({ group, version: 'v1', kind: 'Widget' })).scope).toBe(
      'Namespaced',
    );

    await deleteWidgets(group);
    await installWidgets(group, 'Cluster');

    // The warmed mapping says Namespaced: before the fix this was refused client-side, forever.
    const created = await client.create(Widget, { metadata: { name: 'w2' } });
    expect(created.metadata?.namespace ?? '').toBe('');
    expect((await client.get(Widget, { name: 'w2' })).metadata?.name).toBe('w2');
    expect((await client.list(Widget)).items.map((w) => w.metadata?.name)).toEqual(['w2']);
    await client.delete(Widget, { name: 'w2' });
    expect((await client.restMapper.restMapping({ group, version: 'v1', kind: 'Widget' })).scope).toBe(
      'Cluster',
    );
  });

  it('Cluster → Namespaced: a namespace is used again, and a request without one is refused only after discovery says so', async () => {
    const group = `${uniqueName('scope')}.example.com`;
    const ns = uniqueName('scope');
    const admin = clientUnderTest();
    cleanups.push(await withNamespace(admin, ns));
    cleanups.push(() => deleteWidgets(group));
    await installWidgets(group, 'Cluster');
    const Widget = kind(`${group}/v1`, 'Widget');
    const client = clientUnderTest();
    await client.create(Widget, { metadata: { name: 'c1' } });

    await deleteWidgets(group);
    await installWidgets(group, 'Namespaced');

    // The warmed mapping says Cluster: the namespace would have been dropped (a cluster-path request).
    const created = await client.create(Widget, { metadata: { namespace: ns, name: 'w1' } });
    expect(created.metadata?.namespace).toBe(ns);
    expect((await client.get(Widget, { namespace: ns, name: 'w1' })).metadata?.namespace).toBe(ns);
    expect((await client.list(Widget, { namespace: ns })).items.map((w) => w.metadata?.name)).toEqual(['w1']);
    // Now known to be namespaced: a request without a namespace is refused before sending.
    await expect(client.get(Widget, { name: 'w1' })).rejects.toBeInstanceOf(InvalidRequestError);
    await client.delete(Widget, { namespace: ns, name: 'w1' });
  });
});

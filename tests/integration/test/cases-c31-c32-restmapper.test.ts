import { type ApiClient, isNotFound, type KubeObject, kind } from '@kubeloop/client';
import { isNoMatchError, NoKindMatchError } from '@kubeloop/client/errors';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { discoveryRequests, recordingClient } from './support/recording-transport.js';
import { liveClient, testConfig, uniqueName, waitFor, withNamespace } from './support.js';

const CustomResourceDefinition = kind('apiextensions.k8s.io/v1', 'CustomResourceDefinition');
type Crd = KubeObject & {
  spec: { versions: Array<{ name: string; served: boolean; storage: boolean; schema?: unknown }> };
  status?: { conditions?: Array<{ type: string; status: string }> };
};

const schema = {
  openAPIV3Schema: {
    type: 'object',
    properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
  },
};

function crd(
  group: string,
  kindName: string,
  versions: Array<{ name: string; served: boolean; storage: boolean }>,
): Crd {
  const plural = `${kindName.toLowerCase()}s`;
  return {
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural, singular: kindName.toLowerCase(), kind: kindName, listKind: `${kindName}List` },
      versions: versions.map((v) => ({ ...v, schema })),
    } as Crd['spec'],
  };
}

/** Creates (or replaces the versions of) a CRD with `admin`, and waits until it is Established. */
async function installCrd(admin: ApiClient, c: Crd): Promise<void> {
  const name = c.metadata!.name!;
  const existing = await admin.get(CustomResourceDefinition, { name }).catch((e: unknown) => {
    if (isNotFound(e)) return undefined;
    throw e;
  });
  if (existing)
    await admin.update(CustomResourceDefinition, { ...(existing as Crd), spec: c.spec } as KubeObject);
  else await admin.create(CustomResourceDefinition, c);
  await waitFor(async () => {
    const got = (await admin.get(CustomResourceDefinition, { name })) as Crd;
    return !!got.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True');
  }, `CRD ${name} Established`);
}

/**
 * Waits until the server no longer serves `group/version` `kind` (a fresh client each poll, so no mapping
 * is cached here). kube-apiserver stops serving a removed CRD version, and drops it from discovery, a moment
 * after the CRD write (its CRD handler and discovery controller follow the CRD through an informer), so the
 * client under test must not race that window.
 */
async function waitUnserved(group: string, version: string, kindName: string): Promise<void> {
  await waitFor(async () => {
    const probe = liveClient();
    try {
      await probe.list(kind(`${group}/${version}`, kindName), { limit: 1 });
      return false;
    } catch (e) {
      if (isNoMatchError(e)) return true;
      if (isNotFound(e)) return false;
      throw e;
    } finally {
      await probe.close();
    }
  }, `${kindName} ${group}/${version} no longer served`);
}

async function deleteCrd(admin: ApiClient, name: string): Promise<void> {
  await admin.delete(CustomResourceDefinition, { name }).catch((e: unknown) => {
    if (!isNotFound(e)) throw e;
  });
  await waitFor(async () => {
    try {
      await admin.get(CustomResourceDefinition, { name });
      return false;
    } catch (e) {
      if (isNotFound(e)) return true;
      throw e;
    }
  }, `CRD ${name} gone`);
}

describe.each([
  ['aggregated discovery', true],
  ['legacy discovery', false],
] as const)('C31/C32 a RESTMapper that follows the cluster (%s)', (_label, aggregatedDiscovery) => {
  let admin: ApiClient;
  const cleanups: Array<() => Promise<void>> = [];
  beforeAll(() => {
    admin = liveClient();
  });
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });
  afterAll(async () => {
    await admin.close();
  });

  function clientUnderTest() {
    const r = recordingClient(testConfig(), { mapper: { aggregatedDiscovery, missRefreshIntervalMs: 2000 } });
    cleanups.push(() => r.client.close());
    return r;
  }

  it('C31 versions that come and go: a new kind resolves at once, a version no longer served is a typed no-match, misses are rate-limited', async () => {
    const group = `${uniqueName('c31')}.example.com`;
    const ns = uniqueName('c31');
    cleanups.push(await withNamespace(admin, ns));
    cleanups.push(() => deleteCrd(admin, `widgets.${group}`));
    cleanups.push(() => deleteCrd(admin, `gadgets.${group}`));
    await installCrd(admin, crd(group, 'Widget', [{ name: 'v1', served: true, storage: true }]));
    const WidgetV1 = kind(`${group}/v1`, 'Widget');
    const { client, requests } = clientUnderTest();
    await client.create(WidgetV1, { metadata: { namespace: ns, name: 'w1' } });
    expect((await client.list(WidgetV1, { namespace: ns })).items).toHaveLength(1);

    // install Gadget in v2: it resolves on the first lookup, with at most 2 discovery requests
    await installCrd(admin, crd(group, 'Gadget', [{ name: 'v2', served: true, storage: true }]));
    const GadgetV2 = kind(`${group}/v2`, 'Gadget');
    let from = requests.length;
    expect(
      (await client.restMapper.restMapping({ group, version: 'v2', kind: 'Gadget' })).resource.resource,
    ).toBe('gadgets');
    expect(discoveryRequests(requests.slice(from)).length).toBeLessThanOrEqual(2);
    await client.create(GadgetV2, { metadata: { namespace: ns, name: 'g1' } });

    // Widget moves to v2 and v1 stops being served: the warmed v1 mapping meets a 404 for the resource
    await installCrd(
      admin,
      crd(group, 'Widget', [
        { name: 'v1', served: false, storage: false },
        { name: 'v2', served: true, storage: true },
      ]),
    );
    await waitUnserved(group, 'v1', 'Widget');
    const err = await client.list(WidgetV1, { namespace: ns }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NoKindMatchError);
    expect((err as NoKindMatchError).servedVersions).toEqual(['v2']);
    expect((err as Error).message).toContain(`the kind is served in ${group}/v2`);
    // v2 kinds keep working with the same client
    expect((await client.list(GadgetV2, { namespace: ns })).items).toHaveLength(1);
    expect((await client.list(kind(`${group}/v2`, 'Widget'), { namespace: ns })).items).toHaveLength(1);
    // a lookup without a version takes the preferred (served) version
    expect((await client.restMapper.restMapping({ group, version: '', kind: 'Widget' })).gvk.version).toBe(
      'v2',
    );

    // 100 lookups of a kind that never exists, as fast as they come: at most a handful of discovery requests
    from = requests.length;
    const Nope = { group, version: 'v1', kind: 'NeverExists' };
    for (let i = 0; i < 100; i++)
      await expect(client.restMapper.restMapping(Nope)).rejects.toSatisfy(isNoMatchError);
    expect(discoveryRequests(requests.slice(from)).length).toBeLessThanOrEqual(5);
  });

  it('C32 requests for a deleted CRD: typed no-match with bounded discovery, and the same client works after re-creation', async () => {
    const group = `${uniqueName('c32')}.example.com`;
    const ns = uniqueName('c32');
    cleanups.push(await withNamespace(admin, ns));
    const widgets = crd(group, 'Widget', [{ name: 'v1', served: true, storage: true }]);
    cleanups.push(() => deleteCrd(admin, `widgets.${group}`));
    await installCrd(admin, widgets);
    const Widget = kind(`${group}/v1`, 'Widget');
    const { client, requests } = clientUnderTest();
    await client.create(Widget, { metadata: { namespace: ns, name: 'w1' } });
    await client.get(Widget, { namespace: ns, name: 'w1' });

    await deleteCrd(admin, `widgets.${group}`);
    await waitUnserved(group, 'v1', 'Widget');
    const from = requests.length;
    const key = { namespace: ns, name: 'w1' };
    const attempts = await Promise.all([
      client.get(Widget, key).catch((e: unknown) => e),
      client.list(Widget, { namespace: ns }).catch((e: unknown) => e),
      client.create(Widget, { metadata: { namespace: ns, name: 'w2' } }).catch((e: unknown) => e),
    ]);
    for (const a of attempts) expect(isNoMatchError(a)).toBe(true);
    for (let i = 0; i < 20; i++) await expect(client.get(Widget, key)).rejects.toSatisfy(isNoMatchError);
    // one refresh for the lot (the 404 that revealed the deletion, its group version and group list)
    expect(discoveryRequests(requests.slice(from)).length).toBeLessThanOrEqual(4);

    await installCrd(admin, widgets);
    await waitFor(async () => {
      try {
        await client.create(Widget, { metadata: { namespace: ns, name: 'w3' } });
        return true;
      } catch (e) {
        if (isNoMatchError(e)) return false;
        throw e;
      }
    }, 'the same client to serve Widget again after the CRD came back');
    expect((await client.list(Widget, { namespace: ns })).items.map((w) => w.metadata?.name)).toEqual(['w3']);
  });
});

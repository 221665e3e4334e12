import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareKubeAwareVersions } from '../../src/discovery.js';
import { type Json, startTestServer, type TestServer, waitFor } from './helpers.js';

const AGG = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';
const version = (name: string, storage: boolean) => ({
  name,
  served: true,
  storage,
  schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
});
const crd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.live.example.com' },
  spec: {
    group: 'live.example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
    // listed v1 first: discovery still prefers v2 (version priority, not CRD order)
    versions: [version('v1', true), version('v1beta1', false), version('v2', false)],
  },
};

describe('live discovery', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it('orders versions by Kubernetes version priority', () => {
    const vs = ['v1', 'v1beta1', 'v2', 'v10', 'v1alpha1', 'foo', 'v2beta3', 'v2beta1', 'bar'];
    expect(vs.sort(compareKubeAwareVersions)).toEqual([
      'v10',
      'v2',
      'v1',
      'v2beta3',
      'v2beta1',
      'v1beta1',
      'v1alpha1',
      'bar',
      'foo',
    ]);
  });

  it('adds a CRD (v2 preferred), ends its watches and answers 404 once it is deleted', async () => {
    expect((await t.req('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd)).status).toBe(
      201,
    );
    await waitFor(async () => (await t.req('GET', '/apis/live.example.com')).status === 200);
    const group = (await t.req('GET', '/apis/live.example.com')).body;
    expect(group.versions.map((v: Json) => v.version)).toEqual(['v2', 'v1', 'v1beta1']);
    expect(group.preferredVersion.version).toBe('v2');
    const agg = (await t.req('GET', '/apis', undefined, { accept: AGG })).body;
    const live = agg.items.find((i: Json) => i.metadata.name === 'live.example.com');
    expect(live.versions.map((v: Json) => v.version)).toEqual(['v2', 'v1', 'v1beta1']);

    const path = '/apis/live.example.com/v1/namespaces/default/widgets';
    expect(
      (
        await t.req('POST', path, {
          apiVersion: 'live.example.com/v1',
          kind: 'Widget',
          metadata: { name: 'w' },
        })
      ).status,
    ).toBe(201);
    const w = await t.watch(`${path}?watch=true`);
    await w.until((evs) => evs.length === 1);
    expect(
      (
        await t.req(
          'DELETE',
          '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.live.example.com',
        )
      ).status,
    ).toBe(200);
    // the watch sees the object go, then the stream ends
    await w.ended;
    expect(w.events.map((e) => e.type)).toEqual(['ADDED', 'DELETED']);
    expect((await t.req('GET', path)).status).toBe(404);
    expect((await t.req('GET', '/apis/live.example.com/v1')).status).toBe(404);
    const after = (await t.req('GET', '/apis', undefined, { accept: AGG })).body;
    expect(after.items.map((i: Json) => i.metadata.name)).not.toContain('live.example.com');
  });

  it('can turn aggregated discovery off, as older servers, and on again', async () => {
    t.server.setAggregatedDiscovery(false);
    try {
      const legacy = await t.req('GET', '/apis', undefined, { accept: AGG });
      expect(legacy.status).toBe(200);
      expect(legacy.body.kind).toBe('APIGroupList');
      expect(String(legacy.headers['content-type'])).toMatch(/^application\/json/);
      expect(String(legacy.headers['content-type'])).not.toContain('apidiscovery');
    } finally {
      t.server.setAggregatedDiscovery(true);
    }
    expect((await t.req('GET', '/apis', undefined, { accept: AGG })).body.kind).toBe('APIGroupDiscoveryList');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Json, startTestServer, type TestServer } from './helpers.js';

const AGG = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';

describe('discovery and OpenAPI', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it('serves legacy /api, /apis, /api/v1 and /apis/apps/v1', async () => {
    const api = await t.req('GET', '/api');
    expect(api.body).toMatchObject({ kind: 'APIVersions', versions: ['v1'] });
    const apis = await t.req('GET', '/apis');
    expect(apis.body.groups.map((g: Json) => g.name)).toEqual(
      expect.arrayContaining(['apps', 'coordination.k8s.io', 'events.k8s.io', 'apiextensions.k8s.io']),
    );
    const v1 = await t.req('GET', '/api/v1');
    const pods = v1.body.resources.find((r: Json) => r.name === 'pods');
    expect(pods).toMatchObject({
      singularName: 'pod',
      namespaced: true,
      kind: 'Pod',
      shortNames: ['po'],
      categories: ['all'],
    });
    expect(pods.verbs).toEqual([
      'create',
      'delete',
      'deletecollection',
      'get',
      'list',
      'patch',
      'update',
      'watch',
    ]);
    const apps = await t.req('GET', '/apis/apps/v1');
    expect(apps.body.resources.find((r: Json) => r.name === 'deployments/scale')).toMatchObject({
      group: 'autoscaling',
      version: 'v1',
      kind: 'Scale',
    });
    expect((await t.req('GET', '/apis/nope/v1')).status).toBe(404);
    const unknownPath = await t.req('GET', '/this/does/not/exist');
    expect(unknownPath.status).toBe(404);
  });

  it('negotiates aggregated discovery v2 by Accept and answers with its Content-Type', async () => {
    const r = await t.req('GET', '/apis', undefined, { accept: AGG });
    expect(r.headers['content-type']).toBe(
      'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList',
    );
    expect(r.body.kind).toBe('APIGroupDiscoveryList');
    const apps = r.body.items.find((i: Json) => i.metadata.name === 'apps');
    const dep = apps.versions[0].resources.find((x: Json) => x.resource === 'deployments');
    expect(dep.scope).toBe('Namespaced');
    expect(dep.subresources.map((s: Json) => s.subresource)).toEqual(['scale', 'status']);
    const core = await t.req('GET', '/api', undefined, { accept: AGG });
    expect(core.body.items).toHaveLength(1);
    expect(core.body.items[0].metadata).toEqual({ creationTimestamp: null });
  });

  it('serves the OpenAPI v3 index and per-GV documents with a PATCH operation per kind', async () => {
    const idx = await t.req('GET', '/openapi/v3');
    const url = idx.body.paths['api/v1'].serverRelativeURL as string;
    expect(url).toMatch(/^\/openapi\/v3\/api\/v1\?hash=[0-9A-F]+$/);
    const doc = await t.req('GET', url);
    const patch = doc.body.paths['/api/v1/namespaces/{namespace}/pods/{name}'].patch;
    expect(patch['x-kubernetes-group-version-kind']).toEqual({ group: '', version: 'v1', kind: 'Pod' });
    expect(patch.parameters.map((p: Json) => p.name)).toContain('fieldValidation');
  });
});

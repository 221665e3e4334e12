import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Json, startTestServer, type TestServer, waitFor } from './helpers.js';

const APPLY = { 'content-type': 'application/apply-patch+yaml' };
const BASE = '/apis/example.com/v1/namespaces/default/gizmos';

/**
 * Server-side apply on a custom resource whose schema marks lists `x-kubernetes-list-type: map` (merged by
 * the `x-kubernetes-list-map-keys` key) or `set` (merged by value), as structured-merge-diff reads the CRD
 * schema in kube-apiserver: two managers own different elements, none conflicts, and an element is removed
 * when its only manager stops applying it. An untyped or `atomic` list stays one field.
 */
describe('server-side apply of custom resource lists by x-kubernetes-list-type', () => {
  let t: TestServer;
  const gizmo = (spec: Json) => ({
    apiVersion: 'example.com/v1',
    kind: 'Gizmo',
    metadata: { name: 'g' },
    spec,
  });
  const apply = (manager: string, spec: Json) =>
    t.req('PATCH', `${BASE}/g?fieldManager=${manager}`, gizmo(spec), APPLY);
  beforeAll(async () => {
    t = await startTestServer();
    const item = { type: 'object', properties: { name: { type: 'string' }, port: { type: 'integer' } } };
    const r = await t.req('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'gizmos.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'gizmos', singular: 'gizmo', kind: 'Gizmo', listKind: 'GizmoList' },
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
                    properties: {
                      ports: {
                        type: 'array',
                        'x-kubernetes-list-type': 'map',
                        'x-kubernetes-list-map-keys': ['name'],
                        items: { ...item, required: ['name'] },
                      },
                      tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
                      args: { type: 'array', items: { type: 'string' } },
                    },
                  },
                },
              },
            },
          },
        ],
      },
    });
    expect(r.status).toBe(201);
    await waitFor(async () => (await t.req('GET', BASE)).status === 200);
  });
  afterAll(async () => {
    await t.close();
  });

  it('map and set lists merge per element across managers; atomic lists conflict; a dropped element goes', async () => {
    expect((await apply('a', { ports: [{ name: 'a', port: 1 }], tags: ['x'], args: ['1'] })).status).toBe(
      201,
    );
    const b = await apply('b', { ports: [{ name: 'b', port: 2 }], tags: ['y'] });
    expect(b.status).toBe(200);
    expect(b.body.spec.ports).toEqual([
      { name: 'a', port: 1 },
      { name: 'b', port: 2 },
    ]);
    expect(b.body.spec.tags).toEqual(['x', 'y']);
    // the same element with another value conflicts with its owner; an atomic list conflicts whole
    const c = await apply('b', { ports: [{ name: 'a', port: 9 }] });
    expect(c.status).toBe(409);
    expect(c.body.message).toContain('.spec.ports[name="a"].port');
    expect((await apply('b', { args: ['2'] })).status).toBe(409);
    // a stops applying its port and tag: they go; b's stay
    const d = await apply('a', { args: ['1'] });
    expect(d.status).toBe(200);
    expect(d.body.spec.ports).toEqual([{ name: 'b', port: 2 }]);
    expect(d.body.spec.tags).toEqual(['y']);
  });
});

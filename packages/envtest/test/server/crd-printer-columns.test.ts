import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstJsonPathValue } from '../../src/jsonpath.js';
import { type Json, startTestServer, type TestServer, waitFor } from './helpers.js';

// apiextensions-apiserver tableconvertor: each additionalPrinterColumns jsonPath is a client-go jsonpath
// template run with missing keys allowed; the cell is the first result. kubebuilder's usual Ready column
// filters the conditions list; before, envtest read only dotted paths and left such cells empty.
describe('CRD printer columns evaluate client-go JSONPath', () => {
  let t: TestServer;
  const base = '/apis/example.com/v1/namespaces/default/gizmos';
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'gizmos.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'gizmos', singular: 'gizmo', kind: 'Gizmo' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          additionalPrinterColumns: [
            { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
            { name: 'Reason', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].reason" },
            { name: 'First', type: 'string', jsonPath: '.spec.ports[0].name' },
            { name: 'Last', type: 'integer', jsonPath: '.spec.ports[-1].port' },
            { name: 'Any', type: 'string', jsonPath: '.spec.ports[*].name' },
            { name: 'Big', type: 'string', jsonPath: '.spec.ports[?(@.port > 8000)].name' },
            { name: 'Key', type: 'string', jsonPath: ".metadata.labels['app.kubernetes.io/name']" },
            { name: 'Missing', type: 'string', jsonPath: '.status.conditions[?(@.type=="Gone")].status' },
          ],
        },
      ],
    },
  };
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it('filters, indexes, [*] and quoted keys give the first match; no match is an empty cell', async () => {
    expect((await t.req('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd)).status).toBe(
      201,
    );
    await waitFor(async () => (await t.req('GET', base)).status === 200);
    const created = await t.req('POST', base, {
      apiVersion: 'example.com/v1',
      kind: 'Gizmo',
      metadata: { name: 'g1', labels: { 'app.kubernetes.io/name': 'gizmo' } },
      spec: {
        ports: [
          { name: 'http', port: 80 },
          { name: 'alt', port: 8080 },
          { name: 'metrics', port: 9090 },
        ],
      },
    });
    expect(created.status).toBe(201);
    const st = await t.req('PUT', `${base}/g1/status`, {
      ...created.body,
      status: {
        conditions: [
          { type: 'Progressing', status: 'False', reason: 'Done' },
          { type: 'Ready', status: 'True', reason: 'Synced' },
        ],
      },
    });
    expect(st.status).toBe(200);
    const table = await t.req('GET', base, undefined, {
      accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
    });
    expect(table.body.columnDefinitions.map((c: Json) => c.name)).toEqual([
      'Name',
      'Ready',
      'Reason',
      'First',
      'Last',
      'Any',
      'Big',
      'Key',
      'Missing',
    ]);
    expect(table.body.rows[0].cells).toEqual([
      'g1',
      'True',
      'Synced',
      'http',
      9090,
      'http',
      'alt',
      'gizmo',
      null,
    ]);
  });

  it('unsupported syntax (recursive descent) selects nothing instead of throwing', () => {
    expect(firstJsonPathValue('..name')({ name: 'x' })).toBeUndefined();
    expect(firstJsonPathValue('{.spec.a}')({ spec: { a: 1 } })).toBe(1);
    expect(firstJsonPathValue('.a[?(@.b)].c')({ a: [{ c: 1 }, { b: 0, c: 2 }] })).toBe(2);
    expect(
      firstJsonPathValue('.a[?(@.b!="x")].c')({
        a: [
          { b: 'x', c: 1 },
          { b: 'y', c: 2 },
        ],
      }),
    ).toBe(2);
  });
});

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Json, pod, startTestServer, type TestServer, waitFor } from './helpers.js';

const NS = '/api/v1/namespaces/default';
const MERGE = { 'content-type': 'application/merge-patch+json' };
const SMP = { 'content-type': 'application/strategic-merge-patch+json' };
const JSONP = { 'content-type': 'application/json-patch+json' };
const APPLY = { 'content-type': 'application/apply-patch+yaml' };

describe('patch types and server-side apply', () => {
  let t: TestServer;
  // a fresh server and pod p per test: the tests patch p (labels, containers) in ways the others would see
  beforeEach(async () => {
    t = await startTestServer();
    const p = pod('p', { app: 'web' });
    p.spec.containers = [
      { name: 'a', image: 'img:1', env: [{ name: 'X', value: '1' }] },
      { name: 'b', image: 'img:1' },
    ];
    await t.req('POST', `${NS}/pods`, p);
  });
  afterEach(async () => {
    await t.close();
  });

  it('strategic merge merges containers by name and env by name; merge patch replaces lists', async () => {
    const r = await t.req(
      'PATCH',
      `${NS}/pods/p`,
      { spec: { containers: [{ name: 'b', image: 'img:2' }] } },
      SMP,
    );
    expect(r.status).toBe(200);
    expect(r.body.spec.containers.map((c: Json) => [c.name, c.image])).toEqual([
      ['a', 'img:1'],
      ['b', 'img:2'],
    ]);
    // pod specs are immutable beyond images: the env list is exercised on a deployment's template
    const dep = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd' },
      spec: {
        selector: { matchLabels: { app: 'd' } },
        template: {
          metadata: { labels: { app: 'd' } },
          spec: {
            containers: [
              {
                name: 'a',
                image: 'img:1',
                env: [
                  { name: 'X', value: '1' },
                  { name: 'Y', value: '2' },
                ],
              },
            ],
          },
        },
      },
    };
    await t.req('POST', '/apis/apps/v1/namespaces/default/deployments', dep);
    const r2 = await t.req(
      'PATCH',
      '/apis/apps/v1/namespaces/default/deployments/d',
      {
        spec: {
          template: {
            spec: {
              containers: [
                {
                  name: 'a',
                  env: [
                    { name: 'X', $patch: 'delete' },
                    { name: 'Z', value: '3' },
                  ],
                },
              ],
            },
          },
        },
      },
      SMP,
    );
    expect(r2.body.spec.template.spec.containers[0].env).toEqual([
      { name: 'Y', value: '2' },
      { name: 'Z', value: '3' },
    ]);
    // a merge patch replaces the whole list, which a pod's immutable spec refuses
    const r3 = await t.req(
      'PATCH',
      `${NS}/pods/p`,
      { spec: { containers: [{ name: 'a', image: 'img:4' }] } },
      MERGE,
    );
    expect(r3.status).toBe(422);
    const lbl = await t.req('PATCH', `${NS}/pods/p`, { metadata: { labels: { app: null, k: 'v' } } }, MERGE);
    expect(lbl.body.metadata.labels).toEqual({ k: 'v' });
  });

  it('applies RFC 6902 JSON patches; a failing test op is 422; unknown content types are 415', async () => {
    const ok = await t.req(
      'PATCH',
      `${NS}/pods/p`,
      [{ op: 'add', path: '/metadata/labels/j', value: '1' }],
      JSONP,
    );
    expect(ok.body.metadata.labels.j).toBe('1');
    const fail = await t.req(
      'PATCH',
      `${NS}/pods/p`,
      [{ op: 'test', path: '/metadata/labels/j', value: '2' }],
      JSONP,
    );
    expect(fail.status).toBe(422);
    const bad = await t.req('PATCH', `${NS}/pods/p`, 'x', { 'content-type': 'text/plain' });
    expect(bad.status).toBe(415);
  });

  it('treats a resourceVersion in a patch as a precondition', async () => {
    const r = await t.req(
      'PATCH',
      `${NS}/pods/p`,
      { metadata: { resourceVersion: '1', labels: { z: '1' } } },
      MERGE,
    );
    expect(r.status).toBe(409);
    expect(r.body.reason).toBe('Conflict');
  });

  it('server-side apply: creates (201), records Apply managers, conflicts (409) and force', async () => {
    const cfg = (v: string) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'ssa' },
      data: { shared: v },
    });
    const noMgr = await t.req('PATCH', `${NS}/configmaps/ssa`, cfg('x'), APPLY);
    expect(noMgr.status).toBe(422);
    const rv = (await t.req('GET', `${NS}/configmaps`)).body.metadata.resourceVersion;
    const w = await t.watch(`${NS}/configmaps?watch=true&resourceVersion=${rv}`);
    const a = await t.req('PATCH', `${NS}/configmaps/ssa?fieldManager=a`, cfg('from-a'), APPLY);
    expect(a.status).toBe(201);
    // the create-by-apply is one write: one ADDED carrying the Apply entry
    await w.until((ev) => ev.length >= 1);
    await t.req('POST', `${NS}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'marker' },
    });
    await w.until((ev) => ev.some((e) => e.object.metadata.name === 'marker'));
    expect(w.events.map((e) => [e.type, e.object.metadata.name])).toEqual([
      ['ADDED', 'ssa'],
      ['ADDED', 'marker'],
    ]);
    expect(w.events[0].object.metadata.managedFields[0].operation).toBe('Apply');
    w.close();
    expect(a.body.metadata.managedFields).toEqual([
      expect.objectContaining({
        manager: 'a',
        operation: 'Apply',
        fieldsV1: { 'f:data': { 'f:shared': {} } },
      }),
    ]);
    const b = await t.req('PATCH', `${NS}/configmaps/ssa?fieldManager=b`, cfg('from-b'), APPLY);
    expect(b.status).toBe(409);
    // an Apply manager is printed without its apiVersion (apiserver printManager)
    expect(b.body.message).toBe('Apply failed with 1 conflict: conflict with "a": .data.shared');
    expect(b.body.details.causes).toEqual([
      { reason: 'FieldManagerConflict', message: 'conflict with "a"', field: '.data.shared' },
    ]);
    const forced = await t.req(
      'PATCH',
      `${NS}/configmaps/ssa?fieldManager=b&force=true`,
      cfg('from-b'),
      APPLY,
    );
    expect(forced.status).toBe(200);
    expect(forced.body.data.shared).toBe('from-b');
    expect(forced.body.metadata.managedFields.map((m: Json) => m.manager)).toEqual(['b']);
    // a field a manager stops applying is removed when nobody else owns it
    const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  other: "1"\n';
    const dropped = await t.req('PATCH', `${NS}/configmaps/ssa?fieldManager=b`, yaml, APPLY);
    expect(dropped.body.data).toEqual({ other: '1' });
  });
});

describe('CustomResourceDefinitions', () => {
  let t: TestServer;
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', shortNames: ['wd'] },
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
                  properties: { color: { type: 'string' }, replicas: { type: 'integer' } },
                },
                status: {
                  type: 'object',
                  properties: { ready: { type: 'boolean' }, replicas: { type: 'integer' } },
                },
              },
            },
          },
          subresources: {
            status: {},
            scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' },
          },
          additionalPrinterColumns: [{ name: 'Color', type: 'string', jsonPath: '.spec.color' }],
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

  it('becomes Established, served and discoverable; CRs follow CR rules; deleting the CRD removes them', async () => {
    const c = await t.req('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
    expect(c.status).toBe(201);
    await waitFor(async () => {
      const g = await t.req(
        'GET',
        '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com',
      );
      return (g.body.status?.conditions ?? []).some(
        (x: Json) => x.type === 'Established' && x.status === 'True',
      );
    });
    const disc = await t.req('GET', '/apis/example.com/v1');
    // apiextensions-apiserver lists status before scale (golden discovery-example-v1)
    expect(disc.body.resources.map((r: Json) => r.name)).toEqual([
      'widgets',
      'widgets/status',
      'widgets/scale',
    ]);
    const base = '/apis/example.com/v1/namespaces/default/widgets';
    const w = await t.req('POST', base, {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w1' },
      spec: { color: 'red', replicas: 1, junk: 1 },
      status: { ready: true },
    });
    expect(w.status).toBe(201);
    expect(w.body.status).toBeUndefined();
    expect(w.body.spec.junk).toBeUndefined();
    expect(w.body.metadata.generation).toBe(1);
    const strict = await t.req('POST', `${base}?fieldValidation=Strict`, {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w2' },
      spec: { shape: 'x' },
    });
    expect(strict.status).toBe(400);
    const noRv = await t.req('PUT', `${base}/w1`, { ...w.body, metadata: { name: 'w1' } });
    expect(noRv.status).toBe(422);
    expect(noRv.body.message).toBe(
      'widgets.example.com "w1" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update',
    );
    const smp = await t.req('PATCH', `${base}/w1`, { spec: { color: 'blue' } }, SMP);
    expect(smp.status).toBe(415);
    const st = await t.req('PUT', `${base}/w1/status`, {
      ...w.body,
      spec: { color: 'ignored' },
      status: { ready: true },
    });
    expect(st.body.status).toEqual({ ready: true });
    expect(st.body.spec.color).toBe('red');
    expect(st.body.metadata.generation).toBe(1);
    const scale = await t.req('PATCH', `${base}/w1/scale`, { spec: { replicas: 4 } }, MERGE);
    expect(scale.body).toMatchObject({ kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: 4 } });
    const after = await t.req('GET', `${base}/w1`);
    expect(after.body.spec.replicas).toBe(4);
    expect(after.body.metadata.generation).toBe(2);
    const table = await t.req('GET', base, undefined, {
      accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
    });
    expect(table.body.columnDefinitions.map((x: Json) => x.name)).toEqual(['Name', 'Color']);
    expect(table.body.rows[0].cells).toEqual(['w1', 'red']);
    const list = await t.req('GET', base);
    expect(list.body.items[0].kind).toBe('Widget');
    expect(
      (await t.req('DELETE', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com'))
        .status,
    ).toBe(200);
    expect((await t.req('GET', '/apis/example.com/v1')).status).toBe(404);
  });
});

describe('CRD with two served versions (conversion strategy None)', () => {
  it('serves the same objects under both versions, each with its own apiVersion', async () => {
    const t = await startTestServer();
    try {
      const version = (name: string, storage: boolean) => ({
        name,
        served: true,
        storage,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      });
      await t.req('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'gears.example.com' },
        spec: {
          group: 'example.com',
          scope: 'Cluster',
          names: { plural: 'gears', kind: 'Gear' },
          versions: [version('v1', true), version('v2', false)],
        },
      });
      await waitFor(async () => (await t.req('GET', '/apis/example.com/v2/gears')).status === 200);
      const c = await t.req('POST', '/apis/example.com/v2/gears', {
        apiVersion: 'example.com/v2',
        kind: 'Gear',
        metadata: { name: 'g1' },
        spec: { teeth: 12 },
      });
      expect(c.status).toBe(201);
      expect(c.body.apiVersion).toBe('example.com/v2');
      const v1 = await t.req('GET', '/apis/example.com/v1/gears/g1');
      expect(v1.body.apiVersion).toBe('example.com/v1');
      expect(v1.body.spec).toEqual({ teeth: 12 });
      const list2 = await t.req('GET', '/apis/example.com/v2/gears');
      expect(list2.body.items.map((i: Json) => i.apiVersion)).toEqual(['example.com/v2']);
    } finally {
      await t.close();
    }
  });
});

/**
 * Request routing as kube-apiserver v1.32 routes it: which path answers 404 and which 405, for every
 * built-in kind (go-restful routes from endpoints/installer.go) and for custom resources (apiextensions-apiserver's
 * crdHandler), and the NamespaceLifecycle admission answers. Envtest-only: it walks envtest's own resource table.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BUILTIN_RESOURCES } from '../../src/builtin/index.js';
import type { ResourceType } from '../../src/resource-type.js';
import { type Json, startTestServer, type TestServer, waitFor } from './helpers.js';

/** go-restful's 405 through apiserver's serviceErrorHandler (golden method-not-allowed-405). */
const GO_RESTFUL_405 = {
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: 'the server does not allow this method on the requested resource',
  reason: 'MethodNotAllowed',
  details: {},
  code: 405,
};
/** go-restful's 404 for a path no route has. */
const GO_RESTFUL_404 = {
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: 'the server could not find the requested resource',
  reason: 'NotFound',
  details: {},
  code: 404,
};

const prefix = (rt: ResourceType) =>
  rt.group === '' ? `/api/${rt.version}` : `/apis/${rt.group}/${rt.version}`;
const served = (rt: ResourceType) => `${rt.group}/${rt.version}/${rt.resource}`;

describe('routing of built-in kinds (go-restful routes of endpoints/installer.go)', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it('POST, PUT, PATCH and DELETE on the all-namespaces path of every namespaced kind answer 405; nothing is stored or deleted', async () => {
    expect(
      (await t.req('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'keep' } })).status,
    ).toBe(201);
    const namespaced = BUILTIN_RESOURCES.filter((rt) => rt.namespaced && rt.verbs.includes('list'));
    expect(namespaced.length).toBeGreaterThan(20);
    const wrong: string[] = [];
    for (const rt of namespaced) {
      for (const method of ['POST', 'DELETE', 'PUT', 'PATCH']) {
        const r = await t.req(method, `${prefix(rt)}/${rt.resource}`, method === 'DELETE' ? undefined : {}, {
          'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json',
        });
        if (r.status !== 405 || JSON.stringify(r.body) !== JSON.stringify(GO_RESTFUL_405))
          wrong.push(`${method} ${served(rt)}: ${r.status} ${r.text.slice(0, 120)}`);
      }
    }
    expect(wrong).toEqual([]);
    // the breaker's repro: the cross-namespace DELETE deleted every ConfigMap, the POST stored one without a namespace
    const cms = await t.req('GET', '/api/v1/configmaps');
    expect(cms.body.items.map((i: Json) => `${i.metadata.namespace}/${i.metadata.name}`)).toContain(
      'default/keep',
    );
    expect(cms.body.items.every((i: Json) => typeof i.metadata.namespace === 'string')).toBe(true);
  });

  it('the all-namespaces path still lists and watches', async () => {
    expect((await t.req('GET', '/api/v1/configmaps')).status).toBe(200);
    const w = await t.watch('/api/v1/configmaps?watch=true&timeoutSeconds=1');
    expect(w.status).toBe(200);
    w.close();
  });

  it('an object under the all-namespaces path of a namespaced kind, and a cluster-scoped kind under a namespace, are 404', async () => {
    const wrong: string[] = [];
    for (const rt of BUILTIN_RESOURCES) {
      const path = rt.namespaced
        ? `${prefix(rt)}/${rt.resource}/x`
        : `${prefix(rt)}/namespaces/default/${rt.resource}`;
      for (const method of ['GET', 'DELETE']) {
        const r = await t.req(method, path);
        if (r.status !== 404 || JSON.stringify(r.body) !== JSON.stringify(GO_RESTFUL_404))
          wrong.push(`${method} ${path}: ${r.status} ${r.text.slice(0, 120)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('a method the resource has no verb for is 405 on a routed path (namespaces: no deletecollection; reviews: create only)', async () => {
    expect((await t.req('DELETE', '/api/v1/namespaces')).body).toEqual(GO_RESTFUL_405);
    expect((await t.req('PUT', '/api/v1/namespaces/default/pods', {})).body).toEqual(GO_RESTFUL_405);
    expect((await t.req('POST', '/api/v1/namespaces/default/configmaps/keep', {})).body).toEqual(
      GO_RESTFUL_405,
    );
    expect((await t.req('GET', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews')).body).toEqual(
      GO_RESTFUL_405,
    );
    // a create-only kind has no object path at all
    expect((await t.req('GET', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews/x')).body).toEqual(
      GO_RESTFUL_404,
    );
    // subresources: status has GET/PUT/PATCH, finalize PUT only
    expect((await t.req('POST', '/api/v1/namespaces/default/status', {})).body).toEqual(GO_RESTFUL_405);
    expect((await t.req('GET', '/api/v1/namespaces/default/finalize')).body).toEqual(GO_RESTFUL_405);
    expect((await t.req('GET', '/api/v1/namespaces/default/configmaps/keep/status')).body).toEqual(
      GO_RESTFUL_404,
    );
  });

  it('an unknown resource is a Status 404 under /api and built-in groups, a plain-text 404 in other groups', async () => {
    expect((await t.req('GET', '/api/v1/nothings')).body).toEqual(GO_RESTFUL_404);
    expect((await t.req('GET', '/apis/apps/v1/nothings')).body).toEqual(GO_RESTFUL_404);
    const other = await t.req('GET', '/apis/nothing.example.com/v1/nothings');
    expect(other.status).toBe(404);
    expect(other.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(other.text).toBe('404 page not found\n');
  });

  it('discovery of an unknown group or group/version is plain text; under /api and a built-in group a Status', async () => {
    for (const path of ['/apis/nothing.example.com/v1', '/apis/nothing.example.com', '/apis/nope/v1']) {
      const r = await t.req('GET', path);
      expect({ path, status: r.status, type: r.headers['content-type'], text: r.text }).toEqual({
        path,
        status: 404,
        type: 'text/plain; charset=utf-8',
        text: '404 page not found\n',
      });
    }
    for (const path of ['/apis/apps/v2', '/api/v2', '/apis/apps/v2/deployments']) {
      const r = await t.req('GET', path);
      expect({ path, status: r.status, body: r.body }).toEqual({ path, status: 404, body: GO_RESTFUL_404 });
    }
  });
});

describe('routing of custom resources (apiextensions-apiserver crdHandler)', () => {
  let t: TestServer;
  const crd = (plural: string, kind: string, scope: string) => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.route.example.com` },
    spec: {
      group: 'route.example.com',
      scope,
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  });
  const G = '/apis/route.example.com/v1';
  const expectPlain404 = (r: { status: number; text: string; headers: Json }, what: string) => {
    expect({ what, status: r.status, text: r.text, type: r.headers['content-type'] }).toEqual({
      what,
      status: 404,
      text: '404 page not found\n',
      type: 'text/plain; charset=utf-8',
    });
  };

  // a fresh server (with its CRDs and g1) per test: tests create CRs of their own (g3) and delete some
  beforeEach(async () => {
    t = await startTestServer();
    for (const c of [crd('gizmos', 'Gizmo', 'Namespaced'), crd('clusterthings', 'ClusterThing', 'Cluster')]) {
      expect((await t.req('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', c)).status).toBe(
        201,
      );
      await waitFor(async () => (await t.req('GET', `${G}/${c.spec.names.plural}`)).status === 200);
    }
    const g = { apiVersion: 'route.example.com/v1', kind: 'Gizmo', metadata: { name: 'g1' } };
    expect((await t.req('POST', `${G}/namespaces/default/gizmos`, g)).status).toBe(201);
  });
  afterEach(async () => {
    await t.close();
  });

  it('a namespaced CR without a namespace is a plain-text 404 for every verb but list and watch', async () => {
    const body = {
      apiVersion: 'route.example.com/v1',
      kind: 'Gizmo',
      metadata: { name: 'g2', namespace: 'default' },
    };
    expectPlain404(await t.req('POST', `${G}/gizmos`, body), 'create');
    expectPlain404(await t.req('DELETE', `${G}/gizmos`), 'deletecollection');
    expectPlain404(await t.req('GET', `${G}/gizmos/g1`), 'get');
    expectPlain404(await t.req('DELETE', `${G}/gizmos/g1`), 'delete');
    expect((await t.req('GET', `${G}/gizmos`)).body.items.map((i: Json) => i.metadata.name)).toEqual(['g1']);
  });

  it('a cluster-scoped CR under a namespace is a plain-text 404', async () => {
    expectPlain404(await t.req('GET', `${G}/namespaces/default/clusterthings`), 'list');
    expectPlain404(await t.req('POST', `${G}/namespaces/default/clusterthings`, {}), 'create');
  });

  it('subresources: unserved is NotFound for the object, status serves get/update/patch only', async () => {
    const scale = await t.req('GET', `${G}/namespaces/default/gizmos/g1/scale`);
    expect(scale.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'gizmos.route.example.com "g1" not found',
      reason: 'NotFound',
      details: { name: 'g1', group: 'route.example.com', kind: 'gizmos' },
      code: 404,
    });
    const del = await t.req('DELETE', `${G}/namespaces/default/gizmos/g1/status`);
    expect(del.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'delete is not supported on resources of kind "gizmos.route.example.com"',
      reason: 'MethodNotAllowed',
      details: { group: 'route.example.com', kind: 'gizmos' },
      code: 405,
    });
  });

  it('PUT or PATCH on a collection is 400 "name must be provided"; POST on an object path creates from the body', async () => {
    const put = await t.req('PUT', `${G}/namespaces/default/gizmos`, {});
    expect(put.status).toBe(400);
    expect(put.body).toMatchObject({ reason: 'BadRequest', message: 'name must be provided', code: 400 });
    const g3 = { apiVersion: 'route.example.com/v1', kind: 'Gizmo', metadata: { name: 'g3' } };
    const post = await t.req('POST', `${G}/namespaces/default/gizmos/ignored`, g3);
    expect(post.status).toBe(201);
    expect(post.body.metadata.name).toBe('g3');
  });
});

describe('NamespaceLifecycle admission', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it('refuses to delete default, kube-system and kube-public (403, also with dryRun); kube-node-lease and others can go', async () => {
    for (const name of ['default', 'kube-system', 'kube-public']) {
      for (const q of ['', '?dryRun=All']) {
        const r = await t.req('DELETE', `/api/v1/namespaces/${name}${q}`);
        expect(r.body).toEqual({
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: `namespaces "${name}" is forbidden: this namespace may not be deleted`,
          reason: 'Forbidden',
          details: { name, kind: 'namespaces' },
          code: 403,
        });
      }
      expect((await t.req('GET', `/api/v1/namespaces/${name}`)).body.status.phase).toBe('Active');
    }
    expect((await t.req('DELETE', '/api/v1/namespaces/kube-node-lease')).status).toBe(200);
    expect((await t.req('DELETE', '/api/v1/namespaces/no-such-namespace')).status).toBe(404);
  });

  it('refuses creates in a terminating namespace with the plugin Forbidden (named when the body names the object)', async () => {
    const ns = { metadata: { name: 'closing', finalizers: ['example.com/hold'] } };
    expect((await t.req('POST', '/api/v1/namespaces', ns)).status).toBe(201);
    expect((await t.req('DELETE', '/api/v1/namespaces/closing')).status).toBe(200);
    const cause = {
      reason: 'NamespaceTerminating',
      message: 'namespace closing is being terminated',
      field: 'metadata.namespace',
    };
    const named = await t.req('POST', '/api/v1/namespaces/closing/configmaps', { metadata: { name: 'c1' } });
    expect(named.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'configmaps "c1" is forbidden: unable to create new content in namespace closing because it is being terminated',
      reason: 'Forbidden',
      details: { name: 'c1', kind: 'configmaps', causes: [cause] },
      code: 403,
    });
    // admission runs before validation: an invalid object gets the same 403, not 422
    const generated = await t.req('POST', '/apis/apps/v1/namespaces/closing/deployments', {
      metadata: { generateName: 'd-' },
      spec: {},
    });
    expect(generated.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'deployments.apps is forbidden: unable to create new content in namespace closing because it is being terminated',
      reason: 'Forbidden',
      details: { group: 'apps', kind: 'deployments', causes: [cause] },
      code: 403,
    });
    const release = await t.req(
      'PATCH',
      '/api/v1/namespaces/closing',
      { metadata: { finalizers: null } },
      {
        'content-type': 'application/merge-patch+json',
      },
    );
    expect(release.status).toBe(200);
  });
});

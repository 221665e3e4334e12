import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pod, startTestServer, type TestServer } from './helpers.js';

const NS = '/api/v1/namespaces/default';

describe('object semantics and exact Status shapes', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers AlreadyExists, NotFound and a stale PUT with the exact Status bodies', async () => {
    expect((await t.req('POST', `${NS}/pods`, pod('dup'))).status).toBe(201);
    const again = await t.req('POST', `${NS}/pods`, pod('dup'));
    expect(again.status).toBe(409);
    expect(again.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'pods "dup" already exists',
      reason: 'AlreadyExists',
      details: { name: 'dup', kind: 'pods' },
      code: 409,
    });
    const missing = await t.req('GET', '/apis/apps/v1/namespaces/default/deployments/nope');
    expect(missing.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'deployments.apps "nope" not found',
      reason: 'NotFound',
      details: { name: 'nope', group: 'apps', kind: 'deployments' },
      code: 404,
    });
    const cur = (await t.req('GET', `${NS}/pods/dup`)).body;
    const changed = { ...cur, metadata: { ...cur.metadata, labels: { v: '2' } } };
    expect((await t.req('PUT', `${NS}/pods/dup`, changed)).status).toBe(200);
    const stale = await t.req('PUT', `${NS}/pods/dup`, cur);
    expect(stale.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'Operation cannot be fulfilled on pods "dup": the object has been modified; please apply your changes to the latest version and try again',
      reason: 'Conflict',
      details: { name: 'dup', kind: 'pods' },
      code: 409,
    });
  });

  it('answers 422 Invalid with causes, 400 on a namespace mismatch and 404 for a missing namespace', async () => {
    const bad = await t.req('POST', `${NS}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'Bad_Name' },
      spec: { containers: [{ name: 'c' }] },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.reason).toBe('Invalid');
    expect(
      bad.body.details.causes.map((c: { field: string; reason: string }) => [c.field, c.reason]),
    ).toEqual([
      ['metadata.name', 'FieldValueInvalid'],
      ['spec.containers[0].image', 'FieldValueRequired'],
    ]);
    const noName = await t.req('POST', `${NS}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {},
    });
    expect(noName.body.message).toBe(
      'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required',
    );
    const mismatch = await t.req('POST', `${NS}/pods`, pod('x', {}, { metadata: { namespace: 'other' } }));
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.message).toBe(
      'the namespace of the provided object does not match the namespace sent on the request',
    );
    const noNs = await t.req('POST', '/api/v1/namespaces/ghost/pods', pod('x'));
    expect(noNs.status).toBe(404);
    expect(noNs.body.message).toBe('namespaces "ghost" not found');
  });

  it('generates names, keeps uid/creationTimestamp on update, and bumps generation only on spec changes', async () => {
    const gen = await t.req('POST', `${NS}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { generateName: 'gen-' },
    });
    expect(gen.body.metadata.name).toMatch(/^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(gen.body.metadata.generation).toBeUndefined();
    const deploy = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'c', image: 'nginx:1' }] },
        },
      },
    };
    const d = await t.req('POST', '/apis/apps/v1/namespaces/default/deployments', deploy);
    expect(d.body.metadata.generation).toBe(1);
    const base = '/apis/apps/v1/namespaces/default/deployments/web';
    const labelOnly = await t.req(
      'PATCH',
      base,
      { metadata: { labels: { a: 'b' } } },
      { 'content-type': 'application/merge-patch+json' },
    );
    expect(labelOnly.body.metadata.generation).toBe(1);
    const specChange = await t.req(
      'PATCH',
      base,
      { spec: { replicas: 3 } },
      { 'content-type': 'application/merge-patch+json' },
    );
    expect(specChange.body.metadata.generation).toBe(2);
    expect(specChange.body.metadata.uid).toBe(d.body.metadata.uid);
    expect(specChange.body.metadata.creationTimestamp).toBe(d.body.metadata.creationTimestamp);
    // status subresource: /status changes only status and never generation; main PUT keeps status
    const st = await t.req(
      'PATCH',
      `${base}/status`,
      { status: { observedGeneration: 2, readyReplicas: 3 }, spec: { replicas: 9 } },
      { 'content-type': 'application/merge-patch+json' },
    );
    expect(st.body.status.readyReplicas).toBe(3);
    expect(st.body.spec.replicas).toBe(3);
    expect(st.body.metadata.generation).toBe(2);
    const put = await t.req('PUT', base, { ...st.body, status: { readyReplicas: 0 } });
    expect(put.body.status.readyReplicas).toBe(3);
  });

  it('makes a byte-identical update a no-op (no new resourceVersion)', async () => {
    const c = await t.req('POST', `${NS}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'same' },
      data: { a: '1' },
    });
    const u = await t.req('PUT', `${NS}/configmaps/same`, c.body);
    expect(u.status).toBe(200);
    expect(u.body.metadata.resourceVersion).toBe(c.body.metadata.resourceVersion);
  });

  it('supports dryRun=All without storing and answers 405 for POST on an object', async () => {
    const dry = await t.req('POST', `${NS}/pods?dryRun=All`, pod('dry'));
    expect(dry.status).toBe(201);
    expect(dry.body.metadata.uid).toBeTruthy();
    expect(dry.body.metadata.resourceVersion).toBeUndefined();
    expect((await t.req('GET', `${NS}/pods/dry`)).status).toBe(404);
    const post = await t.req('POST', `${NS}/pods/dup`, pod('dup'));
    expect(post.status).toBe(405);
    expect(post.body.reason).toBe('MethodNotAllowed');
  });

  it('deletes with finalizers: terminating (MODIFIED), no new finalizers, removal deletes', async () => {
    await t.req('POST', `${NS}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'fin', finalizers: ['example.com/a'] },
    });
    const del = await t.req('DELETE', `${NS}/configmaps/fin`);
    expect(del.status).toBe(200);
    expect(del.body.kind).toBe('ConfigMap');
    expect(del.body.metadata.deletionTimestamp).toMatch(/Z$/);
    const again = await t.req('DELETE', `${NS}/configmaps/fin`);
    expect(again.body.metadata.resourceVersion).toBe(del.body.metadata.resourceVersion);
    const add = await t.req(
      'PATCH',
      `${NS}/configmaps/fin`,
      { metadata: { finalizers: ['example.com/a', 'example.com/b'] } },
      { 'content-type': 'application/merge-patch+json' },
    );
    expect(add.status).toBe(422);
    expect(add.body.details.causes[0].reason).toBe('FieldValueForbidden');
    const rm = await t.req(
      'PATCH',
      `${NS}/configmaps/fin`,
      { metadata: { finalizers: null } },
      { 'content-type': 'application/merge-patch+json' },
    );
    expect(rm.status).toBe(200);
    expect((await t.req('GET', `${NS}/configmaps/fin`)).status).toBe(404);
  });

  it('answers a delete of a plain object with a Success Status and honours preconditions', async () => {
    const c = await t.req('POST', `${NS}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'pre' },
    });
    const wrong = await t.req('DELETE', `${NS}/configmaps/pre`, { preconditions: { uid: 'not-it' } });
    expect(wrong.status).toBe(409);
    const ok = await t.req('DELETE', `${NS}/configmaps/pre`, { preconditions: { uid: c.body.metadata.uid } });
    expect(ok.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: { name: 'pre', kind: 'configmaps', uid: c.body.metadata.uid },
    });
  });

  it('deletes a namespace with its contents and deletecollection returns the deleted list', async () => {
    await t.req('POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'tmp' },
    });
    for (const n of ['a', 'b', 'c'])
      await t.req('POST', '/api/v1/namespaces/tmp/configmaps', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: n, labels: { g: n === 'c' ? '2' : '1' } },
      });
    const dc = await t.req('DELETE', '/api/v1/namespaces/tmp/configmaps?labelSelector=g%3D1');
    expect(dc.body.kind).toBe('ConfigMapList');
    expect(dc.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual(['a', 'b']);
    // as in any list, the items carry no kind/apiVersion
    expect(dc.body.items[0].kind).toBeUndefined();
    expect(dc.body.items[0].apiVersion).toBeUndefined();
    expect((await t.req('DELETE', '/api/v1/namespaces/tmp')).status).toBe(200);
    expect((await t.req('GET', '/api/v1/namespaces/tmp/configmaps/c')).status).toBe(404);
  });

  it('fieldValidation: Strict refuses unknown fields (nested in containers too), Warn drops them with a Warning', async () => {
    const body = pod('fv', {}, { spec: { containers: [{ name: 'c', image: 'img:1', imagee: 'typo' }] } });
    const strict = await t.req('POST', `${NS}/pods?fieldValidation=Strict`, body);
    expect(strict.status).toBe(400);
    expect(strict.body.message).toBe(
      'Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.containers[0].imagee"',
    );
    const warn = await t.req('POST', `${NS}/pods?fieldValidation=Warn`, body);
    expect(warn.status).toBe(201);
    expect(warn.headers.warning).toBe('299 - "unknown field \\"spec.containers[0].imagee\\""');
    expect(warn.body.spec.containers[0].imagee).toBeUndefined();
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Json, startTestServer, type TestServer } from './helpers.js';

const NS = '/api/v1/namespaces/default';
const MERGE = { 'content-type': 'application/merge-patch+json' };
const JSONP = { 'content-type': 'application/json-patch+json' };
const APPLY = { 'content-type': 'application/apply-patch+yaml' };

/** manager, operation, subresource of each entry, sorted (entries of one second sort by manager upstream) */
const managers = (r: { body: Json }): string[][] =>
  (r.body.metadata.managedFields ?? [])
    .map((m: Json) => [m.manager, m.operation, m.subresource ?? ''])
    .sort((a: string[], b: string[]) => a.join().localeCompare(b.join()));

/**
 * kube-apiserver (structured-merge-diff, apimachinery managedfields) keeps no managedFields entry whose
 * field set is empty: a write that owns no field gives its manager no entry, and an entry whose every field
 * went to another manager or was removed disappears.
 */
describe('managedFields: no entry with an empty field set', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it('a merge patch that only removes the last finalizer gives its manager no entry', async () => {
    const c = await t.req('POST', `${NS}/configmaps?fieldManager=creator`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'fin1', finalizers: ['example.com/x'] },
      data: { a: '1' },
    });
    expect(c.status).toBe(201);
    const r = await t.req(
      'PATCH',
      `${NS}/configmaps/fin1?fieldManager=remover`,
      { metadata: { finalizers: null } },
      MERGE,
    );
    expect(r.status).toBe(200);
    expect(r.body.metadata.finalizers).toBeUndefined();
    expect(managers(r)).toEqual([['creator', 'Update', '']]);
    expect(JSON.stringify(r.body.metadata.managedFields[0].fieldsV1)).not.toContain('finalizers');
  });

  it('a JSON patch removing the only field a manager owned drops that manager entry', async () => {
    await t.req('POST', `${NS}/configmaps?fieldManager=creator`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'own1' },
      data: { a: '1' },
    });
    const adder = await t.req(
      'PATCH',
      `${NS}/configmaps/own1?fieldManager=adder`,
      [{ op: 'add', path: '/data/b', value: '2' }],
      JSONP,
    );
    expect(managers(adder)).toEqual([
      ['adder', 'Update', ''],
      ['creator', 'Update', ''],
    ]);
    const r = await t.req(
      'PATCH',
      `${NS}/configmaps/own1?fieldManager=creator`,
      [{ op: 'remove', path: '/data/b' }],
      JSONP,
    );
    expect(r.status).toBe(200);
    expect(managers(r)).toEqual([['creator', 'Update', '']]);
  });

  it('an update that takes a manager field leaves it the map it created; a no-op update adds no entry', async () => {
    const c = await t.req('POST', `${NS}/configmaps?fieldManager=first`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'upd1' },
      data: { a: '1' },
    });
    const changed = structuredClone(c.body);
    changed.data.a = '2';
    const u = await t.req('PUT', `${NS}/configmaps/upd1?fieldManager=second`, changed);
    expect(u.status).toBe(200);
    // first still owns the data map itself (a member without children encodes as {}), second the changed key
    expect(u.body.metadata.managedFields.map((m: Json) => [m.manager, m.fieldsV1])).toEqual([
      ['first', { 'f:data': {} }],
      ['second', { 'f:data': { 'f:a': {} } }],
    ]);
    const same = await t.req('PUT', `${NS}/configmaps/upd1?fieldManager=third`, u.body);
    expect(same.status).toBe(200);
    expect(managers(same)).toEqual([
      ['first', 'Update', ''],
      ['second', 'Update', ''],
    ]);
  });

  it('an applier whose fields were all taken by a forced apply disappears', async () => {
    const yaml = (v: string) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ap1\ndata:\n  k: "${v}"\n`;
    await t.req('PATCH', `${NS}/configmaps/ap1?fieldManager=a`, yaml('a'), APPLY);
    const f = await t.req('PATCH', `${NS}/configmaps/ap1?fieldManager=b&force=true`, yaml('b'), APPLY);
    expect(f.status).toBe(200);
    expect(managers(f)).toEqual([['b', 'Apply', '']]);
  });

  it('a status write that owns no field gives no status entry; one that removes the only status field drops it', async () => {
    const d = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'st1' },
      spec: {
        selector: { matchLabels: { app: 'st1' } },
        template: { metadata: { labels: { app: 'st1' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      },
    };
    const c = await t.req('POST', '/apis/apps/v1/namespaces/default/deployments?fieldManager=creator', d);
    expect(c.status).toBe(201);
    const noop = await t.req(
      'PATCH',
      '/apis/apps/v1/namespaces/default/deployments/st1/status?fieldManager=statuser',
      { status: {} },
      MERGE,
    );
    expect(noop.status).toBe(200);
    expect(managers(noop)).toEqual([['creator', 'Update', '']]);
    const set = await t.req(
      'PATCH',
      '/apis/apps/v1/namespaces/default/deployments/st1/status?fieldManager=statuser',
      { status: { observedGeneration: 1 } },
      MERGE,
    );
    expect(managers(set)).toEqual([
      ['creator', 'Update', ''],
      ['statuser', 'Update', 'status'],
    ]);
    const cleared = await t.req(
      'PATCH',
      '/apis/apps/v1/namespaces/default/deployments/st1/status?fieldManager=other',
      { status: { observedGeneration: null } },
      MERGE,
    );
    expect(cleared.status).toBe(200);
    expect(managers(cleared)).toEqual([['creator', 'Update', '']]);
  });
});

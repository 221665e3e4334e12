/**
 * Patch errors as kube-apiserver v1.32 answers them: JSON-patch decode and apply failures
 * (apiserver patch.go jsonPatcher) and server-side apply conflicts and force (apiserver managedfields
 * NewConflictError / printManager over structured-merge-diff's conflicts).
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { badRequest, type Json, startTestServer, type TestServer } from './helpers.js';

const NS = '/api/v1/namespaces/default';
const JSONP = { 'content-type': 'application/json-patch+json' };
const APPLY = { 'content-type': 'application/apply-patch+yaml' };
const MERGE = { 'content-type': 'application/merge-patch+json' };

/** NewGenericServerResponse(422, "", {}, "", err, 0, false): the json-patch error text is not in the Status. */
const GENERIC_422 = {
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: 'the server rejected our request due to an error in our request',
  reason: 'Invalid',
  details: {},
  code: 422,
};

describe('JSON patch errors (apiserver jsonPatcher)', () => {
  let t: TestServer;
  // a fresh server per test: tests change objects others read
  beforeEach(async () => {
    t = await startTestServer();
    const cm = { metadata: { name: 'jp', labels: { a: '1' } }, data: { k: 'v' } };
    expect((await t.req('POST', `${NS}/configmaps`, cm)).status).toBe(201);
  });
  afterEach(async () => {
    await t.close();
  });

  it('a failing test op, a missing path and an unknown op are the generic 422 with empty details', async () => {
    const cases: Json[] = [
      [{ op: 'test', path: '/metadata/labels/a', value: '2' }],
      [{ op: 'test', path: '/data/missing', value: 'x' }],
      [{ op: 'remove', path: '/data/missing' }],
      [{ op: 'replace', path: '/spec/nothing', value: 1 }],
      [{ op: 'frobnicate', path: '/data/k' }],
      [{ op: 'add', path: '/data/k/deeper/still', value: 'x' }],
    ];
    for (const ops of cases) {
      const r = await t.req('PATCH', `${NS}/configmaps/jp`, ops, JSONP);
      expect({ ops, status: r.status, body: r.body }).toEqual({ ops, status: 422, body: GENERIC_422 });
    }
    // nothing was written
    const cur = await t.req('GET', `${NS}/configmaps/jp`);
    expect(cur.body.data).toEqual({ k: 'v' });
    expect(cur.body.metadata.labels).toEqual({ a: '1' });
  });

  it('a passing test op applies the rest of the patch', async () => {
    const r = await t.req(
      'PATCH',
      `${NS}/configmaps/jp`,
      [
        { op: 'test', path: '/metadata/labels/a', value: '1' },
        { op: 'add', path: '/data/k2', value: 'v2' },
      ],
      JSONP,
    );
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ k: 'v', k2: 'v2' });
  });

  it('a document that is not a list of operations is 400: strictly decoded by default, json-patch decoded with Ignore', async () => {
    expect((await t.req('PATCH', `${NS}/configmaps/jp`, { op: 'add' }, JSONP)).body).toEqual(
      badRequest(
        'error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp',
      ),
    );
    expect((await t.req('PATCH', `${NS}/configmaps/jp`, [1], JSONP)).body).toEqual(
      badRequest(
        'error decoding patch: json: cannot unmarshal number into Go value of type handlers.jsonPatchOp',
      ),
    );
    expect((await t.req('PATCH', `${NS}/configmaps/jp`, [{ op: 1, path: '/x' }], JSONP)).body).toEqual(
      badRequest(
        'error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.op of type string',
      ),
    );
    expect(
      (await t.req('PATCH', `${NS}/configmaps/jp?fieldValidation=Ignore`, { op: 'add' }, JSONP)).body,
    ).toEqual(badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch'));
    // with Ignore a bad op value is only found when applying: the generic 422
    expect(
      (await t.req('PATCH', `${NS}/configmaps/jp?fieldValidation=Ignore`, [{ op: 1, path: '/x' }], JSONP))
        .body,
    ).toEqual(GENERIC_422);
  });

  it('a missing object is 404 before the patch is looked at', async () => {
    const r = await t.req('PATCH', `${NS}/configmaps/nope`, { op: 'add' }, JSONP);
    expect(r.status).toBe(404);
    expect(r.body.message).toBe('configmaps "nope" not found');
  });

  it('more than 10000 operations is 413', async () => {
    const ops = Array.from({ length: 10_001 }, () => ({ op: 'test', path: '/metadata/name', value: 'jp' }));
    const r = await t.req('PATCH', `${NS}/configmaps/jp`, ops, JSONP);
    expect(r.status).toBe(413);
    expect(r.body).toMatchObject({
      reason: 'RequestEntityTooLarge',
      message: 'Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001',
    });
  });
});

describe('server-side apply conflicts and force (apiserver NewConflictError over structured-merge-diff)', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  const applied = (name: string, data: Record<string, string>, labels?: Record<string, string>) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, ...(labels ? { labels } : {}) },
    data,
  });

  it('lists every conflicting field, managers sorted (Update managers "using <apiVersion>", appliers bare), one cause per field', async () => {
    // "editor" writes with an update, "applier-a" with apply; then "applier-b" applies different values
    expect(
      (await t.req('POST', `${NS}/configmaps?fieldManager=editor`, applied('multi', { x: '1', y: '1' })))
        .status,
    ).toBe(201);
    const a = await t.req(
      'PATCH',
      `${NS}/configmaps/multi?fieldManager=applier-a`,
      applied('multi', { z: '1' }, { team: 'a' }),
      APPLY,
    );
    expect(a.status).toBe(200);
    const b = await t.req(
      'PATCH',
      `${NS}/configmaps/multi?fieldManager=applier-b`,
      applied('multi', { y: '2', x: '2', z: '2' }, { team: 'b' }),
      APPLY,
    );
    expect(b.status).toBe(409);
    expect(b.body.reason).toBe('Conflict');
    expect(b.body.message).toBe(
      [
        'Apply failed with 4 conflicts: conflicts with "applier-a":',
        '- .data.z',
        '- .metadata.labels.team',
        'conflicts with "editor" using v1:',
        '- .data.x',
        '- .data.y',
      ].join('\n'),
    );
    expect(b.body.details).toEqual({
      causes: [
        { reason: 'FieldManagerConflict', message: 'conflict with "applier-a"', field: '.data.z' },
        {
          reason: 'FieldManagerConflict',
          message: 'conflict with "applier-a"',
          field: '.metadata.labels.team',
        },
        { reason: 'FieldManagerConflict', message: 'conflict with "editor" using v1', field: '.data.x' },
        { reason: 'FieldManagerConflict', message: 'conflict with "editor" using v1', field: '.data.y' },
      ],
    });
  });

  it('the same value applied by two managers is shared ownership, not a conflict', async () => {
    expect(
      (await t.req('PATCH', `${NS}/configmaps/shared?fieldManager=one`, applied('shared', { s: 'v' }), APPLY))
        .status,
    ).toBe(201);
    const two = await t.req(
      'PATCH',
      `${NS}/configmaps/shared?fieldManager=two`,
      applied('shared', { s: 'v' }),
      APPLY,
    );
    expect(two.status).toBe(200);
    expect(two.body.metadata.managedFields.map((m: Json) => [m.manager, m.fieldsV1])).toEqual([
      ['one', { 'f:data': { 'f:s': {} } }],
      ['two', { 'f:data': { 'f:s': {} } }],
    ]);
  });

  it('force takes the conflicting fields: the losers keep only the rest, a manager left with nothing is dropped', async () => {
    expect(
      (await t.req('POST', `${NS}/configmaps?fieldManager=editor`, applied('force', { x: '1', keep: '1' })))
        .status,
    ).toBe(201);
    expect(
      (
        await t.req(
          'PATCH',
          `${NS}/configmaps/force?fieldManager=applier-a`,
          applied('force', { z: '1' }),
          APPLY,
        )
      ).status,
    ).toBe(200);
    const forced = await t.req(
      'PATCH',
      `${NS}/configmaps/force?fieldManager=applier-b&force=true`,
      applied('force', { x: '2', z: '2' }),
      APPLY,
    );
    expect(forced.status).toBe(200);
    expect(forced.body.data).toEqual({ x: '2', keep: '1', z: '2' });
    expect(forced.body.metadata.managedFields.map((m: Json) => [m.manager, m.operation, m.fieldsV1])).toEqual(
      [
        ['applier-b', 'Apply', { 'f:data': { 'f:x': {}, 'f:z': {} } }],
        ['editor', 'Update', { 'f:data': { '.': {}, 'f:keep': {} } }],
      ],
    );
    // applier-b now owns x: a plain update by editor takes it back without a conflict (updates never conflict)
    const upd = await t.req(
      'PATCH',
      `${NS}/configmaps/force?fieldManager=editor`,
      { data: { x: '3' } },
      MERGE,
    );
    expect(upd.status).toBe(200);
    const again = await t.req(
      'PATCH',
      `${NS}/configmaps/force?fieldManager=applier-b`,
      applied('force', { x: '2', z: '2' }),
      APPLY,
    );
    expect(again.status).toBe(409);
    expect(again.body.message).toBe('Apply failed with 1 conflict: conflict with "editor" using v1: .data.x');
  });

  it('a status manager is printed with its subresource', async () => {
    const dep = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'st' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'st' } },
        template: { metadata: { labels: { app: 'st' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      },
    };
    const D = '/apis/apps/v1/namespaces/default/deployments';
    expect((await t.req('POST', D, dep)).status).toBe(201);
    const st = await t.req(
      'PATCH',
      `${D}/st/status?fieldManager=status-writer`,
      { status: { observedGeneration: 1 } },
      MERGE,
    );
    expect(st.status).toBe(200);
    const r = await t.req(
      'PATCH',
      `${D}/st/status?fieldManager=status-applier`,
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'st' },
        status: { observedGeneration: 5 },
      },
      APPLY,
    );
    expect(r.status).toBe(409);
    expect(r.body.message).toBe(
      'Apply failed with 1 conflict: conflict with "status-writer" with subresource "status" using apps/v1: .status.observedGeneration',
    );
  });
});

/**
 * What kube-apiserver does to a custom resource besides refusing it: pruning unknown fields, dropping `null`s of
 * non-nullable fields without a default, keeping `null` where the schema says `nullable`, applying `default`s on
 * write and on read from storage (a default added to the CRD later shows on objects stored before it), and
 * validation ratcheting on update (a value that was valid under the old schema and is unchanged stays accepted).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crd, GROUP, type Json, WIDGETS } from '../support/cr-validation-cases.js';
import { startTestServer, type TestServer } from './helpers.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const BASE = `/apis/${GROUP}/v1/namespaces/default/widgets`;
const widget = (name: string, spec: Json) => ({
  apiVersion: `${GROUP}/v1`,
  kind: 'Widget',
  metadata: { name },
  spec,
});

describe('custom resource decoding: pruning, nulls, defaults, ratcheting', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
    expect((await t.req('POST', CRDS, WIDGETS)).status).toBe(201);
  });
  afterAll(async () => {
    await t.close();
  });

  it('prunes unknown fields, keeps preserve-unknown-fields subtrees and applies defaults on create', async () => {
    const r = await t.req('POST', BASE, widget('w1', { size: 1, bogus: 1, extra: { any: { thing: true } } }));
    expect(r.status).toBe(201);
    expect(r.body.spec).toEqual({ size: 1, greeting: 'hello', extra: { any: { thing: true } } });
  });

  it('drops nulls of non-nullable fields, keeps them where nullable, defaults a null with a default', async () => {
    const r = await t.req('POST', BASE, widget('w2', { size: 1, mode: null, note: null, greeting: null }));
    expect(r.status).toBe(201);
    expect(r.body.spec).toEqual({ size: 1, note: null, greeting: 'hello' });
  });

  it('counts maxLength in runes, as Go utf8.RuneCount', async () => {
    const r = await t.req('POST', BASE, widget('w3', { size: 1, title: 'éééé' }));
    expect(r.status).toBe(201);
  });

  it('ratchets: an unchanged value that a tightened schema refuses does not block an update elsewhere', async () => {
    const loose = crd('gizmos', 'Gizmo', {
      type: 'object',
      properties: {
        spec: { type: 'object', properties: { n: { type: 'integer' }, m: { type: 'integer' } } },
      },
    });
    expect((await t.req('POST', CRDS, loose)).status).toBe(201);
    const path = `/apis/${GROUP}/v1/namespaces/default/gizmos`;
    const c = await t.req('POST', path, {
      apiVersion: `${GROUP}/v1`,
      kind: 'Gizmo',
      metadata: { name: 'g' },
      spec: { n: 50 },
    });
    expect(c.status).toBe(201);
    const cur = await t.req('GET', `${CRDS}/gizmos.${GROUP}`);
    const tight = structuredClone(cur.body);
    const props = tight.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties;
    props.n.maximum = 10;
    props.m.maximum = 10;
    props.m.default = 3;
    expect((await t.req('PUT', `${CRDS}/gizmos.${GROUP}`, tight)).status).toBe(200);
    // read from storage: the default added later is there
    const read = await t.req('GET', `${path}/g`);
    expect(read.body.spec).toEqual({ n: 50, m: 3 });
    // n is unchanged (50 > 10 now): ratcheted; m changes to a valid value
    const up = await t.req('PUT', `${path}/g`, { ...read.body, spec: { n: 50, m: 5 } });
    expect(up.status).toBe(200);
    // changing n to another invalid value is refused
    const bad = await t.req('PUT', `${path}/g`, { ...up.body, spec: { n: 60, m: 5 } });
    expect(bad.status).toBe(422);
    expect(bad.body.message).toBe(
      `Gizmo.${GROUP} "g" is invalid: spec.n: Invalid value: 60: spec.n in body should be less than or equal to 10`,
    );
  });
  // A schema that declares apiVersion, kind and metadata (every kubebuilder-generated CRD does) must not make a
  // patch fail: the patched object is decoded and validated without its apiVersion/kind, which the server sets.
  it.each([
    ['application/merge-patch+json', { spec: { n: 7 } }],
    ['application/json-patch+json', [{ op: 'replace', path: '/spec/n', value: 7 }]],
  ])(
    'patches (%s) a custom resource whose schema declares apiVersion, kind and metadata',
    async (ct, patch) => {
      const plural = ct.includes('merge') ? 'mwidgets' : 'jwidgets';
      const kind = ct.includes('merge') ? 'MWidget' : 'JWidget';
      const declared = crd(plural, kind, {
        type: 'object',
        properties: {
          apiVersion: { type: 'string' },
          kind: { type: 'string' },
          metadata: { type: 'object' },
          spec: { type: 'object', properties: { n: { type: 'integer', default: 1 } } },
        },
      });
      expect((await t.req('POST', CRDS, declared)).status).toBe(201);
      const path = `/apis/${GROUP}/v1/namespaces/default/${plural}`;
      const c = await t.req('POST', path, {
        apiVersion: `${GROUP}/v1`,
        kind,
        metadata: { name: 'p' },
        spec: { n: 2 },
      });
      expect(c.status).toBe(201);
      const r = await t.req('PATCH', `${path}/p`, patch, { 'content-type': ct });
      expect(r.body.message).toBeUndefined();
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ apiVersion: `${GROUP}/v1`, kind, spec: { n: 7 } });
      expect((await t.req('GET', `${path}/p`)).body.spec).toEqual({ n: 7 });
    },
  );
});

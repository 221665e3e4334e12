import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Json, startTestServer, type TestServer } from './helpers.js';

const NS = '/api/v1/namespaces/default';
const DNS1035 =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const LABEL =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

const causes = (r: { body: Json }) => r.body.details?.causes?.map((c: Json) => c.message);

/**
 * metadata.name is checked with the name function each kind's ValidateObjectMeta gets in kube-apiserver:
 * Service a DNS-1035 label, Namespace a DNS-1123 label, others a DNS-1123 subdomain; length and pattern
 * errors are both reported.
 */
describe('object name rules per kind', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });
  const service = (name: string) => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name },
    spec: { ports: [{ port: 80 }] },
  });

  it('a Service name must be a DNS-1035 label: starting with a digit is 422', async () => {
    const r = await t.req('POST', `${NS}/services`, service('1abc'));
    expect(r.status).toBe(422);
    expect(r.body.message).toBe(
      `Service "1abc" is invalid: metadata.name: Invalid value: "1abc": ${DNS1035}`,
    );
    expect((await t.req('POST', `${NS}/services`, service('abc-1'))).status).toBe(201);
    // a ConfigMap may start with a digit and hold dots (DNS-1123 subdomain)
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: '1a.b' } };
    expect((await t.req('POST', `${NS}/configmaps`, cm)).status).toBe(201);
  });

  it('a Service name over 63 characters that also breaks the pattern gets both causes', async () => {
    const name = `1${'a'.repeat(63)}`;
    const r = await t.req('POST', `${NS}/services`, service(name));
    expect(r.status).toBe(422);
    expect(causes(r)).toEqual([
      `Invalid value: "${name}": must be no more than 63 characters`,
      `Invalid value: "${name}": ${DNS1035}`,
    ]);
  });

  it('generateName is checked in its prefix form (a trailing dash is fine) before the generated name', async () => {
    const gen = (generateName: string) => ({ ...service(''), metadata: { generateName } });
    const ok = await t.req('POST', `${NS}/services`, gen('web-'));
    expect(ok.status).toBe(201);
    expect(ok.body.metadata.name).toMatch(/^web-[a-z0-9]{5}$/);
    const bad = await t.req('POST', `${NS}/services`, gen('1x-'));
    expect(bad.status).toBe(422);
    expect(bad.body.details.causes.map((c: Json) => c.field)).toEqual([
      'metadata.generateName',
      'metadata.name',
    ]);
    expect(causes(bad)[0]).toBe(`Invalid value: "1x-": ${DNS1035}`);
  });

  it('RBAC names are path segments: colons are fine, % is not', async () => {
    const role = (name: string) => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name },
      rules: [],
    });
    const ok = await t.req('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', role('system:Foo_bar'));
    expect(ok.status).toBe(201);
    const bad = await t.req('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', role('a%b'));
    expect(bad.status).toBe(422);
    expect(causes(bad)).toEqual([`Invalid value: "a%b": may not contain '%'`]);
  });

  it('a Namespace name must be a DNS-1123 label: digits first are fine, dots are not', async () => {
    const ok = await t.req('POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: '1ns' },
    });
    expect(ok.status).toBe(201);
    const r = await t.req('POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'a.b' },
    });
    expect(r.status).toBe(422);
    expect(causes(r)).toEqual([`Invalid value: "a.b": ${LABEL}`]);
  });
});

import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

/** Length-delimited protobuf field (wire type 2); lengths here stay below 128. */
const ld = (no: number, payload: Buffer | string): Buffer => {
  const b = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
  return Buffer.concat([Buffer.from([(no << 3) | 2, b.length]), b]);
};
/** A base-128 varint. */
const varint = (n: number): Buffer => {
  const out: number[] = [];
  let v = n;
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
  return Buffer.from(out);
};
const envelope = (apiVersion: string, kind: string, raw: Buffer) =>
  Buffer.concat([
    Buffer.from('k8s\0'),
    ld(1, Buffer.concat([ld(1, apiVersion), ld(2, kind)])),
    ld(2, raw),
    ld(3, ''),
    ld(4, ''),
  ]);

describe('protobuf request bodies (kubectl generator commands)', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it('creates a ConfigMap from a k8s protobuf envelope and answers JSON', async () => {
    // ConfigMap{metadata{name: "pb", labels{a: b}}, data{k: v}} as kubectl encodes it (empty strings included)
    const meta = Buffer.concat([
      ld(1, 'pb'),
      ld(2, ''),
      ld(3, ''),
      ld(11, Buffer.concat([ld(1, 'a'), ld(2, 'b')])),
    ]);
    const body = envelope(
      'v1',
      'ConfigMap',
      Buffer.concat([ld(1, meta), ld(2, Buffer.concat([ld(1, 'k'), ld(2, 'v')]))]),
    );
    const res = await t.req(
      'POST',
      '/api/v1/namespaces/default/configmaps?fieldManager=kubectl-create',
      body.toString('latin1'),
      {
        'content-type': 'application/vnd.kubernetes.protobuf',
        accept: 'application/vnd.kubernetes.protobuf,application/json',
      },
    );
    expect(res.status).toBe(201);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.body.metadata).toMatchObject({ name: 'pb', namespace: 'default', labels: { a: 'b' } });
    expect(res.body.data).toEqual({ k: 'v' });
  });

  it('creates a Deployment (kubectl create deployment) with its template and ports', async () => {
    const port = Buffer.from([0x18, 80]); // ContainerPort.containerPort = 80
    const c = Buffer.concat([ld(1, 'web'), ld(2, 'nginx:1'), ld(6, port)]);
    const tmpl = Buffer.concat([ld(1, ld(11, Buffer.concat([ld(1, 'app'), ld(2, 'web')]))), ld(2, ld(2, c))]);
    const spec = Buffer.concat([
      Buffer.from([0x08, 2]),
      ld(2, ld(1, Buffer.concat([ld(1, 'app'), ld(2, 'web')]))),
      ld(3, tmpl),
    ]);
    const body = envelope('apps/v1', 'Deployment', Buffer.concat([ld(1, ld(1, 'web')), ld(2, spec)]));
    const res = await t.req('POST', '/apis/apps/v1/namespaces/default/deployments', body.toString('latin1'), {
      'content-type': 'application/vnd.kubernetes.protobuf',
    });
    expect(res.status).toBe(201);
    expect(res.body.spec.replicas).toBe(2);
    expect(res.body.spec.selector).toEqual({ matchLabels: { app: 'web' } });
    expect(res.body.spec.template.spec.containers[0]).toMatchObject({
      name: 'web',
      image: 'nginx:1',
      ports: [{ containerPort: 80, protocol: 'TCP' }],
    });
  });

  it('decodes any served built-in kind by the generated layouts: a Lease with a MicroTime and an int32', async () => {
    // LeaseSpec: holderIdentity=1, leaseDurationSeconds=2, renewTime=4 (MicroTime {seconds=1, nanos=2})
    const renew = Buffer.concat([
      Buffer.from([0x08]),
      varint(1_700_000_000),
      Buffer.from([0x10]),
      varint(123_456_000),
    ]);
    const spec = Buffer.concat([ld(1, 'me'), Buffer.from([0x10, 15]), ld(4, renew)]);
    const body = envelope('coordination.k8s.io/v1', 'Lease', Buffer.concat([ld(1, ld(1, 'l')), ld(2, spec)]));
    // bytes above 0x7f: sent as a Buffer (the string helper would UTF-8 encode them)
    const res = await request(
      new URL('/apis/coordination.k8s.io/v1/namespaces/default/leases', t.server.url),
      {
        method: 'POST',
        body,
        headers: {
          'content-type': 'application/vnd.kubernetes.protobuf',
          accept: 'application/json',
          authorization: `Bearer ${t.server.token}`,
        },
        dispatcher: t.dispatcher,
      },
    );
    const created = (await res.body.json()) as { spec: unknown };
    expect(res.statusCode).toBe(201);
    expect(created.spec).toEqual({
      holderIdentity: 'me',
      leaseDurationSeconds: 15,
      renewTime: '2023-11-14T22:13:20.123456Z',
    });
  });

  it('refuses kinds without a protobuf layout (and malformed bodies) with 415', async () => {
    const crd = envelope(
      'apiextensions.k8s.io/v1',
      'CustomResourceDefinition',
      ld(1, ld(1, 'x.example.com')),
    );
    const res = await t.req(
      'POST',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
      crd.toString('latin1'),
      { 'content-type': 'application/vnd.kubernetes.protobuf' },
    );
    expect(res.status).toBe(415);
    expect(res.body.reason).toBe('UnsupportedMediaType');
    // envtest-only: the 415 does not claim protobuf is accepted for a kind it cannot decode
    expect(res.body.message).toBe(
      'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml',
    );
    // a kind it decodes keeps the server's list
    const cm = await t.req('POST', '/api/v1/namespaces/default/configmaps', 'x', {
      'content-type': 'text/plain',
    });
    expect(cm.body.message).toBe(
      'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf',
    );
    const garbage = await t.req('POST', '/api/v1/namespaces/default/configmaps', 'not protobuf', {
      'content-type': 'application/vnd.kubernetes.protobuf',
    });
    expect(garbage.status).toBe(415);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

/** Length-delimited protobuf field (wire type 2); lengths here stay below 128. */
const ld = (no: number, payload: Buffer | string): Buffer => {
  const b = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
  return Buffer.concat([Buffer.from([(no << 3) | 2, b.length]), b]);
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

  it('refuses kinds it cannot decode with 415', async () => {
    const body = envelope('coordination.k8s.io/v1', 'Lease', ld(1, ld(1, 'l')));
    const res = await t.req(
      'POST',
      '/apis/coordination.k8s.io/v1/namespaces/default/leases',
      body.toString('latin1'),
      {
        'content-type': 'application/vnd.kubernetes.protobuf',
      },
    );
    expect(res.status).toBe(415);
    expect(res.body.reason).toBe('UnsupportedMediaType');
  });
});

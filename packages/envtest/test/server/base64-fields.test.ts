/**
 * Breaker bug 5: envtest stored a Secret whose `data` values were not base64. kube-apiserver decodes every Go
 * `[]byte` field (OpenAPI `format: byte`) with encoding/json, whose base64 decoder refuses such input: 400
 * BadRequest `<Kind> in version "<v>" cannot be handled as a <Kind>: illegal base64 data at input byte N`.
 * The class: every `format: byte` field of the built-in kinds (from the generated schema table).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { goBase64Error } from '../../src/schema/base64.js';
import { badRequest, startTestServer, type TestServer } from './helpers.js';

const NS = '/api/v1/namespaces/default';

describe('Go base64 decoding offsets (encoding/base64 StdEncoding, as encoding/json decodes []byte)', () => {
  it.each([
    ['aGVsbG8=', undefined],
    ['', undefined],
    ['aGVs\nbG8=', undefined],
    ['aGVsbG8', 4],
    ['not base64!', 3],
    ['aGVsbG8=x', 8],
    ['a===', 1],
    ['aG==', undefined],
    ['aG=', 3],
    ['aG=x', 2],
    ['aGVsbG8=\n', undefined],
    ['aGV=bG8=', 4],
    ['é', 0],
  ])('%j → %s', (input, offset) => {
    expect(goBase64Error(input)).toBe(offset);
  });
});

describe('format: byte fields are validated as base64', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it('refuses a Secret whose data is not base64 on create and update, and stores nothing', async () => {
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's1' }, data: { k: 'not base64!' } };
    const created = await t.req('POST', `${NS}/secrets`, secret);
    expect(created.status).toBe(400);
    expect(created.body).toEqual(
      badRequest('Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 3'),
    );
    expect((await t.req('GET', `${NS}/secrets/s1`)).status).toBe(404);

    const ok = await t.req('POST', `${NS}/secrets`, { ...secret, data: { k: 'aGVsbG8=' } });
    expect(ok.status).toBe(201);
    const put = await t.req('PUT', `${NS}/secrets/s1`, { ...ok.body, data: { k: 'aGVsbG8' } });
    expect(put.body).toEqual(
      badRequest('Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 4'),
    );
    // stringData is plain text, not base64
    const plain = await t.req('POST', `${NS}/secrets`, {
      ...secret,
      metadata: { name: 's2' },
      data: undefined,
      stringData: { k: 'not base64!' },
    });
    expect(plain.status).toBe(201);
  });

  it('refuses ConfigMap binaryData, a CSR request and a webhook caBundle that are not base64', async () => {
    const cm = await t.req('POST', `${NS}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm1' },
      data: { text: 'not base64 is fine here' },
      binaryData: { bin: 'AAEC', bad: '***' },
    });
    expect(cm.body).toEqual(
      badRequest(
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: illegal base64 data at input byte 0',
      ),
    );
    const csr = await t.req('POST', '/apis/certificates.k8s.io/v1/certificatesigningrequests', {
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { name: 'csr1' },
      spec: { request: 'abc', signerName: 'example.com/x', usages: ['digital signature'] },
    });
    expect(csr.body).toMatchObject({
      code: 400,
      message:
        'CertificateSigningRequest in version "v1" cannot be handled as a CertificateSigningRequest: illegal base64 data at input byte 0',
    });
    const hook = await t.req(
      'POST',
      '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name: 'vw1' },
        webhooks: [
          {
            name: 'a.example.com',
            clientConfig: { url: 'https://example.com', caBundle: 'Zm9v' },
            admissionReviewVersions: ['v1'],
            sideEffects: 'None',
          },
          {
            name: 'b.example.com',
            clientConfig: { url: 'https://example.com', caBundle: 'Zm9v!' },
            admissionReviewVersions: ['v1'],
            sideEffects: 'None',
          },
        ],
      },
    );
    expect(hook.body).toMatchObject({
      code: 400,
      message:
        'ValidatingWebhookConfiguration in version "v1" cannot be handled as a ValidatingWebhookConfiguration: illegal base64 data at input byte 4',
    });
  });
});

describe('a patch that leaves a format: byte field invalid', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it('is refused with 422 and one `patch` cause, as the patch handler does', async () => {
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'sp' }, data: { k: 'aGVsbG8=' } };
    expect((await t.req('POST', `${NS}/secrets`, secret)).status).toBe(201);
    const r = await t.req(
      'PATCH',
      `${NS}/secrets/sp`,
      { data: { k: 'x' } },
      {
        'content-type': 'application/merge-patch+json',
      },
    );
    expect(r.status).toBe(422);
    expect(r.body.reason).toBe('Invalid');
    expect(r.body.message).toMatch(
      /^ "" is invalid: patch: Invalid value: ".*": illegal base64 data at input byte 0$/,
    );
    expect(r.body.details.causes).toHaveLength(1);
    expect(r.body.details.causes[0]).toMatchObject({ reason: 'FieldValueInvalid', field: 'patch' });
    expect(r.body.details.name).toBeUndefined();
    expect((await t.req('GET', `${NS}/secrets/sp`)).body.data).toEqual({ k: 'aGVsbG8=' });
  });
});

/**
 * `spec.conversion` of a CRD is validated as kube-apiserver 1.32 validates it: each case's message is what the real
 * server answered to the same CRD (recorded with kubectl against the 1.32 build, Dec 2 2026), so a CRD envtest
 * accepts is one the real server accepts. A conversion switched to Webhook without a client config (what a CA
 * bundle injection into a CRD without a webhook would write) is refused on update too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CertificateAuthority } from '../../src/certs.js';
import { type Json, startTestServer, type TestServer } from './helpers.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.close();
});

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const crd = (conversion: Json | undefined): Json => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'nuconvs.newuser.example.com' },
  spec: {
    group: 'newuser.example.com',
    names: { kind: 'NuConv', plural: 'nuconvs' },
    scope: 'Namespaced',
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }],
    ...(conversion ? { conversion } : {}),
  },
});
const prefix = 'CustomResourceDefinition.apiextensions.k8s.io "nuconvs.newuser.example.com" is invalid: ';

describe('CRD spec.conversion validation', () => {
  it.each([
    [
      { strategy: 'Webhook' },
      '[spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook, spec.conversion.conversionReviewVersions: Required value]',
    ],
    [
      { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'] } },
      'spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook',
    ],
    [
      {
        strategy: 'Webhook',
        webhook: { clientConfig: { caBundle: 'Zm9v' }, conversionReviewVersions: ['v1'] },
      },
      'spec.conversion.webhookClientConfig: Required value: exactly one of url or service is required',
    ],
    [
      {
        strategy: 'Webhook',
        webhook: {
          clientConfig: { url: 'https://x/y', service: { name: 'a', namespace: 'b' } },
          conversionReviewVersions: ['v1'],
        },
      },
      'spec.conversion.webhookClientConfig: Required value: exactly one of url or service is required',
    ],
    [
      { strategy: 'Webhook', webhook: { clientConfig: { url: 'https://x/y' } } },
      'spec.conversion.conversionReviewVersions: Required value',
    ],
    [
      {
        strategy: 'None',
        webhook: { clientConfig: { url: 'https://x/y' }, conversionReviewVersions: ['v1'] },
      },
      '[spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook, spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook]',
    ],
    [
      { strategy: 'Other' },
      'spec.conversion.strategy: Unsupported value: "Other": supported values: "None", "Webhook"',
    ],
    [
      {
        strategy: 'Webhook',
        webhook: { clientConfig: { url: 'http://x/y' }, conversionReviewVersions: ['v9'] },
      },
      `[spec.conversion.webhookClientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path], spec.conversion.conversionReviewVersions: Invalid value: []string{"v9"}: must include at least one of v1, v1beta1]`,
    ],
  ])('refuses %j as the real server does', async (conversion, message) => {
    const r = await t.req('POST', CRDS, crd(conversion));
    expect(r.status).toBe(422);
    expect(r.body.message).toBe(`${prefix}${message}`);
  });

  it('accepts a webhook conversion with a URL or a Service, and refuses switching one to Webhook with only a CA bundle', async () => {
    const ok = await t.req(
      'POST',
      CRDS,
      crd({
        strategy: 'Webhook',
        webhook: {
          clientConfig: { url: 'https://127.0.0.1:9443/convert' },
          conversionReviewVersions: ['v1'],
        },
      }),
    );
    expect(ok.status).toBe(201);
    await t.req('DELETE', `${CRDS}/nuconvs.newuser.example.com`);
    const ca = await CertificateAuthority.create('crd-conversion-test-ca');
    const caBundle = Buffer.from(ca.certPem).toString('base64');
    const none = await t.req('POST', CRDS, crd(undefined));
    expect(none.status).toBe(201);
    expect(none.body.spec.conversion).toEqual({ strategy: 'None' });
    const patched = await t.req(
      'PATCH',
      `${CRDS}/nuconvs.newuser.example.com`,
      { spec: { conversion: { strategy: 'Webhook', webhook: { clientConfig: { caBundle } } } } },
      { 'content-type': 'application/merge-patch+json' },
    );
    expect(patched.status).toBe(422);
    expect(patched.body.message).toBe(
      `${prefix}[spec.conversion.webhookClientConfig: Required value: exactly one of url or service is required, spec.conversion.conversionReviewVersions: Required value]`,
    );
    await t.req('DELETE', `${CRDS}/nuconvs.newuser.example.com`);
  });
});

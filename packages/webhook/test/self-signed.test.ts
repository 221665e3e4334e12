import { X509Certificate } from 'node:crypto';
import { type KubeObject, kind, newClient, Secret } from '@kubeloop/client';
import type { RestConfig } from '@kubeloop/config';
import { type ApiServer, startApiServer } from '@kubeloop/envtest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdmissionWebhook, SelfSignedCertificates, serviceDNSNames, WebhookServer } from '../src/index.js';
import { admissionReview, post } from './support/tls.js';

const Validating = kind('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration');
const Mutating = kind('admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration');
const CRD = kind('apiextensions.k8s.io/v1', 'CustomResourceDefinition');
const DAY = 24 * 3600 * 1000;
interface WebhookConfiguration {
  webhooks: { clientConfig?: { caBundle?: string } }[];
}

let server: ApiServer;
let config: RestConfig;
beforeAll(async () => {
  server = await startApiServer();
  config = {
    host: server.url,
    tlsClientConfig: { caData: server.caPem },
    bearerToken: server.token,
    qps: -1,
    burst: 0,
    timeoutMs: 0,
    userAgent: 'self-signed-test',
  };
});
afterAll(async () => {
  await server?.stop();
});

function webhookEntry(name: string): Record<string, unknown> {
  return {
    name,
    clientConfig: { url: `https://127.0.0.1:9443/${name}` },
    rules: [
      { apiGroups: ['example.com'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['widgets'] },
    ],
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    failurePolicy: 'Fail',
  };
}

describe('SelfSignedCertificates', () => {
  it('creates the CA and serving certificate in a Secret, rotates at 2/3 of life on the clock, and injects the CA bundle', async () => {
    const client = newClient(config);
    await client.create(Validating, {
      apiVersion: Validating.apiVersion,
      kind: Validating.kind,
      metadata: { name: 'widgets' },
      webhooks: [webhookEntry('vwidget.example.com'), webhookEntry('vwidget2.example.com')],
    } as KubeObject);
    await client.create(Mutating, {
      apiVersion: Mutating.apiVersion,
      kind: Mutating.kind,
      metadata: { name: 'widgets' },
      webhooks: [webhookEntry('mwidget.example.com')],
    } as KubeObject);
    await client.create(CRD, {
      apiVersion: CRD.apiVersion,
      kind: CRD.kind,
      metadata: { name: 'widgets.example.com' },
      spec: {
        group: 'example.com',
        names: { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' },
        scope: 'Namespaced',
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
          {
            name: 'v1alpha1',
            served: true,
            storage: false,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
        conversion: {
          strategy: 'Webhook',
          webhook: {
            clientConfig: { url: 'https://127.0.0.1:9443/convert' },
            conversionReviewVersions: ['v1'],
          },
        },
      },
    } as KubeObject);

    let now = Date.parse('2026-01-01T00:00:00Z');
    const certs = new SelfSignedCertificates({
      client,
      secret: { name: 'webhook-certs', namespace: 'default' },
      names: [...serviceDNSNames('webhook-service', 'system'), '127.0.0.1'],
      now: () => now,
      checkIntervalMs: 0,
      inject: {
        validatingWebhookConfigurations: ['widgets'],
        mutatingWebhookConfigurations: ['widgets', 'absent'],
        customResourceDefinitions: ['widgets.example.com'],
      },
    });
    const web = new WebhookServer({ bindAddress: '127.0.0.1:0', certificateSource: certs });
    web.register('/v', new AdmissionWebhook('v', () => ({ allowed: true })));
    const ac = new AbortController();
    const running = web.start(ac.signal);
    await web.ready();
    const port = web.port() as number;

    const secret = (await client.get(Secret, {
      name: 'webhook-certs',
      namespace: 'default',
    })) as KubeObject & { data: Record<string, string> };
    expect(Object.keys(secret.data).sort()).toEqual([
      'ca-bundle.crt',
      'ca.crt',
      'ca.key',
      'tls.crt',
      'tls.key',
    ]);
    const serving1 = new X509Certificate(certs.current().cert);
    expect(serving1.subjectAltName).toContain('DNS:webhook-service.system.svc');
    expect(serving1.subjectAltName).toContain('IP Address:127.0.0.1');
    expect(Date.parse(serving1.validTo) - now).toBeGreaterThan(364 * DAY);
    const bundle1 = certs.caBundle();
    const caOf = (b: string): string[] =>
      Buffer.from(b, 'base64')
        .toString()
        .match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];

    const injected = async (): Promise<string[]> => {
      const v = (await client.get(Validating, { name: 'widgets' })) as KubeObject & {
        webhooks: { clientConfig: { caBundle?: string; url?: string }; rules: unknown[] }[];
      };
      const m = (await client.get(Mutating, { name: 'widgets' })) as KubeObject & {
        webhooks: { clientConfig: { caBundle?: string } }[];
      };
      const c = (await client.get(CRD, { name: 'widgets.example.com' })) as KubeObject & {
        spec: { conversion: { webhook: { clientConfig: { caBundle?: string; url?: string } } } };
      };
      // the rest of each webhook stays as the installer wrote it
      expect(v.webhooks.map((w) => [w.clientConfig.url, w.rules.length])).toEqual([
        ['https://127.0.0.1:9443/vwidget.example.com', 1],
        ['https://127.0.0.1:9443/vwidget2.example.com', 1],
      ]);
      expect(c.spec.conversion.webhook.clientConfig.url).toBe('https://127.0.0.1:9443/convert');
      return [
        ...v.webhooks.map((w) => w.clientConfig.caBundle ?? ''),
        ...m.webhooks.map((w) => w.clientConfig.caBundle ?? ''),
        c.spec.conversion.webhook.clientConfig.caBundle ?? '',
      ];
    };
    expect(await injected()).toEqual([bundle1, bundle1, bundle1, bundle1]);
    const v = (await client.get(Validating, { name: 'widgets' })) as KubeObject;
    expect(v.metadata?.managedFields?.map((f) => f.manager)).toContain('kubeloop-webhook-cainjector');

    // before 2/3 of the year nothing changes
    now += 200 * DAY;
    expect(await certs.refresh()).toBe(false);
    const call = () => post(port, '/v', JSON.stringify(admissionReview({})), caOf(certs.caBundle()));
    expect((await call()).status).toBe(200);

    // past 2/3, step 1: a new CA joins the bundle (new first, old kept) and is injected; the old pair is still
    // served, so requests of an API server with either bundle succeed during the swap
    now += 50 * DAY;
    const during = Array.from({ length: 20 }, () =>
      post(port, '/v', JSON.stringify(admissionReview({})), caOf(bundle1)),
    );
    expect(await certs.refresh()).toBe(false);
    expect((await Promise.all(during)).map((r) => r.status)).toEqual(Array(20).fill(200));
    const bundle2 = certs.caBundle();
    expect(caOf(bundle2)).toHaveLength(2);
    expect(caOf(bundle2)[1]).toBe(caOf(bundle1)[0]);
    expect(await injected()).toEqual([bundle2, bundle2, bundle2, bundle2]);
    expect((await post(port, '/v', JSON.stringify(admissionReview({})), caOf(bundle1))).status).toBe(200);

    // step 2, promoteAfterMs later: the new pair is served; the injected bundle trusts it, in-flight requests too
    now += 5 * 60_000;
    const swap = Array.from({ length: 20 }, () =>
      post(port, '/v', JSON.stringify(admissionReview({})), caOf(bundle2)),
    );
    expect(await certs.refresh()).toBe(true);
    expect((await Promise.all(swap)).map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(certs.rotations).toBe(3);
    const served = await call();
    expect(served.status).toBe(200);
    expect(new X509Certificate(Buffer.from(served.peerCertPem ?? '', 'base64')).fingerprint256).toBe(
      new X509Certificate(certs.current().cert).fingerprint256,
    );
    expect(caOf(certs.caBundle())).toEqual(caOf(bundle2));
    expect(Date.parse(new X509Certificate(certs.current().cert).validTo) - now).toBeGreaterThan(364 * DAY);

    // a second replica reading the same Secret gets the same pair and does not rotate
    const replica = new SelfSignedCertificates({
      client,
      secret: { name: 'webhook-certs', namespace: 'default' },
      names: ['127.0.0.1', 'webhook-service.system.svc'],
      now: () => now,
      checkIntervalMs: 0,
    });
    await replica.start(new AbortController().signal);
    expect(replica.current().cert).toBe(certs.current().cert);
    expect(replica.rotations).toBe(0);
    ac.abort();
    await running;
  });

  it('a Secret whose serving certificate lacks a configured name gets a new one from the same CA, served at once', async () => {
    const client = newClient(config);
    const secret = { name: 'renamed-certs', namespace: 'default' };
    // first run: only the Service's names (as a deployed manager would have written the Secret)
    const first = new SelfSignedCertificates({
      client,
      secret,
      names: serviceDNSNames('webhook-service', 'system'),
      checkIntervalMs: 0,
    });
    await first.start(new AbortController().signal);
    const bundle = first.caBundle();
    expect(new X509Certificate(first.current().cert).checkIP('127.0.0.1')).toBeUndefined();
    // the same Secret, now also for 127.0.0.1 (a manager run from a laptop, the API server calling it by URL)
    const certs = new SelfSignedCertificates({
      client,
      secret,
      names: [...serviceDNSNames('webhook-service', 'system'), '127.0.0.1'],
      checkIntervalMs: 0,
    });
    const web = new WebhookServer({ bindAddress: '127.0.0.1:0', certificateSource: certs });
    web.register('/v', new AdmissionWebhook('v', () => ({ allowed: true })));
    const ac = new AbortController();
    const running = web.start(ac.signal);
    try {
      await web.ready();
      const serving = new X509Certificate(certs.current().cert);
      expect(serving.checkIP('127.0.0.1')).toBe('127.0.0.1');
      expect(serving.subjectAltName).toContain('DNS:webhook-service.system.svc');
      // the CA is kept, so the bundle already injected into the configurations trusts the new certificate
      expect(certs.caBundle()).toBe(bundle);
      const ca = Buffer.from(bundle, 'base64').toString();
      const reply = await post(web.port() as number, '/v', JSON.stringify(admissionReview({})), [ca]);
      expect(reply.status).toBe(200);
      // the Secret holds the new pair: another replica with these names serves it as it is
      const replica = new SelfSignedCertificates({
        client,
        secret,
        names: ['127.0.0.1'],
        checkIntervalMs: 0,
      });
      await replica.start(new AbortController().signal);
      expect(replica.current().cert).toBe(certs.current().cert);
    } finally {
      ac.abort();
      await running;
    }
  });

  it('leaves a CRD that does not convert through a webhook as it is (the API server refuses Webhook with only a CA bundle)', async () => {
    const client = newClient(config);
    await client.create(CRD, {
      apiVersion: CRD.apiVersion,
      kind: CRD.kind,
      metadata: { name: 'gizmos.example.com' },
      spec: {
        group: 'example.com',
        names: { kind: 'Gizmo', plural: 'gizmos', singular: 'gizmo', listKind: 'GizmoList' },
        scope: 'Namespaced',
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
      },
    } as KubeObject);
    const certs = new SelfSignedCertificates({
      client,
      secret: { name: 'gizmo-certs', namespace: 'default' },
      names: ['127.0.0.1'],
      checkIntervalMs: 0,
      inject: { customResourceDefinitions: ['gizmos.example.com'] },
    });
    // a manager run before its CRD's conversion points at it (or with conversion off) starts and serves
    await certs.start(new AbortController().signal);
    const crd = (await client.get(CRD, { name: 'gizmos.example.com' })) as KubeObject & {
      spec: { conversion?: unknown };
    };
    expect(crd.spec.conversion).toEqual({ strategy: 'None' });
  });

  it('a replica serves before it is elected, injects nothing until then, and injects once elected', async () => {
    const client = newClient(config);
    await client.create(Validating, {
      apiVersion: Validating.apiVersion,
      kind: Validating.kind,
      metadata: { name: 'standby-widgets' },
      webhooks: [webhookEntry('vwidget.example.com')],
    } as KubeObject);
    let markElected!: () => void;
    const elected = new Promise<void>((resolve) => {
      markElected = resolve;
    });
    const certs = new SelfSignedCertificates({
      client,
      secret: { name: 'standby-certs', namespace: 'default' },
      names: ['127.0.0.1'],
      checkIntervalMs: 0,
      inject: { validatingWebhookConfigurations: ['standby-widgets'] },
      elected: () => elected,
      fieldManager: 'standby-injector',
    });
    const ac = new AbortController();
    // start() must not wait for the election: the manager's webhook server needs the pair before it elects
    await certs.start(ac.signal);
    expect(certs.current().cert).toContain('BEGIN CERTIFICATE');
    await certs.refresh();
    const bundleOf = async () =>
      ((await client.get(Validating, { name: 'standby-widgets' })) as unknown as WebhookConfiguration)
        .webhooks[0]?.clientConfig?.caBundle;
    expect(await bundleOf()).toBeUndefined();
    markElected();
    await expect.poll(bundleOf, { timeout: 30_000 }).toBe(certs.caBundle());
    ac.abort();
    expect(
      () =>
        new SelfSignedCertificates({
          client,
          secret: { name: 'a', namespace: 'b' },
          names: [],
          rotateAtFraction: 0.5,
        }),
    ).toThrow(/names/);
    expect(
      () =>
        new SelfSignedCertificates({
          client,
          secret: { name: 'a', namespace: 'b' },
          names: ['a'],
          rotateAtFraction: 1,
        }),
    ).toThrow(/rotateAtFraction/);
  });
});

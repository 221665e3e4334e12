import { newManager } from '@kubeloop/builder';
import { type KubeObject, kind } from '@kubeloop/client';
import type { RestConfig } from '@kubeloop/config';
import { describe, expect, it } from 'vitest';
import {
  crdConversionPatch,
  defineWebhook,
  getWebhookServer,
  guessPlural,
  isWebhookDeclaration,
  mutatePath,
  newWebhookManagedBy,
  validatePath,
  webhookConfigurations,
  webhookManifests,
  webhookRegistrations,
} from '../src/index.js';
import { admissionReview, loopbackPki, post, staticSource } from './support/tls.js';

// The manager never reaches this address: no informer is made, so it opens no connection.
const offline: RestConfig = {
  host: 'https://127.0.0.1:9',
  tlsClientConfig: {},
  qps: -1,
  burst: 0,
  timeoutMs: 0,
  userAgent: 'webhook-test',
};

interface Widget extends KubeObject {
  spec?: { size?: number };
}
const Widget = kind<Widget>('example.com/v1', 'Widget');

describe('newWebhookManagedBy', () => {
  it('kubebuilder paths and plurals', () => {
    expect(validatePath(Widget)).toBe('/validate-example-com-v1-widget');
    expect(mutatePath(kind('v1', 'Pod'))).toBe('/mutate--v1-pod');
    expect(mutatePath(kind('apps.example.io/v1beta2', 'FooBar'))).toBe(
      '/mutate-apps-example-io-v1beta2-foobar',
    );
    expect(['Widget', 'Policy', 'Box', 'Gateway', 'Mesh'].map(guessPlural)).toEqual([
      'widgets',
      'policies',
      'boxes',
      'gateways',
      'meshes',
    ]);
  });

  it('registers the handlers on the manager webhook server, which serves before the caches and is ready through /readyz', async () => {
    const mgr = newManager(offline, { health: { bindAddress: '127.0.0.1:0' } });
    const { ca, serving } = await loopbackPki();
    const server = getWebhookServer(mgr, {
      bindAddress: '127.0.0.1:0',
      certificateSource: staticSource(serving),
    });
    expect(getWebhookServer(mgr)).toBe(server);
    expect(() => getWebhookServer(mgr, {})).toThrow(/exists already/);
    expect(() => newWebhookManagedBy(mgr).complete()).toThrow(/call for\(kind\)/);
    expect(() => newWebhookManagedBy(mgr).for(Widget).complete()).toThrow(
      /no validator, defaulter or conversion/,
    );
    const reg = newWebhookManagedBy(mgr)
      .for(Widget)
      .withDefaulter({
        default(w) {
          w.spec = { size: 1, ...w.spec };
        },
      })
      .withValidator({ validateDelete: () => ['bye'] })
      .withConversion((o, v) => ({ ...o, apiVersion: v }))
      .withSettings({ failurePolicy: 'Ignore', timeoutSeconds: 5 })
      .complete();
    expect(reg).toMatchObject({
      group: 'example.com',
      version: 'v1',
      plural: 'widgets',
      validateOperations: ['CREATE', 'UPDATE', 'DELETE'],
      convertible: true,
    });
    expect(server.paths().sort()).toEqual([
      '/convert',
      '/mutate-example-com-v1-widget',
      '/validate-example-com-v1-widget',
    ]);
    expect(() => newWebhookManagedBy(mgr).for(Widget).withValidator({}).complete()).toThrow(
      /registered already/,
    );

    const ac = new AbortController();
    const running = mgr.start(ac.signal);
    await server.ready();
    const r = await post(
      server.port() as number,
      '/mutate-example-com-v1-widget',
      JSON.stringify(admissionReview({ object: { kind: 'Widget', metadata: { name: 'w' } } })),
      ca.cert,
    );
    expect(
      JSON.parse(
        Buffer.from((r.body as { response: { patch: string } }).response.patch, 'base64').toString(),
      ),
    ).toEqual([{ op: 'add', path: '/spec', value: { size: 1 } }]);
    await expect
      .poll(async () => (await fetch(`http://${mgr.healthProbeServerAddress()}/readyz?verbose`)).status)
      .toBe(200);
    const verbose = await (await fetch(`http://${mgr.healthProbeServerAddress()}/readyz?verbose`)).text();
    expect(verbose).toContain('webhookServerReady');
    expect(await mgr.getMetricsRegistry().metrics()).toContain(
      'controller_runtime_webhook_requests_total{webhook="/mutate-example-com-v1-widget",code="200"}',
    );
    ac.abort();
    await running;
  });

  it('generates the webhook configurations and the CRD conversion from the registrations', () => {
    const mgr = newManager(offline);
    getWebhookServer(mgr, { bindAddress: '0' });
    newWebhookManagedBy(mgr)
      .for(Widget)
      .withDefaulter({ default() {} })
      .withValidator({})
      .withSettings({ reinvocationPolicy: 'IfNeeded' })
      .complete();
    newWebhookManagedBy(mgr)
      .for(kind('v1', 'Pod'))
      .withValidator({})
      .withSettings({ sideEffects: 'NoneOnDryRun' })
      .complete();
    const [mutating, validating] = webhookConfigurations(webhookRegistrations(mgr), {
      name: 'widgets',
      service: { name: 'webhook-service', namespace: 'system', port: 443 },
      caBundle: 'Q0E=',
    });
    expect(mutating).toEqual({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'widgets' },
      webhooks: [
        {
          name: 'mwidget-v1.example.com',
          clientConfig: {
            service: {
              name: 'webhook-service',
              namespace: 'system',
              path: '/mutate-example-com-v1-widget',
              port: 443,
            },
            caBundle: 'Q0E=',
          },
          rules: [
            {
              apiGroups: ['example.com'],
              apiVersions: ['v1'],
              operations: ['CREATE', 'UPDATE'],
              resources: ['widgets'],
            },
          ],
          admissionReviewVersions: ['v1'],
          failurePolicy: 'Fail',
          matchPolicy: 'Equivalent',
          sideEffects: 'None',
          timeoutSeconds: 10,
          reinvocationPolicy: 'IfNeeded',
        },
      ],
    });
    expect(validating?.webhooks.map((w) => [w.name, w.sideEffects])).toEqual([
      ['vwidget-v1.example.com', 'None'],
      ['vpod-v1.core.kubeloop.io', 'NoneOnDryRun'],
    ]);
    const byUrl = webhookConfigurations(webhookRegistrations(mgr), { url: 'https://127.0.0.1:9443/' });
    expect(byUrl[1]?.webhooks[0]?.clientConfig).toEqual({
      url: 'https://127.0.0.1:9443/validate-example-com-v1-widget',
    });
    expect(() => webhookConfigurations(webhookRegistrations(mgr), {})).toThrow(/give service or url/);
    expect(
      crdConversionPatch('widgets.example.com', { url: 'https://127.0.0.1:9443', caBundle: 'Q0E=' }),
    ).toEqual({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.example.com' },
      spec: {
        conversion: {
          strategy: 'Webhook',
          webhook: {
            clientConfig: { url: 'https://127.0.0.1:9443/convert', caBundle: 'Q0E=' },
            conversionReviewVersions: ['v1'],
          },
        },
      },
    });
  });
});

describe('defineWebhook', () => {
  it('serves through from() what the declaration registers, with a declared plural', () => {
    const Gadget = { ...kind<Widget>('example.com/v1', 'Gadget'), plural: 'gadgetry' };
    const decl = defineWebhook({
      for: Gadget,
      validator: { validateDelete: () => undefined },
      conversion: (o) => o,
      settings: { timeoutSeconds: 3 },
    });
    expect(isWebhookDeclaration(decl)).toBe(true);
    expect(isWebhookDeclaration({ ...decl, webhookDeclaration: 'yes' })).toBe(false);
    const mgr = newManager(offline);
    getWebhookServer(mgr, { bindAddress: '0' });
    const reg = newWebhookManagedBy(mgr).from(decl).complete();
    expect(reg).toEqual(decl.registration);
    expect(reg).toMatchObject({
      plural: 'gadgetry',
      validatePath: '/validate-example-com-v1-gadget',
      validateOperations: ['CREATE', 'UPDATE', 'DELETE'],
      convertible: true,
    });
    expect(getWebhookServer(mgr).paths().sort()).toEqual(['/convert', '/validate-example-com-v1-gadget']);
    const out = decl.renderManifests([decl], { url: 'https://127.0.0.1:9443' });
    expect(out.map((m) => `${m.kind}/${m.metadata.name}`)).toEqual([
      'ValidatingWebhookConfiguration/kubeloop-webhook-configuration',
      'CustomResourceDefinition/gadgetry.example.com',
    ]);
    expect(out).toEqual(webhookManifests([reg], { url: 'https://127.0.0.1:9443' }));
    expect(() => defineWebhook({ for: Gadget })).toThrow(/no validator, defaulter or conversion/);
    expect(() => defineWebhook({ for: Gadget, validator: {}, settings: { timeoutSeconds: 31 } })).toThrow(
      /timeoutSeconds: must be an integer from 1 to 30, got 31/,
    );
  });
});

/**
 * Admission webhooks through the real stack: a manager serves a Widget defaulter and validator over HTTPS
 * (self-signed certificates kept in a Secret, caBundle injected), the configurations are generated from the
 * registrations, and envtest calls the webhooks on writes as kube-apiserver does. envtest-only: it resolves
 * the webhook Service to the local server and injects webhook faults (the real-cluster trial is manual,
 * see docs/webhooks.md).
 */
import { newManager } from '@kubeloop/builder';
import { type ApiClient, type KubeObject, kind, Namespace, newClient, StatusError } from '@kubeloop/client';
import type { RestConfig } from '@kubeloop/config';
import { type ApiServer, startApiServer } from '@kubeloop/envtest';
import {
  AdmissionDeniedError,
  getWebhookServer,
  newWebhookManagedBy,
  SelfSignedCertificates,
  serviceDNSNames,
  type WebhookServer,
  webhookConfigurations,
  webhookRegistrations,
} from '@kubeloop/webhook';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

interface Widget extends KubeObject {
  spec?: { size?: number; color?: string };
}
const Widget = kind<Widget>('example.com/v1', 'Widget');
const CRD = kind('apiextensions.k8s.io/v1', 'CustomResourceDefinition');
interface WebhookConfiguration extends KubeObject {
  // biome-ignore lint/suspicious/noExplicitAny: the test reads and rewrites webhook entries freely
  webhooks: any[];
}
const Validating = kind<WebhookConfiguration>(
  'admissionregistration.k8s.io/v1',
  'ValidatingWebhookConfiguration',
);
const Mutating = kind<WebhookConfiguration>(
  'admissionregistration.k8s.io/v1',
  'MutatingWebhookConfiguration',
);

const widgetSchema = {
  openAPIV3Schema: {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        required: ['color'],
        properties: { size: { type: 'integer' }, color: { type: 'string' } },
      },
    },
  },
};

let server: ApiServer;
let web: WebhookServer;
let api: ApiClient;
let warnings: string[] = [];
let caBundle = '';
const stop = new AbortController();
let running: Promise<void>;
const sideEffectsLog: string[] = [];

beforeAll(async () => {
  server = await startApiServer({
    webhooks: {
      resolveService: (s) => (s.name === 'widget-webhook' ? `https://127.0.0.1:${web.port()}` : undefined),
    },
  });
  const config: RestConfig = {
    host: server.url,
    tlsClientConfig: { caData: server.caPem },
    bearerToken: server.token,
    qps: -1,
    burst: 0,
    timeoutMs: 0,
    userAgent: 'webhook-it',
  };
  api = newClient(config, { transport: { warningHandler: { handleWarning: (m) => warnings.push(m) } } });
  await api.create(CRD, {
    apiVersion: CRD.apiVersion,
    kind: CRD.kind,
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      names: { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' },
      scope: 'Namespaced',
      versions: [
        { name: 'v1', served: true, storage: true, schema: widgetSchema, subresources: { status: {} } },
      ],
    },
  } as KubeObject);
  await vi.waitFor(() => api.list(Widget));

  const mgr = newManager(config);
  const certs = new SelfSignedCertificates({
    client: newClient(config),
    secret: { name: 'widget-webhook-certs', namespace: 'default' },
    names: [...serviceDNSNames('widget-webhook', 'system'), '127.0.0.1'],
    checkIntervalMs: 0,
  });
  web = getWebhookServer(mgr, { bindAddress: '127.0.0.1:0', certificateSource: certs });
  newWebhookManagedBy(mgr)
    .for(Widget)
    .withDefaulter({
      default(w, ctx) {
        if (!ctx.dryRun) sideEffectsLog.push(`default ${w.metadata?.name}`);
        w.spec ??= {};
        w.spec.color ??= 'blue';
        w.metadata ??= {};
        w.metadata.labels = { ...w.metadata.labels, 'defaulted-by': 'webhook' };
      },
    })
    .withValidator({
      validateCreate(w) {
        if (w.metadata?.name === 'throws') throw new Error('boom in the validator');
        if ((w.spec?.size ?? 1) <= 0)
          throw AdmissionDeniedError.invalid(Widget, w.metadata?.name ?? '', [
            { field: 'spec.size', message: `Invalid value: ${w.spec?.size}: must be positive` },
          ]);
        return w.spec?.size === undefined ? ['spec.size is unset: one widget assumed'] : [];
      },
      validateUpdate(oldW, newW, ctx) {
        if (ctx.subResource === 'status') return ['status updated'];
        if (oldW.spec?.color !== newW.spec?.color) throw new AdmissionDeniedError('spec.color is immutable');
        return undefined;
      },
      validateDelete(w) {
        if (w.metadata?.labels?.protected === 'true')
          throw new AdmissionDeniedError(`widget ${w.metadata.name} is protected`);
        return undefined;
      },
    })
    .withSettings({ timeoutSeconds: 5 })
    .complete();
  running = mgr.start(stop.signal);
  await web.ready();
  caBundle = certs.caBundle();
  for (const cfg of webhookConfigurations(webhookRegistrations(mgr), {
    name: 'widgets',
    service: { name: 'widget-webhook', namespace: 'system' },
    caBundle,
  }))
    await api.create(kind(cfg.apiVersion, cfg.kind), cfg);
}, 120_000);

afterAll(async () => {
  stop.abort();
  await running;
  await server?.stop();
});

async function ns(name: string, labels: Record<string, string> = {}): Promise<string> {
  await api.create(Namespace, { metadata: { name, labels } });
  return name;
}

const widget = (
  namespace: string,
  name: string,
  spec: Widget['spec'],
  labels: Record<string, string> = {},
): Widget => ({
  apiVersion: Widget.apiVersion,
  kind: Widget.kind,
  metadata: { name, namespace, labels },
  spec,
});

async function failure(p: Promise<unknown>): Promise<StatusError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(StatusError);
  return e as StatusError;
}

describe('webhook admission through envtest', () => {
  it('webhook-deny: an invalid Widget is denied with the validator message and field causes', async () => {
    const n = await ns('wh-deny');
    const e = await failure(api.create(Widget, widget(n, 'w0', { size: 0 })));
    expect(e.status.code).toBe(422);
    expect(e.status.reason).toBe('Invalid');
    expect(e.status.message).toBe(
      'admission webhook "vwidget-v1.example.com" denied the request: Widget.example.com "w0" is invalid: spec.size: Invalid value: 0: must be positive',
    );
    expect(e.status.details?.causes).toEqual([
      { reason: 'FieldValueInvalid', field: 'spec.size', message: 'Invalid value: 0: must be positive' },
    ]);
    await expect(api.get(Widget, { namespace: n, name: 'w0' })).rejects.toThrow(/not found/);
  });

  it('webhook-default: a missing field is defaulted through the computed patch before schema validation; warnings reach the client', async () => {
    const n = await ns('wh-default');
    warnings = [];
    // spec.color is required by the schema: the defaulter's patch adds it before validation
    const created = await api.create(Widget, widget(n, 'w1', {}));
    expect(created.spec).toEqual({ color: 'blue' });
    expect(created.metadata?.labels).toEqual({ 'defaulted-by': 'webhook' });
    expect(warnings).toContain('spec.size is unset: one widget assumed');
    const got = await api.get(Widget, { namespace: n, name: 'w1' });
    expect(got.spec?.color).toBe('blue');
  });

  it('webhook-update-delete: UPDATE and patches get the old object, DELETE is validated', async () => {
    const n = await ns('wh-update');
    const w = await api.create(Widget, widget(n, 'w2', { size: 2, color: 'red' }, { protected: 'true' }));
    const e = await failure(api.update(Widget, { ...w, spec: { size: 2, color: 'green' } }));
    expect(e.status.code).toBe(403);
    expect(e.status.message).toBe(
      'admission webhook "vwidget-v1.example.com" denied the request: spec.color is immutable',
    );
    const merged = await api.patch(
      Widget,
      { namespace: n, name: 'w2' },
      { type: 'merge', data: { spec: { size: 3 } } },
    );
    expect(merged.spec).toEqual({ size: 3, color: 'red' });
    const patchDenied = await failure(
      api.patch(Widget, { namespace: n, name: 'w2' }, { type: 'merge', data: { spec: { color: 'pink' } } }),
    );
    expect(patchDenied.status.message).toMatch(/spec.color is immutable/);
    const del = await failure(api.delete(Widget, { namespace: n, name: 'w2' }));
    expect(del.status.message).toBe(
      'admission webhook "vwidget-v1.example.com" denied the request: widget w2 is protected',
    );
    await api.patch(
      Widget,
      { namespace: n, name: 'w2' },
      { type: 'merge', data: { metadata: { labels: { protected: null } } } },
    );
    await api.delete(Widget, { namespace: n, name: 'w2' });
  });

  it('webhook-throw: a webhook that throws answers 500 naming it, and the server goes on serving', async () => {
    const n = await ns('wh-throw');
    const e = await failure(api.create(Widget, widget(n, 'throws', { size: 1 })));
    expect(e.status.code).toBe(500);
    expect(e.status.message).toBe(
      'admission webhook "vwidget-v1.example.com" denied the request: webhook "validate-example-com-v1-widget" failed: boom in the validator',
    );
    expect((await api.create(Widget, widget(n, 'after', { size: 1 }))).metadata?.name).toBe('after');
  });

  it('webhook-dry-run: a dry run with sideEffects None calls the webhooks and persists nothing; sideEffects Some refuses', async () => {
    const n = await ns('wh-dryrun');
    sideEffectsLog.length = 0;
    const dry = await api.create(Widget, widget(n, 'dry', {}), { dryRun: true });
    expect(dry.spec?.color).toBe('blue');
    expect(sideEffectsLog).toEqual([]);
    await expect(api.get(Widget, { namespace: n, name: 'dry' })).rejects.toThrow(/not found/);
    const v = (await api.get(Validating, { name: 'widgets' })) as KubeObject & {
      webhooks: { sideEffects: string }[];
    };
    await api.update(Validating, { ...v, webhooks: v.webhooks.map((h) => ({ ...h, sideEffects: 'Some' })) });
    try {
      const e = await failure(api.create(Widget, widget(n, 'dry2', { size: 1 }), { dryRun: true }));
      expect(e.status.code).toBe(400);
      expect(e.status.message).toBe('admission webhook "vwidget-v1.example.com" does not support dry run');
    } finally {
      const again = (await api.get(Validating, { name: 'widgets' })) as KubeObject & {
        webhooks: { sideEffects: string }[];
      };
      await api.update(Validating, {
        ...again,
        webhooks: again.webhooks.map((h) => ({ ...h, sideEffects: 'None' })),
      });
    }
  });

  it('webhook-failure-policy: with the webhook down, Fail refuses the write and Ignore lets it through', async () => {
    const n = await ns('wh-down');
    server.admission.faults.inject('vwidget-v1.example.com', { type: 'refusing' });
    try {
      const e = await failure(api.create(Widget, widget(n, 'refused', { size: 1 })));
      expect(e.status.code).toBe(500);
      expect(e.status.reason).toBe('InternalError');
      expect(e.status.message).toMatch(
        /^Internal error occurred: failed calling webhook "vwidget-v1.example.com": failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/validate-example-com-v1-widget\?timeout=5s": dial tcp 127\.0\.0\.1:\d+: connect: connection refused$/,
      );
      const v = (await api.get(Validating, { name: 'widgets' })) as KubeObject & {
        webhooks: { failurePolicy: string }[];
      };
      await api.update(Validating, {
        ...v,
        webhooks: v.webhooks.map((h) => ({ ...h, failurePolicy: 'Ignore' })),
      });
      expect((await api.create(Widget, widget(n, 'ignored', { size: 0 }))).metadata?.name).toBe('ignored');
      // a webhook URL nobody listens on: a real connection error, same policy
      const v2 = (await api.get(Validating, { name: 'widgets' })) as KubeObject & {
        webhooks: { failurePolicy: string; clientConfig: Record<string, unknown> }[];
      };
      server.admission.faults.clear();
      await api.update(Validating, {
        ...v2,
        webhooks: v2.webhooks.map((h) => ({
          ...h,
          failurePolicy: 'Fail',
          clientConfig: { url: 'https://127.0.0.1:1/validate', caBundle },
        })),
      });
      const down = await failure(api.create(Widget, widget(n, 'down', { size: 1 })));
      expect(down.status.message).toMatch(
        /failed calling webhook "vwidget-v1.example.com".*connection refused/,
      );
      // slow past timeoutSeconds under Fail: refused with a deadline
      const v3 = (await api.get(Validating, { name: 'widgets' })) as KubeObject & {
        webhooks: Record<string, unknown>[];
      };
      await api.update(Validating, { ...v3, webhooks: v2.webhooks });
      server.admission.faults.inject('vwidget-v1.example.com', { type: 'slow', delayMs: 60_000 });
      const slowHook = (await api.get(Validating, { name: 'widgets' })) as KubeObject & {
        webhooks: { timeoutSeconds: number; failurePolicy: string }[];
      };
      await api.update(Validating, {
        ...slowHook,
        webhooks: slowHook.webhooks.map((h) => ({ ...h, timeoutSeconds: 1, failurePolicy: 'Fail' })),
      });
      const slow = await failure(api.create(Widget, widget(n, 'slow', { size: 1 })));
      expect(slow.status.message).toMatch(/context deadline exceeded/);
    } finally {
      server.admission.faults.clear();
      const v = (await api.get(Validating, { name: 'widgets' })) as KubeObject & {
        webhooks: Record<string, unknown>[];
      };
      await api.update(Validating, {
        ...v,
        webhooks: v.webhooks.map((h) => ({
          ...h,
          failurePolicy: 'Fail',
          timeoutSeconds: 5,
          clientConfig: {
            service: {
              name: 'widget-webhook',
              namespace: 'system',
              path: '/validate-example-com-v1-widget',
              port: 443,
            },
            caBundle,
          },
        })),
      });
    }
  });

  it('webhook-selectors: namespaceSelector and objectSelector decide which writes are sent', async () => {
    const on = await ns('wh-sel-on', { webhooks: 'on' });
    const off = await ns('wh-sel-off');
    const m = (await api.get(Mutating, { name: 'widgets' })) as KubeObject & {
      webhooks: Record<string, unknown>[];
    };
    await api.update(Mutating, {
      ...m,
      webhooks: m.webhooks.map((h) => ({
        ...h,
        namespaceSelector: { matchLabels: { webhooks: 'on' } },
        objectSelector: { matchExpressions: [{ key: 'skip-defaults', operator: 'DoesNotExist' }] },
      })),
    });
    try {
      expect((await api.create(Widget, widget(on, 'a', { color: 'x' }))).metadata?.labels).toEqual({
        'defaulted-by': 'webhook',
      });
      expect((await api.create(Widget, widget(off, 'b', { color: 'x' }))).metadata?.labels).toBeUndefined();
      expect(
        (await api.create(Widget, widget(on, 'c', { color: 'x' }, { 'skip-defaults': '1' }))).metadata
          ?.labels,
      ).toEqual({ 'skip-defaults': '1' });
      // not defaulted: the schema's required color is missing
      const e = await failure(api.create(Widget, widget(off, 'd', {})));
      expect(e.status.code).toBe(422);
    } finally {
      const again = (await api.get(Mutating, { name: 'widgets' })) as KubeObject & {
        webhooks: Record<string, unknown>[];
      };
      await api.update(Mutating, {
        ...again,
        webhooks: again.webhooks.map(({ namespaceSelector: _n, objectSelector: _o, ...h }) => h),
      });
    }
  });
});

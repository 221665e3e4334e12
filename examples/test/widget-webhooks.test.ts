// The webhook example end to end against envtest: `kubeloop crd generate` and `kubeloop webhook generate` write
// the CRD and the webhook configurations (with the conversion stanza) from examples/src/widget-webhooks.ts, a
// manager serves the declared webhooks with a self-signed certificate, and envtest calls them as kube-apiserver
// does: the defaulter's patch, the validator's denial (422 with its cause) and warning, and v1alpha1 ⇄ v1
// conversion on create, get and list. envtest only: its webhook Service resolves to the local server.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { newManager } from '@kubeloop/builder';
import {
  type ApiClient,
  isInvalid,
  type KubeObject,
  kind,
  Namespace,
  newClient,
  Secret,
  type StatusError,
} from '@kubeloop/client';
import { runCli } from '@kubeloop/crd';
import { Environment } from '@kubeloop/envtest';
import { getWebhookServer, SelfSignedCertificates, type WebhookServer } from '@kubeloop/webhook';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { addWidgetWebhooks, v1alpha1Spoke, Widget, WidgetV1alpha1 } from '../src/widget-webhooks.js';

const module = fileURLToPath(new URL('../src/widget-webhooks.ts', import.meta.url));

async function cli(argv: string[], cwd: string): Promise<string> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, { cwd, stdout: (t) => out.push(t), stderr: (t) => err.push(t) });
  expect(code, err.join('')).toBe(0);
  return out.join('');
}
const docs = (yaml: string) =>
  parseAllDocuments(yaml).map((d) => (Array.isArray(d) ? undefined : d.toJS())) as KubeObject[];

describe('example: webhooks for a two-version kind (Widget)', () => {
  let env: Environment;
  let client: ApiClient;
  let web: WebhookServer;
  let ns: string;
  const warnings: string[] = [];
  const stop = new AbortController();
  let running: Promise<void>;

  // USE_EXISTING_CLUSTER=true runs it against a real cluster that can reach this process: the webhooks' clientConfig
  // is then a URL on 127.0.0.1 (a real API server cannot resolve the Service to us), and what it creates goes again
  const existing = process.env.USE_EXISTING_CLUSTER === 'true';
  const cleanUp: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    env = new Environment({
      useExistingCluster: existing,
      server: {
        webhooks: {
          resolveService: (s) =>
            s.name === 'widget-webhook' ? `https://127.0.0.1:${web.port()}` : undefined,
        },
      },
    });
    await env.start();
    client = newClient(env.config, {
      transport: { warningHandler: { handleWarning: (m) => warnings.push(m) } },
    });
    const mgr = newManager(env.config);
    const certs = new SelfSignedCertificates({
      client: newClient(env.config),
      secret: { name: 'widget-webhook-certs', namespace: 'default' },
      names: ['127.0.0.1'],
      checkIntervalMs: 0,
    });
    web = getWebhookServer(mgr, { bindAddress: '127.0.0.1:0', certificateSource: certs });
    addWidgetWebhooks(mgr);
    running = mgr.start(stop.signal);
    await web.ready();

    // what a project's `npm run generate` writes, then installs
    const dir = mkdtempSync(path.join(tmpdir(), 'widget-webhooks-'));
    writeFileSync(path.join(dir, 'ca.crt'), Buffer.from(certs.caBundle(), 'base64'));
    const [crd] = docs(await cli(['crd', 'generate', module, '--stdout'], dir));
    const manifests = docs(
      await cli(
        [
          'webhook',
          'generate',
          module,
          '--stdout',
          ...(existing
            ? ['--url', `https://127.0.0.1:${web.port()}`]
            : ['--service', 'system/widget-webhook']),
          '--ca-bundle',
          'ca.crt',
        ],
        dir,
      ),
    );
    const conversion = manifests.find((m) => m.kind === 'CustomResourceDefinition') as
      | { spec: object }
      | undefined;
    expect(conversion?.spec).toMatchObject({ conversion: { strategy: 'Webhook' } });
    const withConversion = {
      ...crd,
      spec: { ...(crd as { spec: object }).spec, ...conversion?.spec },
    } as KubeObject;
    const CRD = kind('apiextensions.k8s.io/v1', 'CustomResourceDefinition');
    const installed = [
      [CRD, withConversion] as const,
      ...manifests
        .filter((x) => x.kind !== 'CustomResourceDefinition')
        .map((m) => [kind(m.apiVersion as string, m.kind as string), m as KubeObject] as const),
    ];
    for (const [k, o] of installed) {
      const name = o.metadata?.name ?? '';
      if (existing) cleanUp.push(() => client.delete(k, { name }).catch(() => undefined));
      await client.create(k, o);
    }
    await vi.waitFor(() => client.list(WidgetV1alpha1), { timeout: 30_000 });
    ns = `widgets-${process.pid}-${randomBytes(3).toString('hex')}`;
    await client.create(Namespace, { metadata: { name: ns } });
    if (existing) cleanUp.push(() => client.delete(Namespace, { name: ns }).catch(() => undefined));
  }, 120_000);

  afterAll(async () => {
    stop.abort();
    await running;
    for (const undo of cleanUp) await undo();
    if (existing)
      await client
        .delete(Secret, { namespace: 'default', name: 'widget-webhook-certs' })
        .catch(() => undefined);
    await env?.stop();
  });

  it('defaults a missing color through the computed patch', async () => {
    const w = await client.create(Widget, {
      apiVersion: Widget.apiVersion,
      kind: 'Widget',
      metadata: { name: 'plain', namespace: ns },
      spec: { size: 2 },
    });
    expect(w.spec).toEqual({ size: 2, color: 'blue' });
  });

  it("denies a widget that is too large with the validator's cause, and warns about a red one", async () => {
    const err = (await client
      .create(Widget, {
        apiVersion: Widget.apiVersion,
        kind: 'Widget',
        metadata: { name: 'huge', namespace: ns },
        spec: { size: 11 },
      })
      .catch((e: unknown) => e)) as StatusError;
    expect(isInvalid(err)).toBe(true);
    expect(err.status.details?.causes).toEqual([
      { field: 'spec.size', message: 'Invalid value: 11: must be at most 10', reason: 'FieldValueInvalid' },
    ]);
    await client.create(Widget, {
      apiVersion: Widget.apiVersion,
      kind: 'Widget',
      metadata: { name: 'red', namespace: ns },
      spec: { size: 1, color: 'red' },
    });
    expect(warnings).toContain('spec.color: red widgets fade in the sun');
  });

  it('converts v1alpha1 to v1 and back on create, get and list', async () => {
    const old = await client.create(WidgetV1alpha1, {
      apiVersion: WidgetV1alpha1.apiVersion,
      kind: 'Widget',
      metadata: { name: 'old', namespace: ns },
      spec: { size: 3, colour: 'green' },
    });
    expect(old.spec).toEqual({ size: 3, colour: 'green' });
    expect((await client.get(Widget, { namespace: ns, name: 'old' })).spec).toEqual({
      size: 3,
      color: 'green',
    });
    // A v1 widget of this test's own (not the first test's 'plain': under --sequence.shuffle this test can run
    // first, and failed a shuffled soak run that way), read back through v1alpha1 in a list.
    await client.create(Widget, {
      apiVersion: Widget.apiVersion,
      kind: 'Widget',
      metadata: { name: 'hub', namespace: ns },
      spec: { size: 2 },
    });
    const listed = await client.list(WidgetV1alpha1, { namespace: ns });
    expect(listed.items.find((w) => w.metadata?.name === 'hub')?.spec).toEqual({ size: 2, colour: 'blue' });
  });

  it('the spoke conversion round-trips every v1alpha1 and v1 spec (property)', () => {
    const { toHub, fromHub } = v1alpha1Spoke;
    const meta = { name: 'w', namespace: 'n' };
    const size = fc.integer({ min: 1, max: 1000 });
    fc.assert(
      fc.property(size, fc.option(fc.string(), { nil: undefined }), (s, c) => {
        const spoke = {
          apiVersion: WidgetV1alpha1.apiVersion,
          kind: 'Widget',
          metadata: meta,
          spec: { size: s, ...(c === undefined ? {} : { colour: c }) },
        };
        const hub = {
          apiVersion: Widget.apiVersion,
          kind: 'Widget',
          metadata: meta,
          spec: { size: s, ...(c === undefined ? {} : { color: c }) },
        };
        expect(fromHub(toHub(spoke))).toEqual(spoke);
        expect(toHub(fromHub(hub))).toEqual(hub);
      }),
    );
  });
});

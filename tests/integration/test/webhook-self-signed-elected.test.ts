/**
 * Self-signed webhook certificates with leader-gated CA injection, through leader-elected managers against
 * envtest, wired as docs/webhooks.md shows: `SelfSignedCertificates({ elected: () => mgr.elected() })` served by
 * the manager's own webhook server. The webhook server starts (and needs its certificate) before the manager
 * campaigns for the lease, so the certificate source must serve without waiting for leadership, and inject the
 * CA bundle once this replica leads: a standby serves the shared certificate and writes nothing; when the leader
 * stops and releases the lease, the standby takes over the injection.
 */
import { type Manager, newManager } from '@kubeloop/builder';
import { type KubeObject, kind, newClient } from '@kubeloop/client';
import type { RestConfig } from '@kubeloop/config';
import { type ApiServer, startApiServer } from '@kubeloop/envtest';
import { SteadyElection } from '@kubeloop/testing';
import { getWebhookServer, SelfSignedCertificates, type WebhookServer } from '@kubeloop/webhook';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

interface WebhookConfiguration extends KubeObject {
  webhooks: { name: string; clientConfig: { caBundle?: string; url?: string } }[];
}
const Validating = kind<WebhookConfiguration>(
  'admissionregistration.k8s.io/v1',
  'ValidatingWebhookConfiguration',
);

const CONFIGURATION = 'elected-widgets';
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
    userAgent: 'webhook-self-signed-elected-it',
  };
  await newClient(config).create(Validating, {
    apiVersion: Validating.apiVersion,
    kind: Validating.kind,
    metadata: { name: CONFIGURATION },
    webhooks: [
      {
        name: 'vwidget.example.com',
        clientConfig: { url: 'https://127.0.0.1:9/validate' },
        rules: [
          { apiGroups: ['example.com'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['widgets'] },
        ],
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        failurePolicy: 'Ignore',
      },
    ],
  } as unknown as WebhookConfiguration);
});

afterAll(async () => {
  await server?.stop();
});

interface Replica {
  readonly mgr: Manager;
  readonly certs: SelfSignedCertificates;
  readonly web: WebhookServer;
  readonly stop: AbortController;
  readonly running: Promise<void>;
}

// The replicas elect because CA injection is leader-gated, not to test election: their electors are on a steady
// election's clock, so a process starved of CPU for longer than a renew deadline cannot lose a lease mid-test.
// The Lease is released on stop, so the standby takes over at its next attempt.
const election = new SteadyElection();

/** One replica as docs/webhooks.md wires it; `fieldManager` tells its writes apart. */
function replica(identity: string): Replica {
  const mgr = newManager(config, {
    leaderElection: {
      id: 'webhook-certs',
      namespace: 'default',
      elector: election.elector(config, { identity, namespace: 'default', name: 'webhook-certs' }),
    },
  });
  const certs = new SelfSignedCertificates({
    client: newClient(config),
    secret: { name: 'elected-webhook-certs', namespace: 'default' },
    names: ['127.0.0.1'],
    checkIntervalMs: 0,
    inject: { validatingWebhookConfigurations: [CONFIGURATION] },
    elected: () => mgr.elected(),
    fieldManager: `injector-${identity}`,
  });
  const web = getWebhookServer(mgr, { bindAddress: '127.0.0.1:0', certificateSource: certs });
  const stop = new AbortController();
  const running = mgr.start(stop.signal);
  return { mgr, certs, web, stop, running };
}

/** The field managers that wrote the configuration's webhooks' caBundle, and the bundle itself. */
async function injection(): Promise<{ managers: string[]; caBundle: string | undefined }> {
  const cfg = await newClient(config).get(Validating, { name: CONFIGURATION });
  const managers = (cfg.metadata?.managedFields ?? [])
    .filter((f) => JSON.stringify(f.fieldsV1 ?? {}).includes('caBundle'))
    .map((f) => f.manager ?? '');
  return { managers, caBundle: cfg.webhooks[0]?.clientConfig.caBundle };
}

describe('webhook-self-signed-elected', () => {
  it('serves before election, injects the CA bundle only as the leader, and the standby takes over', async () => {
    // Before the fix this never got past ready(): the webhook server waited for its certificate, the
    // certificate waited for mgr.elected(), and the manager elects only after its HTTP servers are up.
    const a = replica('a');
    await a.web.ready();
    await a.mgr.elected();
    await expect
      .poll(injection, { timeout: 30_000 })
      .toEqual({ managers: ['injector-a'], caBundle: a.certs.caBundle() });

    // The standby serves the Secret's certificate (every replica serves webhooks) without writing the targets.
    const b = replica('b');
    await b.web.ready();
    expect(b.certs.current().cert).toBe(a.certs.current().cert);
    expect(b.certs.rotations).toBe(0);
    expect((await injection()).managers).toEqual(['injector-a']);

    // The leader stops and releases the lease: the standby is elected and injects with its own field manager.
    a.stop.abort();
    await a.running;
    await b.mgr.elected();
    await expect.poll(async () => (await injection()).managers, { timeout: 30_000 }).toContain('injector-b');
    expect((await injection()).caBundle).toBe(b.certs.caBundle());
    b.stop.abort();
    await b.running;
  }, 90_000);
});

// The schema-defined kind end to end: `kubeloop crd generate` writes the CRD from examples/src/webapp.ts, the
// Environment installs it (envtest, or with USE_EXISTING_CLUSTER=true the cluster of the kubeconfig), and the
// controller reconciles WebApps into ConfigMaps, status and Events. The server refuses what the schema refuses.

import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { newManager } from '@kubeloop/builder';
import {
  type ApiClient,
  ConfigMap,
  isInvalid,
  kind,
  Namespace,
  newClient,
  retryOnConflict,
  type StatusError,
} from '@kubeloop/client';
import { runCli, validate } from '@kubeloop/crd';
import { Environment } from '@kubeloop/envtest';
import { SteadyElection } from '@kubeloop/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { addWebAppController, configMapNameFor, WebApp, type WebAppObject } from '../src/webapp.js';

const module = fileURLToPath(new URL('../src/webapp.ts', import.meta.url));
const EventV1 = kind<{ metadata?: { name?: string }; reason?: string; regarding?: { name?: string } }>(
  'events.k8s.io/v1',
  'Event',
);

describe('example: a schema-defined kind (WebApp)', () => {
  let env: Environment;
  let client: ApiClient;
  let ns: string;
  beforeAll(async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'webapp-crd-'));
    const err: string[] = [];
    const code = await runCli(['crd', 'generate', module, '--out', dir], {
      cwd: dir,
      stdout: () => {},
      stderr: (t) => err.push(t),
    });
    expect(code, err.join('')).toBe(0);
    expect(readdirSync(dir)).toEqual(['examples.kubeloop.dev_webapps.yaml']);
    env = new Environment({ crdDirectoryPaths: [dir] });
    await env.start();
    client = newClient(env.config);
    ns = `webapp-${process.pid}-${randomBytes(3).toString('hex')}`;
    await client.create(Namespace, { metadata: { name: ns } });
  }, 120_000);
  afterAll(async () => {
    await client?.delete(Namespace, { name: ns }).catch(() => undefined);
    await client?.close();
    await env?.stop();
  });

  it('the controller keeps a ConfigMap, writes status and records an Event; a spec change updates the ConfigMap', async () => {
    const mgr = newManager(env.config, {
      cache: { defaultNamespaces: [ns] },
      // Elected as the example deploys it; the test is about the controller, not election: a SteadyElection's
      // clock waits for each Lease request, so a process starved of CPU cannot make a renew late and lose the
      // lease mid-test (the defaults' 10 s renew deadline on the real clock could). It releases on stop.
      leaderElection: {
        id: 'webapp-example',
        namespace: ns,
        elector: new SteadyElection().elector(env.config, {
          identity: 'webapp-test',
          namespace: ns,
          name: 'webapp-example',
        }),
      },
      metrics: { bindAddress: '0' },
      health: { bindAddress: '0' },
    });
    addWebAppController(mgr);
    const stop = new AbortController();
    const done = mgr.start(stop.signal);
    try {
      await client.create(WebApp, {
        metadata: { namespace: ns, name: 'shop' },
        spec: { image: 'registry.example.com/shop:1' },
      });
      const key = { namespace: ns, name: configMapNameFor('shop') };
      await vi.waitFor(
        async () =>
          expect((await client.get(ConfigMap, key)).data?.image).toBe('registry.example.com/shop:1'),
        {
          timeout: 30_000,
          interval: 100,
        },
      );
      const cm = await client.get(ConfigMap, key);
      expect(cm.data).toEqual({ image: 'registry.example.com/shop:1', replicas: '1', message: '' });
      expect(cm.metadata?.ownerReferences?.[0]).toMatchObject({
        kind: 'WebApp',
        name: 'shop',
        controller: true,
      });
      await vi.waitFor(
        async () =>
          expect((await client.get(WebApp, { namespace: ns, name: 'shop' })).status?.configMap).toBe(
            key.name,
          ),
        {
          timeout: 30_000,
          interval: 100,
        },
      );
      await vi.waitFor(
        async () =>
          expect((await client.list(EventV1, { namespace: ns })).items.map((e) => e.reason)).toContain(
            'ConfigMapWritten',
          ),
        { timeout: 30_000, interval: 200 },
      );
      // the controller writes status meanwhile: an update can conflict, read again and retry
      await retryOnConflict(async () => {
        const app = await client.get(WebApp, { namespace: ns, name: 'shop' });
        await client.update(WebApp, { ...app, spec: { ...app.spec, replicas: 3, message: 'hello' } });
      });
      await vi.waitFor(async () => expect((await client.get(ConfigMap, key)).data?.replicas).toBe('3'), {
        timeout: 30_000,
        interval: 100,
      });
      await vi.waitFor(
        async () =>
          expect((await client.get(WebApp, { namespace: ns, name: 'shop' })).status?.observedGeneration).toBe(
            2,
          ),
        { timeout: 30_000, interval: 100 },
      );
    } finally {
      stop.abort();
      await done;
    }
  });

  it('the server refuses what the schema refuses, on the fields validate() names, and runs the CEL rule', async () => {
    const bad = {
      metadata: { namespace: ns, name: 'bad' },
      spec: { image: 'docker.io/shop:1', replicas: 11 },
    } satisfies WebAppObject;
    expect(validate(WebApp, bad).map((e) => e.message)).toEqual([
      'spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10',
    ]);
    const err = (await client.create(WebApp, bad).catch((e: unknown) => e)) as StatusError;
    expect(isInvalid(err)).toBe(true);
    const causes = (err.status?.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`);
    expect(causes).toContain(
      'spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10',
    );
    // the CEL rule (not evaluated in-process): the server's message for it
    expect(
      causes.some((c) => c.startsWith('spec: ') && c.includes('images come from registry.example.com')),
    ).toBe(true);
  });
});

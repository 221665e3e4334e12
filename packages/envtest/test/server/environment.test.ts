import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { inspect } from 'node:util';
import { Agent, request } from 'undici';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { Environment } from '../../src/index.js';

describe('Environment (embedded mode)', () => {
  it('starts, gives a RestConfig and a 0600 kubeconfig, and stops', async () => {
    const env = new Environment({ env: {} });
    const config = await env.start();
    try {
      expect(env.mode).toBe('embedded');
      expect(config.host).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect(config.tlsClientConfig.caData).toContain('BEGIN CERTIFICATE');
      expect(config.bearerToken).toBeTruthy();
      // Frozen and redacted like every RestConfig @kubeloop/config builds.
      expect(Object.isFrozen(config)).toBe(true);
      for (const shown of [String(config), JSON.stringify(config), inspect(config)]) {
        expect(shown).not.toContain(config.bearerToken!);
      }
      expect(env.server).toBeDefined();
      const st = await stat(env.kubeconfigPath);
      expect(st.mode & 0o777).toBe(0o600);
      const dispatcher = new Agent({ connect: { ca: config.tlsClientConfig.caData } });
      const res = await request(`${config.host}/api/v1/namespaces`, {
        headers: { authorization: `Bearer ${config.bearerToken}` },
        dispatcher,
      });
      const body = (await res.body.json()) as { items: { metadata: { name: string } }[] };
      expect(res.statusCode).toBe(200);
      expect(body.items.map((n) => n.metadata.name)).toEqual([
        'default',
        'kube-node-lease',
        'kube-public',
        'kube-system',
      ]);
      await dispatcher.close();
    } finally {
      await env.stop();
    }
    expect(env.server).toBeUndefined();
  });
});

describe('Environment: start() twice (controller-runtime: Start on a started process is a no-op)', () => {
  const healthz = async (host: string, ca: string): Promise<string> => {
    const dispatcher = new Agent({ connect: { ca } });
    try {
      const res = await request(`${host}/healthz`, { dispatcher });
      await res.body.text();
      return `HTTP ${res.statusCode}`;
    } catch (e) {
      return `unreachable (${(e as { code?: string }).code ?? String(e)})`;
    } finally {
      await dispatcher.close();
    }
  };

  it('a second start() after the first resolves to the same config and server; one stop() ends it and removes the kubeconfig dir', async () => {
    const env = new Environment({ env: {} });
    const first = await env.start();
    const server = env.server;
    const kubeconfig = env.kubeconfigPath;
    const second = await env.start();
    expect(second).toBe(first);
    expect(env.server).toBe(server);
    await env.stop();
    expect(env.server).toBeUndefined();
    expect(await healthz(first.host, first.tlsClientConfig.caData!)).toMatch(/^unreachable/);
    await expect(stat(kubeconfig)).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(stat(join(kubeconfig, '..'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('concurrent start() calls start one server; stop() during a start waits for it and stops it', async () => {
    const env = new Environment({ env: {} });
    const [a, b] = await Promise.all([env.start(), env.start()]);
    expect(b).toBe(a);
    await env.stop();
    expect(await healthz(a.host, a.tlsClientConfig.caData!)).toMatch(/^unreachable/);

    const pending = env.start();
    await env.stop();
    const c = await pending;
    expect(env.server).toBeUndefined();
    expect(await healthz(c.host, c.tlsClientConfig.caData!)).toMatch(/^unreachable/);
    // after stop() a start() starts afresh
    const d = await env.start();
    try {
      expect(d.host).not.toBe(a.host);
      expect(await healthz(d.host, d.tlsClientConfig.caData!)).toBe('HTTP 200');
    } finally {
      await env.stop();
    }
  });
});

describe('Environment: CRDs from files, existing cluster, control plane assets', () => {
  it('installs CRDs from a directory (multi-document YAML) and waits until they are Established', async () => {
    const { mkdtemp, writeFile } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = await mkdtemp(join(tmpdir(), 'crds-'));
    const crd = (plural: string, kind: string) => `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ${plural}.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: ${plural}, kind: ${kind}}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`;
    await writeFile(join(dir, 'a.yaml'), `${crd('gizmos', 'Gizmo')}---\n${crd('gadgets', 'Gadget')}`);
    await writeFile(join(dir, 'ignored.txt'), 'not a manifest');
    const env = new Environment({ crdDirectoryPaths: [dir], env: {} });
    const config = await env.start();
    try {
      const dispatcher = new Agent({ connect: { ca: config.tlsClientConfig.caData } });
      for (const plural of ['gizmos', 'gadgets']) {
        const res = await request(`${config.host}/apis/example.com/v1/namespaces/default/${plural}`, {
          headers: { authorization: `Bearer ${config.bearerToken}` },
          dispatcher,
        });
        await res.body.text();
        expect(res.statusCode).toBe(200);
      }
      await dispatcher.close();
    } finally {
      await env.stop();
    }
  });

  it('fails start() when a CRD path is missing and errorIfCrdPathMissing is set', async () => {
    const env = new Environment({
      crdDirectoryPaths: ['/nonexistent/crds'],
      errorIfCrdPathMissing: true,
      env: {},
    });
    await expect(env.start()).rejects.toMatchObject({ code: 'ENVTEST_CRD_INSTALL' });
  });

  it('USE_EXISTING_CLUSTER=true uses the kubeconfig from KUBECONFIG instead of starting a server', async () => {
    const outer = new Environment({ env: {} });
    await outer.start();
    try {
      const env = new Environment({
        env: { USE_EXISTING_CLUSTER: 'true', KUBECONFIG: outer.kubeconfigPath },
      });
      const config = await env.start();
      expect(env.mode).toBe('existing-cluster');
      expect(env.server).toBeUndefined();
      expect(config.host).toBe(outer.config.host);
      expect(config.bearerToken).toBe(outer.config.bearerToken);
      expect(config.tlsClientConfig.caData).toBe(outer.config.tlsClientConfig.caData);
      await env.stop();
      // stopping an existing-cluster environment leaves the cluster running
      const dispatcher = new Agent({ connect: { ca: config.tlsClientConfig.caData } });
      const res = await request(`${config.host}/version`, { dispatcher });
      await res.body.text();
      expect(res.statusCode).toBe(200);
      await dispatcher.close();
    } finally {
      await outer.stop();
    }
  });

  it('installing CRDs waits until discovery lists them, not only for Established (kube-apiserver adds them to discovery asynchronously)', async () => {
    const outer = new Environment({ env: {} });
    await outer.start();
    try {
      // The group version's discovery document answers 404 three times, as a real server does between
      // Established and its discovery controller's sync.
      const gv = '/apis/lagging.example.com/v1';
      outer.server!.faults.failRequests({ match: { method: 'GET', path: gv }, status: 404, times: 3 });
      const env = new Environment({
        env: { USE_EXISTING_CLUSTER: 'true', KUBECONFIG: outer.kubeconfigPath },
        crds: [
          {
            apiVersion: 'apiextensions.k8s.io/v1',
            kind: 'CustomResourceDefinition',
            metadata: { name: 'laggards.lagging.example.com' },
            spec: {
              group: 'lagging.example.com',
              scope: 'Namespaced',
              names: { plural: 'laggards', kind: 'Laggard' },
              versions: [
                {
                  name: 'v1',
                  served: true,
                  storage: true,
                  schema: {
                    openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                  },
                },
              ],
            },
          },
        ],
      });
      await env.start();
      await env.stop();
      const reads = outer.server!.faults.requests().filter((r) => r.method === 'GET' && r.path === gv);
      expect(reads.map((r) => r.status)).toEqual([404, 404, 404, 200]);
    } finally {
      await outer.stop();
    }
  });

  it('USE_EXISTING_CLUSTER loads the kubeconfig with @kubeloop/config: exec plugins and a context from a later file', async () => {
    const outer = new Environment({ env: {} });
    await outer.start();
    const dir = await mkdtemp(join(tmpdir(), 'envtest-existing-'));
    try {
      const base = parse(await readFile(outer.kubeconfigPath, 'utf8'));
      // the second file of the list names the current context, whose user is an exec plugin
      const cluster = base.clusters[0];
      await writeFile(
        join(dir, 'a.yaml'),
        stringify({ apiVersion: 'v1', kind: 'Config', clusters: [cluster] }),
      );
      await writeFile(
        join(dir, 'b.yaml'),
        stringify({
          apiVersion: 'v1',
          kind: 'Config',
          'current-context': 'via-exec',
          contexts: [{ name: 'via-exec', context: { cluster: cluster.name, user: 'plugin' } }],
          users: [
            {
              name: 'plugin',
              user: {
                exec: {
                  apiVersion: 'client.authentication.k8s.io/v1',
                  command: process.execPath,
                  args: ['-e', 'process.stdout.write("{}")'],
                  interactiveMode: 'Never',
                },
              },
            },
          ],
        }),
      );
      const env = new Environment({
        env: {
          USE_EXISTING_CLUSTER: 'true',
          KUBECONFIG: [join(dir, 'a.yaml'), join(dir, 'b.yaml')].join(delimiter),
        },
      });
      const config = await env.start();
      expect(config.host).toBe(outer.config.host);
      expect(config.execProvider?.command).toBe(process.execPath);
      expect(env.kubeconfigPath).toBe(join(dir, 'a.yaml'));
      await env.stop();
      const broken = new Environment({
        env: { USE_EXISTING_CLUSTER: 'true', KUBECONFIG: join(dir, 'none.yaml') },
      });
      await expect(broken.start()).rejects.toMatchObject({ code: 'ENVTEST_KUBECONFIG' });
    } finally {
      await rm(dir, { recursive: true, force: true });
      await outer.stop();
    }
  });

  it('KUBEBUILDER_ASSETS mode refuses missing binaries with ENVTEST_START_FAILED', async () => {
    const env = new Environment({ env: { KUBEBUILDER_ASSETS: '/nonexistent/assets' } });
    await expect(env.start()).rejects.toMatchObject({ code: 'ENVTEST_START_FAILED' });
  });
});

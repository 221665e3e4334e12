// Templates are code: a project rendered by init + create api (a namespaced kind, a second version of it, a
// cluster-scoped kind in another group) type-checks under the generated strict tsconfig against the built @kubeloop
// packages, passes the generated lint, generates its CRDs and RBAC, and passes its own tests; its `npm run dev`
// reconciles on an embedded API server and stops on Ctrl-C with exit 0; its kustomize manifests pass a server-side
// dry run.
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Deployment, getConfig, kind, Namespace } from '@kubeloop/builder';
import { newClient } from '@kubeloop/client';
import { Environment } from '@kubeloop/envtest';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cli, renderDir, repoRoot } from './support.js';

/** Runs `file args` in `cwd`; on failure the error carries its output. */
export function run(cwd: string, file: string, args: string[], env: NodeJS.ProcessEnv = {}): string {
  try {
    return execFileSync(file, args, {
      cwd,
      encoding: 'utf8',
      stdio: 'pipe',
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0', ...env },
    });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${file} ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
  }
}

/** Links the bins an installed project has (`kubeloop` of @kubeloop/crd) into a project rendered in the repo. */
export function linkBins(dir: string): void {
  mkdirSync(path.join(dir, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(
    path.join(repoRoot, 'packages/crd/bin/kubeloop.js'),
    path.join(dir, 'node_modules', '.bin', 'kubeloop'),
  );
}

const hasKubectl = (() => {
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe('a rendered project', () => {
  let parent: string;
  let dir: string;
  beforeAll(async () => {
    parent = renderDir('templates');
    dir = path.join(parent, 'web-op');
    expect((await cli(parent, 'web-op')).code).toBe(0);
    linkBins(dir);
    // through the kubeloop CLI of @kubeloop/crd, as a user types it: it hands `create` to create-kubeloop
    const kubeloop = path.join(dir, 'node_modules', '.bin', 'kubeloop');
    const api = (...a: string[]) => run(dir, kubeloop, ['create', 'api', ...a]);
    api('--group', 'apps.example.com', '--version', 'v1alpha1', '--kind', 'WebApp');
    api('--group', 'apps.example.com', '--version', 'v1', '--kind', 'WebApp');
    api('--group', 'infra.example.com', '--version', 'v1beta1', '--kind', 'Cache', '--cluster');
    const webhook = (...a: string[]) => run(dir, kubeloop, ['create', 'webhook', ...a]);
    webhook('--version', 'v1alpha1', '--kind', 'WebApp', '--defaulting', '--validation', '--conversion');
    webhook('--version', 'v1beta1', '--kind', 'Cache', '--validation');
    run(dir, 'npm', ['run', '--silent', 'generate']);
  }, 600_000);
  afterAll(() => {
    if (parent) rmSync(parent, { recursive: true, force: true });
  });

  it('type-checks (strict, nodenext) against the built packages', () => {
    run(dir, process.execPath, [
      path.join(repoRoot, 'node_modules/typescript/bin/tsc'),
      '-p',
      'tsconfig.json',
    ]);
  });

  it('passes the generated lint (biome lint) and is formatted as its own biome.json says', () => {
    run(dir, path.join(repoRoot, 'node_modules/.bin/biome'), ['lint', '.']);
    // npm run format must not rewrite what the generator wrote: a rewritten file is "edited" to a later command
    run(dir, path.join(repoRoot, 'node_modules/.bin/biome'), ['format', '.']);
  });

  it('generates its CRDs and RBAC from the code, and passes its own unit and envtest tests', () => {
    const crds = readFileSync(path.join(dir, 'config/crd/crds.yaml'), 'utf8');
    expect(crds).toContain('name: webapps.apps.example.com');
    expect(crds).toContain('name: caches.infra.example.com');
    expect(crds).toMatch(/scope: Cluster/);
    const role = readFileSync(path.join(dir, 'config/rbac/role.yaml'), 'utf8');
    expect(role).toContain('name: web-op-manager-role');
    expect(role).toContain('webapps/status');
    expect(role).toContain('leases');
    expect(role).toContain('web-op-webhook-certs');
    // the converted CRD's caBundle is the manager's to patch, and only that CRD's
    expect(role).toMatch(
      /- apiGroups:\n {6}- apiextensions\.k8s\.io\n {4}resourceNames:\n {6}- webapps\.apps\.example\.com\n {4}resources:\n {6}- customresourcedefinitions\n {4}verbs:\n {6}- get\n {6}- patch\n/,
    );
    // least privilege: nothing the project generates records Events, so no rule for them
    expect(role).not.toContain('events');
    const webhooks = readFileSync(path.join(dir, 'config/webhook/manifests.yaml'), 'utf8');
    expect(webhooks).toContain('kind: MutatingWebhookConfiguration');
    expect(webhooks).toContain('path: /validate-infra-example-com-v1beta1-cache');
    expect(
      readFileSync(path.join(dir, 'config/crd/patches/webhook_in_apps.example.com_webapps.yaml'), 'utf8'),
    ).toContain('conversion');
    const out = run(dir, process.execPath, [path.join(repoRoot, 'node_modules/vitest/vitest.mjs'), 'run'], {
      VITEST_MAX_WORKERS: '1',
    });
    // manager flags 3, WebApp and Cache controllers 2 + 2, WebApp webhooks 3, Cache webhooks 1
    expect(out).toMatch(/Tests +11 passed/);
  }, 400_000);

  it('npm run dev: a created WebApp becomes a Deployment on the embedded server; Ctrl-C exits 0', async () => {
    // One budget for the waits below, a little under the test's timeout, so a failure names what it waited for.
    const giveUpAt = Date.now() + 280_000;
    const left = () => Math.max(1, giveUpAt - Date.now());
    // `predev` regenerates before the operator starts; beforeAll has just done that (the same build and the same
    // generators, 14 of the 16 s this test took at load 7), so the run skips it (--ignore-scripts skips pre and
    // post scripts only) and the wiring is checked here instead.
    const scripts = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')).scripts;
    expect(scripts.predev).toBe('npm run generate');
    // its own process group, as a terminal runs it: Ctrl-C signals the whole group (npm and the operator)
    const child: ChildProcess = spawn('npm', ['run', 'dev', '--ignore-scripts'], {
      cwd: dir,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    });
    let output = '';
    child.stdout?.on('data', (b: Buffer) => {
      output += b.toString();
    });
    child.stderr?.on('data', (b: Buffer) => {
      output += b.toString();
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    const group = -(child.pid ?? 0);
    try {
      const kubeconfig = await vi.waitFor(
        () => {
          const m = /"kubeconfig":"([^"]+)"/.exec(output);
          if (!m?.[1]) throw new Error(`no kubeconfig logged yet:\n${output}`);
          return m[1];
        },
        { timeout: left(), interval: 200 },
      );
      const client = newClient(getConfig({ kubeconfig, argv: [] }));
      try {
        const WebApp = kind<{
          metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
          spec: object;
        }>('apps.example.com/v1alpha1', 'WebApp');
        await vi.waitFor(
          () => {
            if (!output.includes('webhooks served')) throw new Error(`webhooks not served yet:\n${output}`);
          },
          { timeout: left(), interval: 200 },
        );
        const created = await client.create(WebApp, {
          metadata: { namespace: 'default', name: 'shop' },
          spec: { image: 'nginx:1.27', replicas: 2 },
        });
        // the embedded server called the project's webhooks through their Service, as a cluster does: the
        // defaulter labelled the object, the validator refuses an unpinned image, the other version converts
        expect(created.metadata?.labels?.['app.kubernetes.io/managed-by']).toBe('web-op');
        await expect(
          client.create(WebApp, {
            metadata: { namespace: 'default', name: 'unpinned' },
            spec: { image: 'nginx:latest' },
          }),
        ).rejects.toThrow(/spec\.image/);
        const asV1 = await client.get(kind('apps.example.com/v1', 'WebApp'), {
          namespace: 'default',
          name: 'shop',
        });
        expect(asV1.apiVersion).toBe('apps.example.com/v1');
        const d = await vi.waitFor(() => client.get(Deployment, { namespace: 'default', name: 'shop' }), {
          timeout: left(),
          interval: 100,
        });
        expect(d.spec?.replicas).toBe(2);
      } finally {
        await client.close();
      }
      process.kill(group, 'SIGINT'); // Ctrl-C
      const { code, signal } = await exited;
      // the operator stopped cleanly and exited 0 (it logs its code last); npm, signalled too, dies of SIGINT as a
      // shell does, or exits with the operator's 0
      expect(output).toMatch(/"exitCode":0,"msg":"dev stopped"/);
      expect(code === 0 || signal === 'SIGINT', `npm: code ${code}, signal ${signal}`).toBe(true);
    } finally {
      try {
        process.kill(group, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }, 300_000);

  it.skipIf(!hasKubectl)(
    'kubectl apply --dry-run=server -k config/default is accepted (envtest)',
    async () => {
      const env = new Environment();
      await env.start();
      try {
        const client = newClient(env.config);
        // a server-side dry run creates nothing, so the namespace the manifests go to must exist
        await client.create(Namespace, { metadata: { name: 'web-op-system' } });
        await client.close();
        const kubeconfig = path.join(parent, 'kubeconfig');
        writeFileSync(kubeconfig, readFileSync(env.kubeconfigPath, 'utf8'));
        // asynchronously: the API server answers from this process
        const { stdout: out } = await promisify(execFile)(
          'kubectl',
          ['--kubeconfig', kubeconfig, 'apply', '--dry-run=server', '-k', 'config/default'],
          { cwd: dir, encoding: 'utf8' },
        );
        for (const line of [
          'namespace/web-op-system',
          'customresourcedefinition.apiextensions.k8s.io/webapps.apps.example.com created (server dry run)',
          'customresourcedefinition.apiextensions.k8s.io/caches.infra.example.com created (server dry run)',
          'serviceaccount/web-op-controller-manager created (server dry run)',
          'clusterrole.rbac.authorization.k8s.io/web-op-manager-role created (server dry run)',
          'service/web-op-metrics created (server dry run)',
          'deployment.apps/web-op-controller-manager created (server dry run)',
          'service/web-op-webhook-service created (server dry run)',
          'mutatingwebhookconfiguration.admissionregistration.k8s.io/web-op-webhooks created (server dry run)',
          'validatingwebhookconfiguration.admissionregistration.k8s.io/web-op-webhooks created (server dry run)',
        ])
          expect(out).toContain(line);
      } finally {
        await env.stop();
      }
    },
  );
});

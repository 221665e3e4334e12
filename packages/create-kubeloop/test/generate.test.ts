// The generator's contract: bad input is one line naming the Kubernetes rule, exit 2, nothing written; every command
// is idempotent; a file the user edited is never overwritten without --force (exit 1, nothing written).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { versionsOf } from '../src/generator.js';
import { GENERATOR_VERSION } from '../src/project.js';
import { cli, snapshot, tempDir } from './support.js';

async function newProject(name = 'my-op'): Promise<string> {
  const parent = tempDir('gen');
  const r = await cli(parent, name);
  expect(r.code, r.err).toBe(0);
  return path.join(parent, name);
}

// the bin is the committed launcher, run as a shell runs it (its mode and shebang, not `node <file>`): it must
// work in a checkout straight after npm ci and a build, with no chmod of the compiled CLI
describe('the create-kubeloop bin', () => {
  it('runs as a real process and prints the generator version', () => {
    const pkgDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
    const { bin } = JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8')) as {
      bin: Record<string, string>;
    };
    const launcher = path.join(pkgDir, bin['create-kubeloop'] as string);
    expect(path.relative(pkgDir, launcher)).toBe(path.join('bin', 'create-kubeloop.js'));
    const r = spawnSync(launcher, ['--version'], { encoding: 'utf8' });
    expect(r.error).toBeUndefined();
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(GENERATOR_VERSION);
  }, 300_000);
});

describe('create-kubeloop <dir> (init)', () => {
  it('writes the project and says what to do next', async () => {
    const parent = tempDir('init');
    const r = await cli(parent, 'my-op');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('created     src/main.ts');
    expect(r.out).toContain('npx kubeloop create api');
    const pkg = JSON.parse(readFileSync(path.join(parent, 'my-op', 'package.json'), 'utf8'));
    expect(pkg.name).toBe('my-op');
    expect(pkg.dependencies['@kubeloop/builder']).toBe(`^${GENERATOR_VERSION}`);
    expect(pkg.devDependencies['create-kubeloop']).toBe(`^${GENERATOR_VERSION}`);
    for (const f of [
      'Dockerfile',
      '.gitignore',
      '.github/workflows/ci.yaml',
      'config/default/kustomization.yaml',
    ])
      expect(existsSync(path.join(parent, 'my-op', f)), f).toBe(true);
  });

  it('init writes into the current (empty) folder, named after it', async () => {
    const dir = path.join(tempDir('init-cwd'), 'shop-operator');
    mkdirSync(dir);
    const r = await cli(dir, 'init');
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')).name).toBe('shop-operator');
  });

  it.each([
    ['an existing non-empty folder', ['taken'], /taken exists and is not empty/],
    ['a project name that is no DNS-1123 label', ['My_Op'], /must be a DNS-1123 label/],
    ['no folder', [], /give the folder/],
  ])('refuses %s: one line, exit 2, nothing written', async (_what, argv, message) => {
    const parent = tempDir('bad-init');
    mkdirSync(path.join(parent, 'taken'));
    writeFileSync(path.join(parent, 'taken', 'notes.txt'), 'mine');
    const before = snapshot(parent);
    const r = await cli(parent, ...argv);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(snapshot(parent)).toEqual(before);
  });
});

describe('create api', () => {
  const api = ['create', 'api', '--group', 'apps.example.com', '--version', 'v1alpha1', '--kind', 'WebApp'];

  it.each([
    ['a group without a dot', ['--group', 'apps'], /at least one dot/],
    ['a group that is no DNS-1123 subdomain', ['--group', 'Apps.Example.com'], /DNS-1123 subdomain/],
    [
      'a version that is not a Kubernetes version',
      ['--version', 'v1.0'],
      /Kubernetes API version is v<major>/,
    ],
    ['a version with a leading zero', ['--version', 'v01'], /Kubernetes API version/],
    ['a kind that is not UpperCamelCase', ['--kind', 'webApp'], /UpperCamelCase/],
    ['a kind with a dash', ['--kind', 'Web-App'], /UpperCamelCase/],
    ['both scopes', ['--namespaced', '--cluster'], /exclude each other/],
  ])('refuses %s: one line naming the rule, exit 2, nothing written', async (_what, override, message) => {
    const dir = await newProject();
    const before = snapshot(dir);
    const argv = [...api];
    for (let i = 0; i < override.length; i++) {
      const at = argv.indexOf(override[i]!);
      if (at >= 0 && override[i + 1]?.startsWith('-') === false) {
        argv[at + 1] = override[i + 1]!;
        i++;
      } else argv.push(override[i]!);
    }
    const r = await cli(dir, ...argv);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(snapshot(dir)).toEqual(before);
  });

  it('refuses to run outside a project', async () => {
    const r = await cli(tempDir('no-project'), ...api);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/no package.json: run `kubeloop init`/);
  });

  it('is idempotent: a second run changes nothing', async () => {
    const dir = await newProject();
    expect((await cli(dir, ...api)).code).toBe(0);
    const once = snapshot(dir);
    const again = await cli(dir, ...api);
    expect(again.code, again.err).toBe(0);
    expect(again.out).not.toMatch(/created|updated|overwritten/);
    expect(snapshot(dir)).toEqual(once);
    expect(once['src/controllers/index.ts']?.match(/setupWebAppController\(mgr\);/g)).toHaveLength(1);
  });

  it('never overwrites an edited file without --force (exit 1, nothing written), and does with it', async () => {
    const dir = await newProject();
    expect((await cli(dir, ...api)).code).toBe(0);
    const controller = path.join(dir, 'src/controllers/web-app.ts');
    writeFileSync(controller, `${readFileSync(controller, 'utf8')}// mine\n`);
    const before = snapshot(dir);
    const r = await cli(dir, ...api);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/nothing written: src\/controllers\/web-app.ts exists and differs .*--force/);
    expect(snapshot(dir)).toEqual(before);
    const forced = await cli(dir, ...api, '--force');
    expect(forced.code, forced.err).toBe(0);
    expect(forced.out).toContain('overwritten src/controllers/web-app.ts');
    expect(readFileSync(controller, 'utf8')).not.toContain('// mine');
  });

  it('keeps an edited script: a different generate:crd is a conflict', async () => {
    const dir = await newProject();
    const file = path.join(dir, 'package.json');
    const pkg = JSON.parse(readFileSync(file, 'utf8'));
    pkg.scripts['generate:crd'] = 'echo mine';
    writeFileSync(file, JSON.stringify(pkg));
    const r = await cli(dir, ...api);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/scripts.generate:crd is "echo mine"/);
  });

  it('adds a second kind and a second version beside the first', async () => {
    const dir = await newProject();
    expect((await cli(dir, ...api)).code).toBe(0);
    const r2 = await cli(
      dir,
      'create',
      'api',
      '--group',
      'apps.example.com',
      '--version',
      'v1alpha1',
      '--kind',
      'Cache',
      '--cluster',
    );
    expect(r2.code, r2.err).toBe(0);
    const r3 = await cli(
      dir,
      'create',
      'api',
      '--group',
      'apps.example.com',
      '--version',
      'v1',
      '--kind',
      'WebApp',
    );
    expect(r3.code, r3.err).toBe(0);
    const s = snapshot(dir);
    expect(s['src/api/v1alpha1/index.ts']).toContain(
      "export * from './web-app.js';\nexport * from './cache.js';",
    );
    expect(s['src/api/index.ts']).toContain(
      "export * as v1alpha1 from './v1alpha1/index.js';\nexport * as v1 from './v1/index.js';",
    );
    expect(s['src/api/v1/web-app.ts']).toContain('storage: false');
    expect(s['src/api/v1alpha1/cache.ts']).toContain("scope: 'Cluster'");
    expect(versionsOf(dir, 'WebApp')).toEqual(['v1', 'v1alpha1']);
    // the controller belongs to the first (storage) version
    expect(s['src/controllers/index.ts']?.match(/setupWebAppController/g)).toHaveLength(2);
    expect(s['config/default/kustomization.yaml']?.match(/- \.\.\/crd/g)).toHaveLength(1);
  });
});

describe('create webhook', () => {
  const api = ['create', 'api', '--group', 'apps.example.com', '--version', 'v1alpha1', '--kind', 'WebApp'];

  it.each([
    ['no kind of webhook', ['--version', 'v1alpha1', '--kind', 'WebApp'], /at least one of --defaulting/],
    [
      'a kind the project does not have',
      ['--version', 'v1alpha1', '--kind', 'Shop', '--validation'],
      /no Shop at version v1alpha1/,
    ],
    [
      'conversion with one version',
      ['--version', 'v1alpha1', '--kind', 'WebApp', '--conversion'],
      /has only version v1alpha1/,
    ],
    ['a bad version', ['--version', 'one', '--kind', 'WebApp', '--validation'], /Kubernetes API version/],
  ])('refuses %s: one line, exit 2, nothing written', async (_what, argv, message) => {
    const dir = await newProject();
    expect((await cli(dir, ...api)).code).toBe(0);
    const before = snapshot(dir);
    const r = await cli(dir, 'create', 'webhook', ...argv);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(snapshot(dir)).toEqual(before);
  });

  it('wires the webhooks into the manager, RBAC and kustomize once, however often it runs', async () => {
    const dir = await newProject();
    expect((await cli(dir, ...api)).code).toBe(0);
    expect(
      (await cli(dir, 'create', 'api', '--group', 'apps.example.com', '--version', 'v1', '--kind', 'WebApp'))
        .code,
    ).toBe(0);
    const argv = [
      'create',
      'webhook',
      '--version',
      'v1alpha1',
      '--kind',
      'WebApp',
      '--defaulting',
      '--validation',
      '--conversion',
    ];
    const r = await cli(dir, ...argv);
    expect(r.code, r.err).toBe(0);
    const once = snapshot(dir);
    expect((await cli(dir, ...argv)).code).toBe(0);
    expect(snapshot(dir)).toEqual(once);
    expect(once['src/manager.ts']).toContain(
      "setupWebhooks(mgr, { namespace: process.env.POD_NAMESPACE ?? 'default' });",
    );
    expect(once['src/webhooks/index.ts']).toContain(
      'newWebhookManagedBy(mgr).from(webAppWebhook).complete();',
    );
    expect(once['src/webhooks/web-app.ts']).toContain('v1: {');
    // the defaulter labels objects with the operator's name, not the kind's
    expect(once['src/webhooks/web-app.ts']).toContain("labels: { 'app.kubernetes.io/managed-by': 'my-op',");
    expect(once['config/crd/kustomization.yaml']).toContain(
      '- path: patches/webhook_in_apps.example.com_webapps.yaml',
    );
    expect(once['config/default/kustomization.yaml']).toContain('- ../webhook');
    expect(JSON.parse(once['package.json'] ?? '{}').scripts['generate:webhooks']).toMatch(
      /^kubeloop webhook generate/,
    );
  });

  it('adds a kind of webhook to the ones an earlier run wrote, as one run with every flag would', async () => {
    const twoVersions = async () => {
      const dir = await newProject();
      expect((await cli(dir, ...api)).code).toBe(0);
      expect(
        (
          await cli(
            dir,
            'create',
            'api',
            '--group',
            'apps.example.com',
            '--version',
            'v1',
            '--kind',
            'WebApp',
          )
        ).code,
      ).toBe(0);
      return dir;
    };
    const hook = ['create', 'webhook', '--version', 'v1', '--kind', 'WebApp'];
    const stepwise = await twoVersions();
    expect((await cli(stepwise, ...hook, '--defaulting', '--validation')).code).toBe(0);
    const r = await cli(stepwise, ...hook, '--conversion');
    expect(r.code, r.err).toBe(0);
    const atOnce = await twoVersions();
    expect((await cli(atOnce, ...hook, '--defaulting', '--validation', '--conversion')).code).toBe(0);
    expect(snapshot(stepwise)).toEqual(snapshot(atOnce));
    expect(snapshot(stepwise)['src/webhooks/web-app.ts']).toMatch(
      /defaulter:[\s\S]*validator:[\s\S]*conversion:/,
    );
  });

  it('refuses to add to a webhook file the user edited, saying so, and writes nothing', async () => {
    const dir = await newProject();
    expect((await cli(dir, ...api)).code).toBe(0);
    expect(
      (await cli(dir, 'create', 'api', '--group', 'apps.example.com', '--version', 'v1', '--kind', 'WebApp'))
        .code,
    ).toBe(0);
    const hook = ['create', 'webhook', '--version', 'v1', '--kind', 'WebApp'];
    expect((await cli(dir, ...hook, '--validation')).code).toBe(0);
    const file = path.join(dir, 'src/webhooks/web-app.ts');
    writeFileSync(file, `${readFileSync(file, 'utf8')}// mine\n`);
    const before = snapshot(dir);
    const r = await cli(dir, ...hook, '--conversion');
    expect(r.code).toBe(1);
    expect(r.err).toContain('src/webhooks/web-app.ts differs from what create webhook wrote (edited)');
    expect(snapshot(dir)).toEqual(before);
  });
});

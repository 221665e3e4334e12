// `--from-tarballs <dir>`: a project whose kubeloop packages come from the tarballs `npm run pack:local` writes
// (the way to try kubeloop while the packages are not on the registry). pack-install.mjs check 6 installs and
// tests such a project from real tarballs; here the rewriting of package.json and the refusals.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createApi } from '../src/generator.js';
import { GENERATOR_VERSION } from '../src/project.js';
import { tarballsIn } from '../src/tarballs.js';
import { cli, snapshot, tempDir } from './support.js';

const PACKAGES = ['builder', 'client', 'crd', 'webhook', 'envtest', 'core', 'config', 'cache', 'workqueue'];

/** A folder with an (empty) file of every name `npm pack` gives kubeloop's tarballs, plus unrelated files. */
function tarballFolder(except: string[] = []): string {
  const dir = tempDir('tarballs');
  for (const p of PACKAGES)
    if (!except.includes(p)) writeFileSync(path.join(dir, `kubeloop-${p}-${GENERATOR_VERSION}.tgz`), '');
  if (!except.includes('create-kubeloop'))
    writeFileSync(path.join(dir, `create-kubeloop-${GENERATOR_VERSION}.tgz`), '');
  writeFileSync(path.join(dir, 'left-pad-1.3.0.tgz'), '');
  writeFileSync(path.join(dir, 'notes.txt'), '');
  return dir;
}

describe('create-kubeloop <dir> --from-tarballs <folder>', () => {
  it('takes every kubeloop dependency from its tarball and pins the rest with overrides', async () => {
    const tarballs = tarballFolder();
    const parent = tempDir('from-tarballs');
    const r = await cli(parent, 'my-op', '--from-tarballs', path.relative(parent, tarballs));
    expect(r.code, r.err).toBe(0);
    const pkg = JSON.parse(readFileSync(path.join(parent, 'my-op', 'package.json'), 'utf8'));
    const tgz = (p: string) => `file:${path.join(tarballs, `${p}-${GENERATOR_VERSION}.tgz`)}`;
    expect(pkg.dependencies['@kubeloop/builder']).toBe(tgz('kubeloop-builder'));
    expect(pkg.dependencies['@kubeloop/crd']).toBe(tgz('kubeloop-crd'));
    expect(pkg.devDependencies['@kubeloop/envtest']).toBe(tgz('kubeloop-envtest'));
    expect(pkg.devDependencies['create-kubeloop']).toBe(tgz('create-kubeloop'));
    // third-party packages still come from the registry
    expect(pkg.dependencies.typebox).toMatch(/^\^/);
    expect(Object.keys(pkg.overrides).sort()).toEqual(
      [...PACKAGES.map((p) => `@kubeloop/${p}`), 'create-kubeloop'].sort(),
    );
    expect(pkg.overrides['@kubeloop/core']).toBe(tgz('kubeloop-core'));
    // and the project stays a project: create api reads it (the file: range names no version)
    expect(() =>
      createApi(path.join(parent, 'my-op'), { group: 'apps.example.com', version: 'v1', kind: 'WebApp' }),
    ).not.toThrow();
  });

  it('init takes it too', async () => {
    const tarballs = tarballFolder();
    const dir = path.join(tempDir('init-tarballs'), 'shop-op');
    mkdirSync(dir);
    const r = await cli(dir, 'init', '--from-tarballs', tarballs);
    expect(r.code, r.err).toBe(0);
    const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
    expect(pkg.dependencies['@kubeloop/client']).toMatch(/^file:.*kubeloop-client-.*\.tgz$/);
  });

  it.each([
    [
      'a folder that does not exist',
      () => path.join(tempDir('none'), 'missing'),
      /is not a folder.*pack:local/,
    ],
    ['a folder without kubeloop tarballs', () => tempDir('empty'), /holds no kubeloop tarball.*pack:local/],
    [
      'a folder missing a package the project needs',
      () => tarballFolder(['webhook']),
      /has no tarball of @kubeloop\/webhook/,
    ],
    [
      'two versions of one package',
      () => {
        const d = tarballFolder();
        writeFileSync(path.join(d, 'kubeloop-crd-9.9.9.tgz'), '');
        return d;
      },
      /two tarballs of @kubeloop\/crd/,
    ],
  ])('refuses %s: one line, exit 2, nothing written', async (_what, folder, message) => {
    const tarballs = folder();
    const parent = tempDir('bad-tarballs');
    const before = snapshot(parent);
    const r = await cli(parent, 'my-op', '--from-tarballs', tarballs);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(snapshot(parent)).toEqual(before);
  });

  it('reads npm pack file names, prerelease versions included', () => {
    const dir = tempDir('names');
    writeFileSync(path.join(dir, 'kubeloop-pod-counter-0.1.0-rc.1.tgz'), '');
    writeFileSync(path.join(dir, 'create-kubeloop-1.2.3.tgz'), '');
    expect([...tarballsIn(dir).keys()].sort()).toEqual(['@kubeloop/pod-counter', 'create-kubeloop']);
  });
});

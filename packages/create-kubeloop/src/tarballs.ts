/**
 * `--from-tarballs <dir>`: a new project that installs kubeloop from package tarballs (`npm run pack:local` in the
 * kubeloop repository writes them) instead of the npm registry — for trying a build that is not published.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { NameError } from './names.js';

/**
 * `npm pack`'s file name: the package name with `@` dropped and `/` as `-`, then `-<version>.tgz`
 * (`@kubeloop/crd` 0.1.0 → `kubeloop-crd-0.1.0.tgz`). The version is semver, so it is the part from the last
 * `-<digit>.<digit>.<digit>` on.
 */
const TARBALL = /^(kubeloop-[a-z0-9-]+?|create-kubeloop)-(\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?)\.tgz$/;

/**
 * The kubeloop tarballs in `dir`, by package name (`@kubeloop/crd`, `create-kubeloop`), as absolute paths.
 * @throws NameError when `dir` is not a folder, holds no kubeloop tarball, or holds two versions of one package.
 */
export function tarballsIn(dir: string): Map<string, string> {
  const abs = path.resolve(dir);
  if (!existsSync(abs) || !statSync(abs).isDirectory())
    throw new NameError(
      `--from-tarballs ${dir} is not a folder: write the tarballs with \`npm run pack:local\` in the kubeloop repository`,
    );
  const found = new Map<string, string>();
  for (const file of readdirSync(abs).sort()) {
    const m = TARBALL.exec(file);
    if (!m) continue;
    const name = m[1] === 'create-kubeloop' ? m[1] : `@kubeloop/${m[1]!.slice('kubeloop-'.length)}`;
    const before = found.get(name);
    if (before)
      throw new NameError(
        `--from-tarballs ${dir} holds two tarballs of ${name} (${path.basename(before)}, ${file}): keep one`,
      );
    found.set(name, path.join(abs, file));
  }
  if (found.size === 0)
    throw new NameError(
      `--from-tarballs ${dir} holds no kubeloop tarball: write them with \`npm run pack:local\` in the kubeloop repository`,
    );
  return found;
}

/** The parts of a package.json that {@link pointAtTarballs} rewrites. */
interface Manifest {
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  overrides?: Record<string, string>;
}

/**
 * `packageJson` (a project's package.json text) with every kubeloop dependency taken from its tarball
 * (`file:<path>`), and `overrides` pinning every tarball, so that a kubeloop package another one depends on comes
 * from its tarball too rather than from the registry (npm applies `overrides` transitively).
 * @throws NameError naming the first kubeloop dependency that has no tarball in `tarballs`.
 */
export function pointAtTarballs(
  packageJson: string,
  tarballs: ReadonlyMap<string, string>,
  dir: string,
): string {
  const pkg = JSON.parse(packageJson) as Manifest;
  for (const deps of [pkg.dependencies, pkg.devDependencies])
    for (const name of Object.keys(deps ?? {})) {
      if (!name.startsWith('@kubeloop/') && name !== 'create-kubeloop') continue;
      const file = tarballs.get(name);
      if (!file)
        throw new NameError(
          `--from-tarballs ${dir} has no tarball of ${name}: \`npm run pack:local\` writes one of every package`,
        );
      deps![name] = `file:${file}`;
    }
  pkg.overrides = Object.fromEntries([...tarballs].map(([name, file]) => [name, `file:${file}`]));
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

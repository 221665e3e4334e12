#!/usr/bin/env node
// Packs every public package (@kubeloop/* and create-kubeloop) exactly as `npm publish` would upload it, into one
// folder: the way to use kubeloop outside this repository before the packages are on the npm registry.
//   npm run pack:local                    # builds, then writes ./tarballs/*.tgz
//   npm run pack:local -- /tmp/kubeloop   # the same into another folder
// Then scaffold a project that installs from them (docs/getting-started.md, "From tarballs"):
//   npx --yes --package=./tarballs/create-kubeloop-<version>.tgz create-kubeloop my-operator --from-tarballs ./tarballs
// Run after `npm run build:all` (the tarballs hold dist/); `npm run pack:local` builds first. pack-install.mjs packs
// with the same function. Prints one line per tarball; exits 1 when a package is not built or a tarball would hold
// files that are not for users.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Every workspace that is published: not private, and `@kubeloop/*` or `create-kubeloop`. */
export function publicPackages() {
  const rootPkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  return rootPkg.workspaces
    .map((dir) => ({ dir, pkg: JSON.parse(fs.readFileSync(path.join(root, dir, 'package.json'), 'utf8')) }))
    .filter(
      ({ pkg }) => !pkg.private && (pkg.name.startsWith('@kubeloop/') || pkg.name === 'create-kubeloop'),
    );
}

/**
 * `npm pack`s every public package into `dest` (created when missing) and returns the tarball's absolute path by
 * package name. Throws when a package has no dist/ (not built) or its tarball would hold tests or node_modules.
 */
export function packPublic(dest) {
  fs.mkdirSync(dest, { recursive: true });
  const tarballOf = new Map();
  for (const { dir, pkg } of publicPackages()) {
    if (!fs.existsSync(path.join(root, dir, 'dist')))
      throw new Error(`${pkg.name}: ${dir}/dist is missing; run \`npm run build:all\` first`);
    const out = execFileSync('npm', ['pack', '--json', '--pack-destination', dest], {
      cwd: path.join(root, dir),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const [info] = JSON.parse(out);
    const leaked = info.files
      .map((f) => f.path)
      .filter((p) => /(^|\/)(test|src\/.*\.test\.ts|node_modules)\//.test(p));
    if (leaked.length > 0)
      throw new Error(`${pkg.name}: the tarball holds files that are not for users: ${leaked.join(', ')}`);
    tarballOf.set(pkg.name, path.join(dest, info.filename));
  }
  return tarballOf;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dest = path.resolve(process.argv[2] ?? path.join(root, 'tarballs'));
  try {
    const tarballs = packPublic(dest);
    for (const [name, file] of tarballs) process.stdout.write(`${name.padEnd(20)} ${file}\n`);
    // a path below this folder as ./a/b.tgz (npm reads a/b.tgz as a GitHub shorthand), any other absolute
    const shown = (p) => {
      const rel = path.relative(process.cwd(), p);
      return rel.startsWith('..') || path.isAbsolute(rel) ? p : `./${rel}`;
    };
    const generator = shown(tarballs.get('create-kubeloop'));
    const rel = shown(dest);
    process.stdout.write(
      `\nA new project on these tarballs:\n  npx --yes --package=${generator} create-kubeloop my-operator --from-tarballs ${rel}\n`,
    );
  } catch (err) {
    process.stderr.write(`pack:local: ${err.message}\n`);
    process.exitCode = 1;
  }
}

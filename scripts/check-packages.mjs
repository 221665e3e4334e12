#!/usr/bin/env node
// Package-shape check for every public @kubeloop package, on the tarball `npm publish` would upload:
//   - publint (package.json fields against the packed files: exports, types, files, bin);
//   - @arethetypeswrong/cli with the esm-only profile: types resolve for ESM consumers (node16 from ESM
//     and bundler). The packages are ESM only by decision (see CONTRIBUTING.md, "CommonJS"): a CommonJS
//     consumer uses `await import()`, or `require()` on a Node with require(esm) (22.12+, 20.19+);
//   - our own rules: real repository/homepage/bugs/keywords, `types` before `default` in every export
//     condition, no wildcard subpaths (internals stay unreachable), `sideEffects: false`, no tests in the
//     tarball;
// and sherif once for the monorepo (one version of each dependency across workspaces, no empty fields).
// Run after `npm run build` (the tarballs hold dist/). Exits 1 on any problem.
// Usage: node scripts/check-packages.mjs   (npm run check:packages)
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';

const run = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => path.join(root, 'node_modules', '.bin', name);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'kubeloop-check-packages-'));
const problems = [];
const started = Date.now();

const rootPkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const publicPackages = rootPkg.workspaces
  .map((dir) => ({ dir, pkg: JSON.parse(fs.readFileSync(path.join(root, dir, 'package.json'), 'utf8')) }))
  .filter(({ pkg }) => !pkg.private && (pkg.name.startsWith('@kubeloop/') || pkg.name === 'create-kubeloop'));

function manifestRules(dir, pkg) {
  const where = `${dir}/package.json`;
  if (!/^git\+https:\/\/github\.com\/kubeloop\/kubeloop\.git$/.test(pkg.repository?.url ?? ''))
    problems.push(`${where}: repository.url is not the kubeloop repository`);
  if (pkg.repository?.directory !== dir) problems.push(`${where}: repository.directory should be "${dir}"`);
  if (!pkg.homepage) problems.push(`${where}: no homepage`);
  if (!pkg.bugs?.url) problems.push(`${where}: no bugs.url`);
  if (!Array.isArray(pkg.keywords) || pkg.keywords.length === 0) problems.push(`${where}: no keywords`);
  if (pkg.sideEffects !== false)
    problems.push(`${where}: sideEffects should be false (no import side effects)`);
  if (pkg.type !== 'module') problems.push(`${where}: type should be "module" (the packages are ESM only)`);
  for (const [subpath, target] of Object.entries(pkg.exports ?? {})) {
    if (subpath.includes('*'))
      problems.push(`${where}: exports["${subpath}"] is a wildcard: internals reachable`);
    if (typeof target !== 'object') continue;
    const keys = Object.keys(target).filter((k) => k !== '@kubeloop/source');
    if (keys[0] !== 'types' || keys.at(-1) !== 'default')
      problems.push(
        `${where}: exports["${subpath}"] should list "types" first and "default" last, has ${keys}`,
      );
  }
}

async function checkPackage({ dir, pkg }) {
  manifestRules(dir, pkg);
  const cwd = path.join(root, dir);
  if (!fs.existsSync(path.join(cwd, 'dist'))) {
    problems.push(`${dir}: no dist/ — run \`npm run build\` first`);
    return;
  }
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd });
  const [info] = JSON.parse(stdout);
  const tarball = path.join(work, info.filename);
  const leaked = info.files
    .map((f) => f.path)
    .filter((p) => /(^|\/)(test|node_modules)\/|\.test\.ts$/.test(p));
  if (leaked.length > 0)
    problems.push(`${pkg.name}: tarball holds test files: ${leaked.slice(0, 5).join(', ')}`);

  const buf = fs.readFileSync(tarball);
  const { messages, pkg: packed } = await publint({
    pack: { tarball: buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) },
    strict: true,
  });
  for (const m of messages) problems.push(`${pkg.name}: publint ${m.type}: ${formatMessage(m, packed)}`);

  try {
    await run(bin('attw'), [tarball, '--profile', 'esm-only', '--format', 'ascii', '--no-color'], {
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (err) {
    problems.push(
      `${pkg.name}: attw (esm-only profile) failed:\n${String(err.stdout ?? err.message).trim()}`,
    );
  }
  const kb = Math.round(info.size / 1024);
  console.log(`check-packages: ${pkg.name} packed ${info.entryCount} files, ${kb} kB`);
}

// two at a time: the CI box has two cores
const queue = [...publicPackages];
await Promise.all(
  [0, 1].map(async () => {
    for (let next = queue.shift(); next; next = queue.shift()) await checkPackage(next);
  }),
);

try {
  execFileSync(bin('sherif'), [], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
} catch (err) {
  problems.push(`sherif:\n${String(err.stdout ?? '').trim()}`);
}

fs.rmSync(work, { recursive: true, force: true });
const secs = ((Date.now() - started) / 1000).toFixed(1);
if (problems.length > 0) {
  console.error(`check-packages: ${problems.length} problem(s) in ${secs} s`);
  for (const p of problems) console.error(`  ${p}`);
  process.exit(1);
}
console.log(
  `check-packages: ${publicPackages.length} packages clean (publint strict, attw esm-only, sherif) in ${secs} s`,
);

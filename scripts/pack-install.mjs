#!/usr/bin/env node
// Pack-and-install check: packs every public @kubeloop package exactly as `npm publish` would (npm pack), then,
// in empty temporary projects that see only those tarballs (plus the npm registry for third-party
// dependencies), installs one layer at a time and runs a small program against it:
//   1. @kubeloop/workqueue alone (with @kubeloop/core, its one dependency): a rate-limited queue processes keys,
//      also on core's FakeClock from the `@kubeloop/core/testing` subpath; require() behaves as documented;
//   2. @kubeloop/config + @kubeloop/client: list pods from an API server started from the envtest tarball;
//   3. @kubeloop/builder (and what it depends on): the seed's PodCounter reaches the server's pod count;
//   4. @kubeloop/webhook: a validator denies and a defaulter patches an AdmissionReview.
//   5. @kubeloop/crd: a kind from a TypeBox schema gives its CRD and validates an object.
//   6. create-kubeloop: `npm create kubeloop` (npm exec of the packed generator, `--from-tarballs`) scaffolds an operator into an empty
//      folder, whose npm install (the tarballs; the registry for third-party packages) and `kubeloop create api` /
//      `create webhook` run, then its `npm test` (generate CRDs + RBAC + webhook configurations, unit and envtest
//      tests) passes on this Node, then on Node 22 and 24 (npx node@V; PACK_INSTALL_NODES="" skips). Prints each step's wall time.
//   7. footprint, from the installs above (no new install): what `npm i <package>` puts on disk for every public
//      package — the package and the dependencies it resolves to, transitively — printed as a table; fails when
//      @kubeloop/client + @kubeloop/config exceed 10 MB or 12 packages, the builder stack 25 MB, or a package
//      README's "Installs in **N MB**" is more than 20 % off.
//   8. a consumer operator (scripts/pack-install-operator.ts, ~250 lines) type-checks against the builder install of
//      check 3 under `strict` and `skipLibCheck: false` with no @types but Node's (no @types/ws), reading only
//      declarations that `npm i @kubeloop/builder` installs; prints its wall and CPU time and the load.
// Prints one line per check and `pack-install: N passed, N failed` at the end; exits 1 on any failure.
// Run after `npm run build` (the tarballs hold dist/). Usage: node scripts/pack-install.mjs [--keep]
// (PACK_INSTALL_CHECKS="6" runs only check 6; the others print `skip`).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { packPublic, publicPackages } from './pack-local.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const keep = process.argv.includes('--keep');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'kubeloop-pack-'));
const tarballs = path.join(work, 'tarballs');
fs.mkdirSync(tarballs);

const tarballOf = packPublic(tarballs);

let passed = 0;
let failed = 0;
/** The folder of each project installed above, by name: checks 7 and 8 read these installs again. */
const projects = new Map();

/**
 * An empty ESM project depending on `names` from their tarballs only. `overrides` pins every @kubeloop package
 * to its tarball, so a dependency between two of them never resolves to the registry.
 */
function project(name, names) {
  const dir = path.join(work, name);
  fs.mkdirSync(dir);
  const file = (n) => `file:${tarballOf.get(n)}`;
  const overrides = Object.fromEntries([...tarballOf.keys()].map((n) => [n, file(n)]));
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify(
      {
        name,
        private: true,
        type: 'module',
        dependencies: Object.fromEntries(names.map((n) => [n, file(n)])),
        overrides,
      },
      null,
      2,
    ),
  );
  execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: dir,
    stdio: 'inherit',
  });
  projects.set(name, dir);
  const installed = fs
    .readdirSync(path.join(dir, 'node_modules', '@kubeloop'))
    .map((n) => `@kubeloop/${n}`)
    .sort();
  return { dir, installed };
}

/** PACK_INSTALL_CHECKS="2 6": run only those checks (numbered as above; 7 and 8 read the installs of 1-6). */
// biome-ignore lint/suspicious/noUndeclaredEnvVars: this script is not a turbo task (CI runs it directly), nothing of turbo's is cached from it
const only = (process.env.PACK_INSTALL_CHECKS ?? '')
  .split(/[\s,]+/)
  .filter(Boolean)
  .map(Number);
let checkNumber = 0;

function check(what, fn) {
  checkNumber++;
  if (only.length > 0 && !only.includes(checkNumber)) {
    process.stdout.write(`skip ${checkNumber}. ${what}\n`);
    return;
  }
  try {
    fn();
    passed++;
    process.stdout.write(`ok   ${what}\n`);
  } catch (err) {
    failed++;
    process.stdout.write(`FAIL ${what}\n${err.stdout ?? ''}${err.stderr ?? ''}${err.message}\n`);
  }
}

function run(dir, file, source, timeoutMs = 60_000) {
  fs.writeFileSync(path.join(dir, file), source);
  return execFileSync(process.execPath, [file], {
    cwd: dir,
    encoding: 'utf8',
    timeout: timeoutMs,
    stdio: 'pipe',
  });
}

// 1. The work queue alone.
check('@kubeloop/workqueue alone: installs with only @kubeloop/core and processes keys', () => {
  const { dir, installed } = project('only-workqueue', ['@kubeloop/workqueue']);
  if (installed.join() !== '@kubeloop/core,@kubeloop/workqueue')
    throw new Error(`installed ${installed.join(', ')}`);
  const out = run(
    dir,
    'queue.mjs',
    `import { newRateLimitingQueue } from '@kubeloop/workqueue';
const q = newRateLimitingQueue({ name: 'demo' });
for (const k of ['a', 'b', 'a', 'c']) q.add(k);
const seen = [];
let failedOnce = false;
while (seen.length < 3) {
  const next = await q.get();
  if (next.item === 'b' && !failedOnce) { failedOnce = true; q.addRateLimited('b'); q.done('b'); continue; }
  seen.push(next.item); q.forget(next.item); q.done(next.item);
}
q.shutDown();
console.log(seen.sort().join(','));
`,
  );
  if (out.trim() !== 'a,b,c') throw new Error(`queue printed ${out}`);
  const delayed = run(
    dir,
    'fake-clock.mjs',
    `import { FakeClock } from '@kubeloop/core/testing';
import { newDelayingQueue } from '@kubeloop/workqueue';
const clock = new FakeClock();
const q = newDelayingQueue({ clock });
q.addAfter('a', 1000);
const before = q.len();
clock.step(1000);
console.log(before, q.len());
q.shutDown();
`,
  );
  if (delayed.trim() !== '0 1') throw new Error(`delaying queue on the fake clock printed ${delayed}`);
  // ESM only: require() works where Node can require ES modules (22.12+ and 20.19+), else ERR_REQUIRE_ESM.
  const cjs = (() => {
    try {
      return run(
        dir,
        'require.cjs',
        `const wq = require('@kubeloop/workqueue'); console.log(typeof wq.newRateLimitingQueue);`,
      );
    } catch (err) {
      return String(err.stderr);
    }
  })();
  if (!/^function\s*$/.test(cjs) && !cjs.includes('ERR_REQUIRE_ESM'))
    throw new Error(`require() gave: ${cjs}`);
});

// 2. Config + client, against envtest started from its own tarball.
check('@kubeloop/config + @kubeloop/client: list pods from an envtest API server', () => {
  const { dir, installed } = project('config-client', [
    '@kubeloop/config',
    '@kubeloop/client',
    '@kubeloop/envtest',
  ]);
  for (const unwanted of ['@kubeloop/cache', '@kubeloop/builder', '@kubeloop/workqueue']) {
    if (installed.includes(unwanted)) throw new Error(`${unwanted} was installed`);
  }
  const out = run(
    dir,
    'list.mjs',
    `import { Namespace, newClient, Pod } from '@kubeloop/client';
import { loadRestConfig } from '@kubeloop/config';
import { Environment } from '@kubeloop/envtest';
const env = new Environment();
await env.start();
try {
  const client = newClient(loadRestConfig({ kubeconfig: env.kubeconfigPath, argv: [] }));
  await client.create(Namespace, { metadata: { name: 'packed' } });
  for (const name of ['a', 'b']) {
    await client.create(Pod, { metadata: { namespace: 'packed', name }, spec: { containers: [{ name: 'c', image: 'x' }] } });
  }
  const pods = await client.list(Pod, { namespace: 'packed' });
  console.log(pods.items.map((p) => p.metadata.name).join(','));
  await client.close();
} finally {
  await env.stop();
}
`,
  );
  if (out.trim() !== 'a,b') throw new Error(`listed ${out}`);
});

// 3. The builder (and the layers it depends on): the seed's PodCounter counts to the server's number.
check('@kubeloop/builder: the seed PodCounter reaches the pod count', () => {
  // testing rides along (it needs builder and envtest anyway) so that check 7 can measure it
  const { dir } = project('builder', ['@kubeloop/builder', '@kubeloop/envtest', '@kubeloop/testing']);
  const out = run(
    dir,
    'pod-counter.mjs',
    `import { getConfig, Namespace, newControllerManagedBy, newManager, Pod } from '@kubeloop/builder';
import { Environment } from '@kubeloop/envtest';
const env = new Environment();
await env.start();
const mgr = newManager(getConfig({ kubeconfig: env.kubeconfigPath, argv: [] }), {});
// Writes through the manager's client go straight to the API server.
const api = mgr.getClient();
await api.create(Namespace, { metadata: { name: 'seed' } });
for (const name of ['a', 'b', 'c']) {
  await api.create(Pod, { metadata: { namespace: 'seed', name }, spec: { containers: [{ name: 'c', image: 'x' }] } });
}
const stop = new AbortController();
let last = -1;
class PodCounter {
  constructor(client) { this.client = client; }
  async reconcile(ctx) {
    const pods = await this.client.list(Pod, { signal: ctx.signal });
    last = pods.items.length;
    if (last === 3) stop.abort();
    return {};
  }
}
newControllerManagedBy(mgr).for(Pod).complete(new PodCounter(mgr.getClient()));
const timer = setTimeout(() => stop.abort(), 30_000);
await mgr.start(stop.signal);
clearTimeout(timer);
await env.stop();
console.log(last);
`,
  );
  if (out.trim() !== '3') throw new Error(`PodCounter ended at ${out}`);
});

// 4. The webhook layer: a validator answers an AdmissionReview and a defaulter's patch comes back.
check('@kubeloop/webhook: a validator denies and a defaulter patches an AdmissionReview', () => {
  const { dir, installed } = project('webhook', ['@kubeloop/webhook']);
  if (installed.includes('@kubeloop/envtest')) throw new Error('@kubeloop/envtest was installed');
  const out = run(
    dir,
    'webhook.mjs',
    `import { AdmissionDeniedError, AdmissionWebhook, defaultingHandler, validatingHandler } from '@kubeloop/webhook';
const review = (object) => JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
  request: { uid: 'u', operation: 'CREATE', userInfo: {}, kind: { group: 'example.com', version: 'v1', kind: 'Widget' },
    resource: { group: 'example.com', version: 'v1', resource: 'widgets' }, object } });
const v = new AdmissionWebhook('v', validatingHandler({ validateCreate(w) { if (!w.spec) throw new AdmissionDeniedError('no spec'); } }));
const d = new AdmissionWebhook('d', defaultingHandler({ default(w) { w.spec = { size: 1 }; } }));
const denied = await v.serve(review({ kind: 'Widget', metadata: { name: 'w' } }));
const patched = await d.serve(review({ kind: 'Widget', metadata: { name: 'w' } }));
console.log(denied.body.response.status.message, Buffer.from(patched.body.response.patch, 'base64').toString());
`,
  );
  if (out.trim() !== 'no spec [{"op":"add","path":"/spec","value":{"size":1}}]')
    throw new Error(`webhook printed ${out}`);
});

// 5. @kubeloop/crd with the client it names kinds with: a kind from a TypeBox schema, its CRD and in-process validation.
check('@kubeloop/crd: a kind from a TypeBox schema gives a CRD and validates objects', () => {
  const { dir } = project('crd', ['@kubeloop/crd']);
  execFileSync(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', 'typebox@^1.4.3'],
    {
      cwd: dir,
      stdio: 'inherit',
    },
  );
  const out = run(
    dir,
    'crd.mjs',
    `import { Type } from 'typebox';
import { customResourceDefinition, defineKind, validate } from '@kubeloop/crd';
const WebApp = defineKind({ group: 'example.com', version: 'v1', kind: 'WebApp',
  spec: Type.Object({ replicas: Type.Integer({ minimum: 1 }) }) });
const crd = customResourceDefinition(WebApp);
const errors = validate(WebApp, { metadata: { name: 'w' }, spec: { replicas: 0 } });
console.log(crd.metadata.name, errors.map((e) => e.field).join());
`,
  );
  if (out.trim() !== 'webapps.example.com spec.replicas') throw new Error(`crd printed ${out}`);
});

// 6. The generator, from the packed create-kubeloop, on the packed packages.
check('create-kubeloop: scaffold, install, create api + webhook, npm test on Node 20, 22 and 24', () => {
  const times = [];
  const timed = (what, cwd, cmd, args, timeout = 600_000) => {
    const t0 = Date.now();
    try {
      execFileSync(cmd, args, {
        cwd,
        encoding: 'utf8',
        stdio: 'pipe',
        timeout,
        env: { ...process.env, NO_COLOR: '1' },
      });
    } catch (err) {
      throw new Error(`${what}: ${err.message}\n${err.stdout ?? ''}${err.stderr ?? ''}`);
    }
    times.push(`${what} ${Math.round((Date.now() - t0) / 1000)} s`);
  };
  const parent = path.join(work, 'scaffold');
  fs.mkdirSync(parent);
  // what `npm create kubeloop@latest web-op` runs, with the tarball standing in for @latest; --from-tarballs (the
  // README's path before publishing) points the project's @kubeloop/* and create-kubeloop at the tarballs, with
  // overrides for the transitive ones
  timed('npm create kubeloop', parent, 'npm', [
    'exec',
    '--yes',
    `--package=${tarballOf.get('create-kubeloop')}`,
    '--',
    'create-kubeloop',
    'web-op',
    '--from-tarballs',
    tarballs,
  ]);
  const dir = path.join(parent, 'web-op');
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const pinned = Object.entries({ ...pkg.dependencies, ...pkg.devDependencies }).filter(([n]) =>
    tarballOf.has(n),
  );
  if (pinned.length === 0 || pinned.some(([n, spec]) => spec !== `file:${tarballOf.get(n)}`))
    throw new Error(`--from-tarballs left a kubeloop dependency off its tarball: ${JSON.stringify(pinned)}`);
  projects.set('scaffold', dir);
  timed('npm install', dir, 'npm', [
    'install',
    '--prefer-offline',
    '--no-audit',
    '--no-fund',
    '--loglevel=error',
  ]);
  timed('kubeloop create api', dir, 'npx', [
    'kubeloop',
    'create',
    'api',
    '--group',
    'apps.example.com',
    '--version',
    'v1alpha1',
    '--kind',
    'WebApp',
  ]);
  timed('kubeloop create webhook', dir, 'npx', [
    'kubeloop',
    'create',
    'webhook',
    '--version',
    'v1alpha1',
    '--kind',
    'WebApp',
    '--defaulting',
    '--validation',
  ]);
  timed('npm test', dir, 'npm', ['test'], 900_000);
  // The same project's tests on the other Node majors CI covers (the cross-version step): the installed
  // node_modules are plain JavaScript, so only the runtime changes; npx puts that Node first on PATH for npm
  // and for everything npm starts. PACK_INSTALL_NODES="" skips it (e.g. offline).
  // biome-ignore lint/suspicious/noUndeclaredEnvVars: this script is not a turbo task (CI runs it directly)
  for (const v of (process.env.PACK_INSTALL_NODES ?? '22 24').split(/\s+/).filter(Boolean))
    timed(`npm test on Node ${v}`, dir, 'npx', ['-y', '-p', `node@${v}`, '--', 'npm', 'test'], 900_000);
  process.stdout.write(`     ${times.join(', ')}\n`);
});

// 7. Footprint. What `npm i <package>` installs is the package and the dependencies it resolves to, transitively
// (dependencies, optionalDependencies, and peerDependencies where installed, each resolved as Node does: the
// nearest node_modules up from the dependent). That closure is read from the installs the checks above made, so no
// project is installed twice; on a fresh install of one package alone the set is the same (npm 11 hoists what no
// other package constrains). Size: the sum of the closure's file sizes (apparent size, not disk blocks).
const BUDGETS = { client: { mb: 10, packages: 12 }, builder: { mb: 25 } };
const README_TOLERANCE = 0.2;

/** The folder `name` resolves to from the package folder `from`, as Node's resolution walks up; undefined if absent. */
function resolvePackage(name, from, projectDir) {
  for (let d = from; d.startsWith(projectDir); d = path.dirname(d)) {
    const candidate = path.join(d, 'node_modules', name);
    if (fs.existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (d === projectDir) break;
  }
  return undefined;
}

/** The package folders `roots` need in `projectDir`, themselves included. */
function closure(projectDir, roots) {
  const seen = new Set();
  const queue = roots.map((n) => resolvePackage(n, projectDir, projectDir));
  if (queue.includes(undefined)) return undefined;
  while (queue.length > 0) {
    const dir = queue.pop();
    if (seen.has(dir)) continue;
    seen.add(dir);
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
    const names = new Set([
      ...Object.keys(pkg.dependencies ?? {}),
      ...Object.keys(pkg.optionalDependencies ?? {}),
      ...Object.keys(pkg.peerDependencies ?? {}),
    ]);
    for (const n of names) {
      const found = resolvePackage(n, dir, projectDir);
      // absent: an optional dependency for another platform or an optional peer nobody installed
      if (found) queue.push(found);
    }
  }
  return seen;
}

/** Bytes of the files of a package folder, without its nested node_modules (those are packages of their own). */
function packageBytes(dir) {
  let bytes = 0;
  const walk = (d, top) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      if (top && e.name === 'node_modules') continue;
      const full = path.join(d, e.name);
      if (e.isDirectory()) walk(full, false);
      else bytes += fs.lstatSync(full).size;
    }
  };
  walk(dir, true);
  return bytes;
}

/** Packages and MB (10^6 bytes) that `roots` take in the first project that installed them all; undefined if none. */
function footprint(roots) {
  for (const dir of projects.values()) {
    const dirs = closure(dir, roots);
    if (!dirs) continue;
    const bytes = [...dirs].reduce((sum, d) => sum + packageBytes(d), 0);
    return { packages: dirs.size, mb: bytes / 1e6, dirs };
  }
  return undefined;
}

/** The figure a package README states: `Installs in **N MB** (M packages)`. */
function readmeFigure(dir) {
  const m = /Installs in \*\*([\d.]+) MB\*\* \((\d+) packages/.exec(
    fs.readFileSync(path.join(root, dir, 'README.md'), 'utf8'),
  );
  return m ? { mb: Number(m[1]), packages: Number(m[2]) } : undefined;
}

check(
  `footprint: client + config <= ${BUDGETS.client.mb} MB and ${BUDGETS.client.packages} packages, builder stack <= ${BUDGETS.builder.mb} MB, READMEs`,
  () => {
    const problems = [];
    const rows = [];
    for (const { dir, pkg } of publicPackages()) {
      const f = footprint([pkg.name]);
      if (!f) {
        problems.push(`${pkg.name}: installed by no check above (a check failed before installing it?)`);
        continue;
      }
      const stated = readmeFigure(dir);
      rows.push(
        `     ${pkg.name.padEnd(20)} ${f.mb.toFixed(1).padStart(6)} MB ${String(f.packages).padStart(4)} packages` +
          (stated ? `   (README: ${stated.mb} MB, ${stated.packages} packages)` : ''),
      );
      if (!stated) problems.push(`${dir}/README.md states no "Installs in **N MB** (M packages)"`);
      else if (Math.abs(stated.mb - f.mb) > README_TOLERANCE * f.mb && Math.abs(stated.mb - f.mb) > 0.5)
        problems.push(`${dir}/README.md says ${stated.mb} MB, measured ${f.mb.toFixed(1)} MB: update it`);
    }
    const client = footprint(['@kubeloop/client', '@kubeloop/config']);
    const builder = footprint(['@kubeloop/builder']);
    if (client)
      rows.push(
        `     client + config      ${client.mb.toFixed(1).padStart(6)} MB ${String(client.packages).padStart(4)} packages`,
      );
    process.stdout.write(`${rows.join('\n')}\n`);
    if (!client || client.mb > BUDGETS.client.mb || client.packages > BUDGETS.client.packages)
      problems.push(
        `client + config over budget (${BUDGETS.client.mb} MB, ${BUDGETS.client.packages} packages): ${client ? `${client.mb.toFixed(1)} MB, ${client.packages} packages: ${[...client.dirs].map((d) => path.relative(work, d)).join(', ')}` : 'not installed'}`,
      );
    if (!builder || builder.mb > BUDGETS.builder.mb)
      problems.push(
        `builder stack over budget (${BUDGETS.builder.mb} MB): ${builder ? `${builder.mb.toFixed(1)} MB, ${builder.packages} packages` : 'not installed'}`,
      );
    if (problems.length > 0) throw new Error(problems.join('\n'));
  },
);

// 8. A consumer operator type-checks against what `npm i @kubeloop/builder` installs, under skipLibCheck: false
// (every published .d.ts is checked, as a user's strict build does) with the scaffold's compiler options and no
// @types but Node's: @types/node is the consumer's own dev dependency (linked in from this repository, as any Node
// TypeScript project has it); nothing like @types/ws may be needed. The install of check 3 also holds envtest and
// testing, so every declaration the compiler read must belong to the builder's closure: one that only envtest
// brought would compile here and fail for a user.
check(
  'consumer operator: strict, skipLibCheck: false, no @types but Node, only what @kubeloop/builder installs',
  () => {
    const dir = projects.get('builder');
    const builder = dir && closure(dir, ['@kubeloop/builder']);
    if (!builder) throw new Error('check 3 did not install @kubeloop/builder');
    fs.mkdirSync(path.join(dir, 'node_modules', '@types'), { recursive: true });
    const typesNode = path.join(dir, 'node_modules', '@types', 'node');
    if (!fs.existsSync(typesNode))
      fs.symlinkSync(path.join(root, 'node_modules', '@types', 'node'), typesNode, 'dir');
    fs.copyFileSync(path.join(root, 'scripts', 'pack-install-operator.ts'), path.join(dir, 'operator.ts'));
    fs.writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          lib: ['ES2023'],
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noUncheckedIndexedAccess: true,
          noImplicitOverride: true,
          noUnusedLocals: true,
          noUnusedParameters: true,
          verbatimModuleSyntax: true,
          isolatedModules: true,
          skipLibCheck: false,
          noEmit: true,
          types: ['node'],
        },
        files: ['operator.ts'],
      }),
    );
    const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const load = os.loadavg()[0].toFixed(1);
    // bash's `time` gives the child's CPU seconds (user + sys), which a busy machine inflates far less than wall time
    const started = process.hrtime.bigint();
    let out;
    try {
      out = execFileSync(
        'bash',
        ['-c', 'TIMEFORMAT="cpu %U %S"; { time "$0" "$1" -p . --listFiles; } 2>&1', process.execPath, tsc],
        { cwd: dir, encoding: 'utf8', stdio: 'pipe' },
      );
    } catch (err) {
      throw new Error(`the consumer operator does not type-check:\n${err.stdout}`);
    }
    const wall = Number(process.hrtime.bigint() - started) / 1e9;
    const real = (p) => fs.realpathSync(p);
    const allowed = [...builder].map(real);
    const outside = out
      .split('\n')
      .filter((f) => f.startsWith('/') && fs.existsSync(f))
      .map(real)
      .filter((f) => f.includes(`${path.sep}node_modules${path.sep}`))
      .filter((f) => !allowed.some((d) => f.startsWith(d + path.sep)))
      .filter((f) => !/[/\\]node_modules[/\\](typescript[/\\]lib|@types[/\\]node|undici-types)[/\\]/.test(f));
    if (outside.length > 0)
      throw new Error(
        `declarations read from packages @kubeloop/builder does not install:\n${outside.join('\n')}`,
      );
    const cpu = /cpu ([\d.]+) ([\d.]+)/.exec(out) ?? [];
    process.stdout.write(
      `     type-check: ${wall.toFixed(1)} s wall, ${(Number(cpu[1]) + Number(cpu[2])).toFixed(1)} s CPU at load ${load}\n`,
    );
  },
);

if (!keep) fs.rmSync(work, { recursive: true, force: true });
else process.stdout.write(`kept ${work}\n`);
process.stdout.write(`\npack-install: ${passed} passed, ${failed} failed\n`);
process.exit(failed === 0 ? 0 : 1);

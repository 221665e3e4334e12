#!/usr/bin/env node
// Fails when a package imports against the arrows in shared/ARCHITECTURE.md, either in its
// package.json dependencies or in an import/export/require of its sources; when two or more source files of
// one package import each other in a cycle (type-only imports included: a cycle of types is still two files
// that cannot be read, moved or published apart); and when a package declares a dependency that none of its
// files imports (dependencies and peerDependencies: its src; devDependencies: anything in the package).
import fs from 'node:fs';
import path from 'node:path';

const allowed = {
  // what every layer shares (clock, logger, abort/deadline, backoff, base error, the CEL view of a CRD schema):
  // it imports nothing of ours
  core: [],
  config: ['core'],
  client: ['config', 'core'],
  workqueue: ['core'],
  cache: ['client', 'config', 'core'],
  builder: ['cache', 'client', 'config', 'core', 'workqueue'],
  envtest: ['config', 'core'],
  // the chaos harness: envtest and builder (and the layers the builder stands on, for kinds and configs)
  testing: ['builder', 'client', 'config', 'core', 'envtest'],
  // admission/conversion webhooks: the manager's runnables, the client (kinds, certificates' Secret), config
  webhook: ['builder', 'client', 'config', 'core'],
  // schemas → types, CRDs, validation, the kubeloop CLI: kind descriptors from the client (and core); config for the
  // CLI's kubeconfig when it reads the CRDs installed in a cluster
  crd: ['client', 'config', 'core'],
  // the project generator: its templates use builder, crd, webhook (and client, envtest in the generated tests),
  // which its own tests compile and run against; the generator's code imports none of them
  'create-kubeloop': ['builder', 'client', 'crd', 'envtest', 'webhook'],
};

const root = path.resolve(import.meta.dirname, '..');
const problems = [];
const importRe =
  /(?:import|export)[^'"`]*?from\s*['"](@kubeloop\/[a-z-]+)|import\(\s*['"](@kubeloop\/[a-z-]+)|require\(\s*['"](@kubeloop\/[a-z-]+)/g;

function* walk(dir) {
  if (!fs.existsSync(dir)) return;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(full);
    else if (/\.(m|c)?[jt]s$/.test(entry.name)) yield full;
  }
}

/** Every module specifier of a file: static and type-only imports and re-exports, dynamic imports, require. */
const specifierRe =
  /(?:^|[\s;])(?:import|export)\s[^'"`;]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;])import\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|require\(\s*['"]([^'"]+)['"]\s*\)/g;
function specifiers(text) {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/[^\n]*/g, '$1');
  return [...code.matchAll(specifierRe)].map((m) => m[1] ?? m[2] ?? m[3] ?? m[4]);
}

/** The file a relative specifier names (`./x.js` is `./x.ts` in the sources, `./dir` its index), if any. */
function resolveRelative(from, spec) {
  const base = path.resolve(path.dirname(from), spec);
  const candidates = [
    base,
    base.replace(/\.js$/, '.ts'),
    base.replace(/\.mjs$/, '.mts'),
    `${base}.ts`,
    path.join(base, 'index.ts'),
  ];
  return candidates.find((c) => fs.existsSync(c) && fs.statSync(c).isFile());
}

/** Strongly connected components of size > 1 (or a file importing itself): the import cycles (Tarjan). */
function cyclesOf(graph) {
  let index = 0;
  const stack = [];
  const onStack = new Set();
  const idx = new Map();
  const low = new Map();
  const out = [];
  const visit = (v) => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const scc = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || graph.get(v)?.has(v)) out.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return out;
}

/** One cycle through `scc`'s files, as a readable path a → b → … → a (shortest from the first file). */
function cyclePath(graph, scc) {
  const inScc = new Set(scc);
  const start = scc[0];
  const prev = new Map([[start, null]]);
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift();
    for (const w of graph.get(v) ?? []) {
      if (!inScc.has(w)) continue;
      if (w === start) {
        const p = [start];
        for (let x = v; x !== start; x = prev.get(x)) p.splice(1, 0, x);
        return [...p, start];
      }
      if (!prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  return scc;
}

/** The package name a bare specifier names (`@scope/name/sub` → `@scope/name`, `name/sub` → `name`). */
function packageOf(spec) {
  if (spec.startsWith('.') || spec.startsWith('/') || spec.startsWith('node:')) return undefined;
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

for (const [pkg, ok] of Object.entries(allowed)) {
  const dir = path.join(root, 'packages', pkg);
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
    for (const dep of Object.keys(manifest[field] ?? {})) {
      const m = /^@kubeloop\/(.+)$/.exec(dep);
      if (m && !ok.includes(m[1]))
        problems.push(
          `packages/${pkg}/package.json: ${field} lists ${dep}, which @kubeloop/${pkg} may not import`,
        );
    }
  }
  for (const file of walk(path.join(dir, 'src'))) {
    const text = fs.readFileSync(file, 'utf8');
    for (const m of text.matchAll(importRe)) {
      const target = (m[1] ?? m[2] ?? m[3]).slice('@kubeloop/'.length);
      if (target !== pkg && !ok.includes(target)) {
        const line = text.slice(0, m.index).split('\n').length;
        problems.push(
          `${path.relative(root, file)}:${line}: imports @kubeloop/${target}, which @kubeloop/${pkg} may not import`,
        );
      }
    }
  }
}

// Import cycles between the files of each package's sources.
let files = 0;
let cycles = 0;
const packageDirs = fs
  .readdirSync(path.join(root, 'packages'), { withFileTypes: true })
  .filter((e) => e.isDirectory() && fs.existsSync(path.join(root, 'packages', e.name, 'package.json')))
  .map((e) => path.join(root, 'packages', e.name));
for (const dir of [...packageDirs, path.join(root, 'apps', 'pod-counter')]) {
  const graph = new Map();
  for (const file of walk(path.join(dir, 'src'))) {
    files++;
    const edges = new Set();
    for (const spec of specifiers(fs.readFileSync(file, 'utf8'))) {
      if (!spec.startsWith('.')) continue;
      const target = resolveRelative(file, spec);
      if (target) edges.add(target);
    }
    graph.set(file, edges);
  }
  for (const scc of cyclesOf(graph)) {
    cycles++;
    const rel = (f) => path.relative(dir, f);
    problems.push(
      `${path.relative(root, dir)}: import cycle ${cyclePath(graph, scc).map(rel).join(' → ')}` +
        (scc.length > 2 ? ` (${scc.length} files in the cycle: ${scc.map(rel).join(', ')})` : ''),
    );
  }
}

// Declared dependencies that no file imports.
let unused = 0;
for (const dir of [...packageDirs, path.join(root, 'apps', 'pod-counter')]) {
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const importedBy = (subdirs) => {
    const names = new Set();
    for (const sub of subdirs)
      for (const file of walk(path.join(dir, sub)))
        for (const spec of specifiers(fs.readFileSync(file, 'utf8'))) {
          const name = packageOf(spec);
          if (name) names.add(name);
        }
    return names;
  };
  const fromSrc = importedBy(['src']);
  // a package loaded on demand by a name held in a constant (`await import(OIDC_PACKAGE)`) is named in a string
  for (const file of walk(path.join(dir, 'src')))
    for (const m of fs.readFileSync(file, 'utf8').matchAll(/['"](@?[a-z0-9][\w./-]*)['"]/g)) {
      const name = packageOf(m[1]);
      if (name && Object.hasOwn(manifest.peerDependencies ?? {}, name)) fromSrc.add(name);
    }
  const fromAny = importedBy(['src', 'test', 'scripts', 'bin']);
  for (const file of ['vitest.config.ts', 'vitest.config.mts'])
    if (fs.existsSync(path.join(dir, file)))
      for (const spec of specifiers(fs.readFileSync(path.join(dir, file), 'utf8'))) {
        const name = packageOf(spec);
        if (name) fromAny.add(name);
      }
  const check = (field, used) => {
    for (const dep of Object.keys(manifest[field] ?? {})) {
      if (dep.startsWith('@types/') || used.has(dep)) continue;
      // a peer dependency also listed as a dev dependency is there for the types of the peer
      if (field === 'devDependencies' && manifest.peerDependencies?.[dep]) continue;
      unused++;
      problems.push(
        `${path.relative(root, dir)}/package.json: ${field} lists ${dep}, which no file of ${field === 'devDependencies' ? 'the package' : 'its src'} imports`,
      );
    }
  };
  check('dependencies', fromSrc);
  check('peerDependencies', fromSrc);
  check('optionalDependencies', fromSrc);
  check('devDependencies', fromAny);
}

if (problems.length > 0) {
  console.error(
    `layer check: ${problems.length} problem(s): imports against the arrows in ARCHITECTURE.md, import cycles, unused dependencies`,
  );
  for (const p of problems) console.error(`  ${p}`);
  process.exit(1);
}
console.log(
  `layer check: every package imports only along the arrows; ${files} source files, ${cycles} import cycles; ${unused} unused dependencies`,
);

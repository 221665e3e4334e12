#!/usr/bin/env node
// Fails when a package imports against the arrows in shared/ARCHITECTURE.md, either in its
// package.json dependencies or in an import/export/require of its sources.
import fs from 'node:fs';
import path from 'node:path';

const allowed = {
  // what every layer shares (clock, logger, abort/deadline, backoff, base error): it imports nothing of ours
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

if (problems.length > 0) {
  console.error(`layer check: ${problems.length} import(s) against the arrows in ARCHITECTURE.md`);
  for (const p of problems) console.error(`  ${p}`);
  process.exit(1);
}
console.log('layer check: every package imports only along the arrows');

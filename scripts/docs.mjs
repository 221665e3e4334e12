#!/usr/bin/env node
// `npm run docs`: typedoc over every @kubeloop/* entry point (typedoc.json), then one line with what the gate
// measured: how many exported declarations have no documentation and how many warnings typedoc gave. typedoc's
// `notDocumented` validation finds the first, and `treatWarningsAsErrors` / `treatValidationWarningsAsErrors` make
// either fail the run; this wrapper only counts typedoc's own lines, so the numbers are the gate's.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// every entry point a user can import must be documented: each `exports` subpath of each public package (its
// `@kubeloop/source` file) has to be one of typedoc.json's entry points, so a new subpath cannot skip the gate
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { entryPoints } = JSON.parse(readFileSync(join(root, 'typedoc.json'), 'utf8'));
const missing = [];
for (const dir of readdirSync(join(root, 'packages')).sort()) {
  const file = join(root, 'packages', dir, 'package.json');
  if (!existsSync(file)) continue;
  const pkg = JSON.parse(readFileSync(file, 'utf8'));
  if (pkg.private) continue;
  for (const [sub, target] of Object.entries(pkg.exports ?? {})) {
    const src = typeof target === 'object' ? target['@kubeloop/source'] : undefined;
    if (src && !entryPoints.includes(`packages/${dir}/${src.replace(/^\.\//, '')}`))
      missing.push(
        `${pkg.name}${sub === '.' ? '' : sub.slice(1)} (packages/${dir}/${src.replace(/^\.\//, '')})`,
      );
  }
}
if (missing.length > 0) {
  console.error(
    `docs: typedoc.json's entryPoints miss ${missing.length} package entry point(s): ${missing.join(', ')}`,
  );
  process.exit(1);
}

const typedoc = join(
  dirname(createRequire(import.meta.url).resolve('typedoc/package.json')),
  'bin',
  'typedoc',
);
const run = spawnSync(process.execPath, [typedoc, ...process.argv.slice(2)], {
  encoding: 'utf8',
  env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
  maxBuffer: 256 * 1024 * 1024,
});
process.stdout.write(run.stdout ?? '');
process.stderr.write(run.stderr ?? '');
const lines = `${run.stdout ?? ''}\n${run.stderr ?? ''}`.split('\n');
const warnings = lines.filter(
  (l) => l.includes('[warning]') && !/Found \d+ errors? and \d+ warnings?/.test(l),
);
const undocumented = warnings.filter((l) => l.includes('does not have any documentation'));
console.log(`docs: ${undocumented.length} undocumented exports, ${warnings.length} warnings`);
process.exit(run.status ?? 1);

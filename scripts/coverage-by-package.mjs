#!/usr/bin/env node
// Prints statement/branch/function/line coverage per package from vitest's coverage/coverage-summary.json
// (written by `npm test`, which runs `vitest run --coverage`). The floors that fail the run live in
// vitest.config.ts; this table is for people (and for raising those floors).
import fs from 'node:fs';
import path from 'node:path';

const file = path.resolve(process.argv[2] ?? 'coverage/coverage-summary.json');
if (!fs.existsSync(file)) {
  console.error(`coverage-by-package: ${file} not found (run npm test first)`);
  process.exit(1);
}
const summary = JSON.parse(fs.readFileSync(file, 'utf8'));
const root = process.cwd();
const byPackage = new Map();
for (const [f, metrics] of Object.entries(summary)) {
  if (f === 'total') continue;
  const rel = path.relative(root, f).split(path.sep);
  const pkg = rel.slice(0, 2).join('/');
  const acc = byPackage.get(pkg) ?? {
    statements: [0, 0],
    branches: [0, 0],
    functions: [0, 0],
    lines: [0, 0],
  };
  for (const k of Object.keys(acc)) {
    acc[k][0] += metrics[k].covered;
    acc[k][1] += metrics[k].total;
  }
  byPackage.set(pkg, acc);
}
const pct = ([c, t]) => (t === 0 ? '100.0' : ((100 * c) / t).toFixed(1));
console.log('package                 statements  branches  functions  lines');
for (const [pkg, a] of [...byPackage].sort()) {
  console.log(
    `${pkg.padEnd(24)}${pct(a.statements).padStart(10)}${pct(a.branches).padStart(10)}${pct(a.functions).padStart(11)}${pct(a.lines).padStart(7)}`,
  );
}

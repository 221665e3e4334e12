#!/usr/bin/env node
// Every public export of every public @kubeloop package is listed in that package's README.
// For each entry of each package's `exports` map (".", "./transport", ...), the TypeScript compiler
// enumerates what the entry exports (runtime values and types, through `export *` and re-exports from
// other packages), on the sources (`@kubeloop/source` condition: no build needed). Each name must appear
// as a word inside an inline code span (`name`, `name(opts)`, `Foo<T>`...) of the package README, outside
// fenced code blocks: an API table or a list, not a usage example.
// Also, the other way round: every `import { … } from '@kubeloop/…'` in a TypeScript/JavaScript code block of
// the repository's Markdown (READMEs, docs/, CONTRIBUTING) names exports that exist, so a snippet does not
// go stale when an export is renamed or leaves an index.
// Exits 1 listing the missing names per package and entry point, and the stale imports by file and line.
// Usage: node scripts/check-readme-exports.mjs [--list]   (--list prints every export and its kind)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const listAll = process.argv.includes('--list');
const started = Date.now();

const rootPkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const publicPackages = rootPkg.workspaces
  .map((dir) => ({ dir, pkg: JSON.parse(fs.readFileSync(path.join(root, dir, 'package.json'), 'utf8')) }))
  .filter(({ pkg }) => !pkg.private && (pkg.name.startsWith('@kubeloop/') || pkg.name === 'create-kubeloop'));

const problems = [];
const entries = [];
for (const { dir, pkg } of publicPackages) {
  for (const [subpath, target] of Object.entries(pkg.exports ?? {})) {
    if (typeof target !== 'object' || target === null) continue; // ./package.json
    const source = target['@kubeloop/source'];
    if (typeof source !== 'string') {
      problems.push(`${pkg.name}: exports["${subpath}"] has no "@kubeloop/source" condition to read`);
      continue;
    }
    entries.push({ dir, pkg, subpath, file: path.join(root, dir, source) });
  }
}

// one program for all entries: the packages share most of their sources
const base = ts.readConfigFile(path.join(root, 'tsconfig.base.json'), ts.sys.readFile);
const { options } = ts.parseJsonConfigFileContent(base.config, ts.sys, root);
const program = ts.createProgram({
  rootNames: entries.map((e) => e.file),
  options: { ...options, noEmit: true, customConditions: ['@kubeloop/source'] },
});
const checker = program.getTypeChecker();

function exportsOf(file) {
  const sf = program.getSourceFile(file);
  const moduleSymbol = sf && checker.getSymbolAtLocation(sf);
  if (!moduleSymbol) return undefined;
  return checker.getExportsOfModule(moduleSymbol).map((sym) => {
    const target = sym.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(sym) : sym;
    const typeOnly = (sym.declarations ?? []).some(
      (d) => ts.isTypeOnlyImportOrExportDeclaration?.(d) ?? false,
    );
    const isValue = !typeOnly && (target.flags & ts.SymbolFlags.Value) !== 0;
    return { name: sym.getName(), kind: isValue ? 'value' : 'type' };
  });
}

// the words inside inline code spans of a README, fenced blocks removed first
function listedWords(readme) {
  const text = readme.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  const words = new Set();
  for (const span of text.matchAll(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g)) {
    for (const word of span[2].matchAll(/[A-Za-z_$][\w$]*/g)) words.add(word[0]);
  }
  return words;
}

const readmes = new Map();
const exportsByEntry = new Map();
let total = 0;
for (const { dir, pkg, subpath, file } of entries) {
  const names = exportsOf(file);
  exportsByEntry.set(subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`, names);
  if (!names) {
    problems.push(`${pkg.name}: exports["${subpath}"]: cannot read ${path.relative(root, file)}`);
    continue;
  }
  if (!readmes.has(dir)) {
    const readmePath = path.join(root, dir, 'README.md');
    readmes.set(dir, fs.existsSync(readmePath) ? listedWords(fs.readFileSync(readmePath, 'utf8')) : null);
  }
  const words = readmes.get(dir);
  if (!words) {
    problems.push(`${dir}: no README.md`);
    continue;
  }
  total += names.length;
  const entry = subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`;
  if (listAll)
    for (const n of names.toSorted((a, b) => a.name.localeCompare(b.name)))
      console.log(`${entry}\t${n.kind}\t${n.name}${words.has(n.name) ? '' : '\t(not in README)'}`);
  const missing = names.filter((n) => !words.has(n.name));
  if (missing.length > 0) {
    const show = (kind) =>
      missing
        .filter((n) => n.kind === kind)
        .map((n) => n.name)
        .sort()
        .join(', ');
    const parts = [
      ['value', show('value')],
      ['type', show('type')],
    ].filter(([, s]) => s);
    problems.push(
      `${dir}/README.md does not list ${missing.length} export(s) of ${entry}: ` +
        parts.map(([k, s]) => `${k}s: ${s}`).join('; '),
    );
  }
}

// the imports of the Markdown code blocks
function markdownFiles() {
  const files = ['README.md', 'CONTRIBUTING.md'];
  const walk = (dir) => {
    for (const e of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (!['node_modules', 'dist', 'api', 'coverage', '.turbo'].includes(e.name)) walk(rel);
      } else if (e.name.endsWith('.md') && e.name !== 'CHANGELOG.md') files.push(rel);
    }
  };
  for (const dir of ['docs', ...rootPkg.workspaces]) if (fs.existsSync(path.join(root, dir))) walk(dir);
  return files.filter((f) => fs.existsSync(path.join(root, f)));
}

let snippets = 0;
for (const rel of markdownFiles()) {
  const text = fs.readFileSync(path.join(root, rel), 'utf8');
  for (const block of text.matchAll(
    /^(```|~~~)(ts|typescript|js|javascript|mjs|tsx)?[^\n]*\n([\s\S]*?)^\1/gm,
  )) {
    if (!block[2]) continue;
    const firstLine = text.slice(0, block.index).split('\n').length + 1;
    const sf = ts.createSourceFile('snippet.ts', block[3], ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
    for (const stmt of sf.statements) {
      if (!ts.isImportDeclaration(stmt) || !ts.isStringLiteral(stmt.moduleSpecifier)) continue;
      const from = stmt.moduleSpecifier.text;
      const names = exportsByEntry.get(from);
      if (!from.startsWith('@kubeloop/')) continue;
      snippets++;
      const line = firstLine + sf.getLineAndCharacterOfPosition(stmt.getStart(sf)).line;
      if (names === undefined) {
        // a private workspace (apps) is not a public entry point; anything else is a wrong subpath
        const known = [...exportsByEntry.keys()].some((e) => from === e || from.startsWith(`${e}/`));
        const pkgName = from.split('/').slice(0, 2).join('/');
        if (known || publicPackages.some(({ pkg }) => pkg.name === pkgName))
          problems.push(`${rel}:${line}: imports from ${from}, which is not an entry point`);
        continue;
      }
      const bindings = stmt.importClause?.namedBindings;
      if (!bindings || !ts.isNamedImports(bindings)) continue;
      const have = new Set(names.map((n) => n.name));
      const stale = bindings.elements
        .map((el) => (el.propertyName ?? el.name).text)
        .filter((n) => !have.has(n));
      if (stale.length > 0)
        problems.push(`${rel}:${line}: imports ${stale.join(', ')} from ${from}, which does not export it`);
    }
  }
}

const secs = ((Date.now() - started) / 1000).toFixed(1);
if (problems.length > 0) {
  console.error(`check-readme-exports: ${problems.length} problem(s) in ${secs} s`);
  for (const p of problems) console.error(`  ${p}`);
  process.exit(1);
}
console.log(
  `check-readme-exports: ${total} exports of ${entries.length} entry points (${publicPackages.length} packages) all listed in their README; ${snippets} Markdown imports of them valid; ${secs} s`,
);

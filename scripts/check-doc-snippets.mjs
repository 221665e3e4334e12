#!/usr/bin/env node
// Every TypeScript code block of docs/*.md, the root README and each workspace's README compiles, as a whole,
// against the built packages (their dist/ declarations, as a user who installed them sees them): not only its
// imports, every call, option and type. Each block is its own ES module (top-level await allowed), checked in
// one program with the repository's compiler options (strict) minus the unused-name checks (a snippet shows a
// value without always using it).
// A block that continues an earlier one, or shows a fragment (a method body, a reconciler's inside), declares
// what it takes from its context in an HTML comment right before its fence, which is compiled with it and not
// shown when the Markdown is rendered:
//   <!-- snippet-context
//   import type { Client } from '@kubeloop/client';
//   declare const client: Client;
//   -->
// A block marked ```ts ignore is not compiled (say in the text why: e.g. a shape, not code).
// Run after `npm run build` (npm run check:packages). Exits 1 listing each error by file and line.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const started = Date.now();
const rootPkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));

const markdown = ['README.md'];
for (const f of fs.readdirSync(path.join(root, 'docs'))) if (f.endsWith('.md')) markdown.push(`docs/${f}`);
for (const dir of rootPkg.workspaces)
  if (fs.existsSync(path.join(root, dir, 'README.md'))) markdown.push(`${dir}/README.md`);

/** One compiled block: its virtual file, where it is in the Markdown, and how many context lines precede it. */
const snippets = [];
for (const rel of markdown) {
  const text = fs.readFileSync(path.join(root, rel), 'utf8');
  const fence =
    /(?:^[ \t]*<!--\s*snippet-context\n((?:(?!-->)[\s\S])*?)[ \t]*-->[ \t]*\n)?^([ \t]*)```(ts|typescript)([^\n]*)\n([\s\S]*?)^\2```/gm;
  for (const m of text.matchAll(fence)) {
    if (/\bignore\b/.test(m[4])) continue;
    const indent = m[2];
    const unindent = (block) =>
      block
        .split('\n')
        .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l))
        .join('\n');
    const context = m[1] === undefined ? '' : unindent(m[1]);
    const code = unindent(m[5]);
    const codeLine =
      text.slice(0, m.index).split('\n').length + 1 + (m[1] === undefined ? 0 : m[1].split('\n').length + 1);
    const file = path.join(root, '.doc-snippets', `${rel.replace(/[/.]/g, '_')}_${snippets.length}.ts`);
    const contextLines = context === '' ? 0 : context.split('\n').length - 1;
    snippets.push({ rel, file, codeLine, contextLines, source: `${context}${code}\nexport {};\n` });
  }
}

const base = ts.readConfigFile(path.join(root, 'tsconfig.base.json'), ts.sys.readFile);
const { options } = ts.parseJsonConfigFileContent(base.config, ts.sys, root);
const compilerOptions = {
  ...options,
  noEmit: true,
  declaration: false,
  declarationMap: false,
  sourceMap: false,
  noUnusedLocals: false,
  noUnusedParameters: false,
  allowImportingTsExtensions: false,
};
const virtual = new Map(snippets.map((s) => [s.file, s.source]));
const host = ts.createCompilerHost(compilerOptions);
const { fileExists, readFile, getSourceFile } = host;
host.fileExists = (f) => virtual.has(f) || fileExists.call(host, f);
host.readFile = (f) => virtual.get(f) ?? readFile.call(host, f);
host.getSourceFile = (f, lang, onError, create) =>
  virtual.has(f)
    ? ts.createSourceFile(f, virtual.get(f), lang, true, ts.ScriptKind.TS)
    : getSourceFile.call(host, f, lang, onError, create);
// the snippets resolve packages as a user's project does: from node_modules, to dist/ (no source condition)
const program = ts.createProgram({ rootNames: snippets.map((s) => s.file), options: compilerOptions, host });

const problems = [];
for (const s of snippets) {
  const sf = program.getSourceFile(s.file);
  for (const d of [...program.getSyntacticDiagnostics(sf), ...program.getSemanticDiagnostics(sf)]) {
    const { line } = d.start === undefined ? { line: 0 } : sf.getLineAndCharacterOfPosition(d.start);
    const where =
      line < s.contextLines
        ? `${s.rel}: snippet-context before line ${s.codeLine - 1}`
        : `${s.rel}:${s.codeLine + line - s.contextLines}`;
    problems.push(`${where}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, '\n    ')}`);
  }
}

const secs = ((Date.now() - started) / 1000).toFixed(1);
if (problems.length > 0) {
  console.error(
    `check-doc-snippets: ${problems.length} error(s) in ${snippets.length} TypeScript blocks, ${secs} s`,
  );
  for (const p of problems) console.error(`  ${p}`);
  process.exit(1);
}
console.log(
  `check-doc-snippets: ${snippets.length} TypeScript blocks of ${markdown.length} Markdown files compile against the built packages; ${secs} s`,
);

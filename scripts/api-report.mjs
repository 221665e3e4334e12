#!/usr/bin/env node
// The public API as a reviewed artefact (controller-runtime's apidiff, Effect's API diffs): api-extractor writes
// one report per entry point of every public @kubeloop/* package (packages/<name>/api/<entry>.api.md) from the
// built declarations. `node scripts/api-report.mjs` (CI, from check:packages) fails when a report differs from the
// committed one and prints the diff; `--update` (npm run api:update) rewrites the reports to commit with the change.
// One TypeScript program serves every entry point (api-extractor's CompilerState), so the check costs one
// compile, not one per entry point. Needs the build (`npm run build:all`).
// It also fails when an entry point's public surface holds a member tagged `@internal` (api-extractor marks it
// `// @internal` in the report): an internal member must be kept off the published types (not exported,
// ES-private, or a private constructor), not only tagged.
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CompilerState, Extractor, ExtractorConfig } from '@microsoft/api-extractor';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const update = process.argv.includes('--update');
const started = Date.now();

/** Every entry point of the public packages: name, package folder, its `.d.ts`, the report file's base name. */
function entryPoints() {
  const out = [];
  for (const dir of readdirSync(join(root, 'packages')).sort()) {
    const pkgDir = join(root, 'packages', dir);
    const pkgFile = join(pkgDir, 'package.json');
    if (!existsSync(pkgFile)) continue;
    const pkg = JSON.parse(readFileSync(pkgFile, 'utf8'));
    if (pkg.private) continue;
    for (const [sub, target] of Object.entries(pkg.exports ?? {})) {
      if (typeof target !== 'object' || !target.types) continue;
      const base = sub === '.' ? 'index' : sub.slice(2).replaceAll('/', '-');
      out.push({
        name: `${pkg.name}${sub === '.' ? '' : sub.slice(1)}`,
        pkgDir,
        pkgFile,
        dts: join(pkgDir, target.types),
        base,
      });
    }
  }
  return out;
}

const entries = entryPoints();
for (const e of entries) {
  if (!existsSync(e.dts)) {
    console.error(`api-report: ${relative(root, e.dts)} is missing; run npm run build:all first`);
    process.exit(2);
  }
}

function configFor(e) {
  const reportFolder = join(e.pkgDir, 'api');
  mkdirSync(reportFolder, { recursive: true });
  return ExtractorConfig.prepare({
    configObject: {
      projectFolder: e.pkgDir,
      mainEntryPointFilePath: e.dts,
      compiler: { tsconfigFilePath: join(root, 'tsconfig.base.json') },
      apiReport: {
        enabled: true,
        reportFileName: `${e.base}.api.md`,
        reportFolder,
        reportTempFolder: join(root, 'node_modules', '.cache', 'api-report', relative(root, e.pkgDir)),
      },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        compilerMessageReporting: { default: { logLevel: 'warning' } },
        // Release tags (@public/@beta) are not used here; TSDoc style is typedoc's gate (npm run docs).
        extractorMessageReporting: {
          default: { logLevel: 'warning' },
          'ae-missing-release-tag': { logLevel: 'none' },
          'ae-forgotten-export': { logLevel: 'none', addToApiReportFile: true },
          'ae-internal-missing-underscore': { logLevel: 'none', addToApiReportFile: false },
          'ae-unresolved-link': { logLevel: 'none', addToApiReportFile: false },
          'ae-undocumented': { logLevel: 'none', addToApiReportFile: false },
          'ae-missing-getter': { logLevel: 'none', addToApiReportFile: true },
        },
        tsdocMessageReporting: { default: { logLevel: 'none' } },
      },
    },
    configObjectFullPath: join(e.pkgDir, 'api-extractor.json'),
    packageJsonFullPath: e.pkgFile,
  });
}

const configs = entries.map(configFor);
const compilerState = CompilerState.create(configs[0], {
  additionalEntryPoints: configs.map((c) => c.mainEntryPointFilePath),
});
const changed = [];
const internal = [];
let warnings = 0;
for (const [i, config] of configs.entries()) {
  const result = Extractor.invoke(config, {
    localBuild: update,
    compilerState,
    showVerboseMessages: false,
    messageCallback: (m) => {
      // The report check's own messages ("You have changed the API signature") are counted as changes above.
      if (
        (m.logLevel === 'warning' || m.logLevel === 'error') &&
        !String(m.messageId).startsWith('console-api-report')
      )
        warnings++;
      if (m.logLevel === 'info' || m.logLevel === 'verbose') m.handled = true;
    },
  });
  if (result.apiReportChanged) changed.push(entries[i].name);
  // The report just generated (written to the temp folder in both modes): each `// @internal` line is followed by
  // the declaration it tags.
  const generated = join(config.reportTempFolder, `${entries[i].base}.api.md`);
  const lines = existsSync(generated) ? readFileSync(generated, 'utf8').split('\n') : [];
  for (const [n, line] of lines.entries()) {
    if (line.trim() !== '// @internal') continue;
    const decl = lines.slice(n + 1).find((l) => !l.trim().startsWith('//')) ?? '';
    internal.push(`${entries[i].name}: ${decl.trim()}`);
  }
}
if (internal.length > 0) {
  console.error(
    `api-report: ${internal.length} @internal member(s) reachable from a package's exports (keep them off the ` +
      `published types: stop exporting them, make them ES-private, or give the class a private constructor):\n  ${internal.join('\n  ')}`,
  );
  process.exit(1);
}
const secs = ((Date.now() - started) / 1000).toFixed(1);
if (changed.length > 0 && !update) {
  console.error(
    `api-report: the public API of ${changed.join(', ')} differs from the committed report (diff above). ` +
      'If the change is meant, run `npm run api:update` and commit packages/*/api/*.api.md with it.',
  );
  process.exit(1);
}
console.log(
  `api-report: ${entries.length} entry points, ${update ? `${changed.length} reports rewritten` : 'every report matches'}; ${warnings} warnings; ${secs} s`,
);
if (warnings > 0) process.exit(1);

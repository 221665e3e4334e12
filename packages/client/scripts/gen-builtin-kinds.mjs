#!/usr/bin/env node
/**
 * Generates the wire-accurate model types and the kind descriptors of every built-in resource of Kubernetes 1.32:
 *
 * - `src/models/generated.ts`: one interface per model reachable from the built-in kinds, with
 *   `@kubernetes/client-node`'s names, fields, required flags and descriptions (client-node is generated from the
 *   Kubernetes OpenAPI definitions; it is a devDependency here, so the output is checked in and consumers need
 *   no client-node). Field types are written as they are on the wire, where client-node's converting
 *   serializer departs from it: `date-time` fields are `Time` (an RFC 3339 string, not `Date`), `date-time-micro`
 *   fields `MicroTime` (string), `int-or-string` fields `IntOrString` (`number | string`), `byte` fields `Bytes`
 *   (a base64 string), and free-form JSON (`RawExtension`, `JSON`, `FieldsV1`: client-node's `any`) `unknown`.
 * - `src/builtin-kinds.ts`: a `BuiltinKind` descriptor for every resource of the aggregated discovery recorded
 *   from a real kube-apiserver v1.32 (packages/envtest/test/golden/1.32, or KUBELOOP_WIRE_DIR), with its
 *   resource name, scope and subresources, as named constants and grouped by API group and version.
 *
 * Run: node packages/client/scripts/gen-builtin-kinds.mjs && npx biome check --write packages/client
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as client from '@kubernetes/client-node';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, '../package.json'));
const clientDir = dirname(require.resolve('@kubernetes/client-node/package.json'));
const modelsDir = join(clientDir, 'dist/gen/models');
const clientVersion = JSON.parse(readFileSync(join(clientDir, 'package.json'), 'utf8')).version;

const wire = process.env.KUBELOOP_WIRE_DIR ?? resolve(here, '../../envtest/test/golden/1.32');
const golden = join(wire, 'golden');
if (!existsSync(golden)) {
  console.error(`no wire recordings at ${golden} (set KUBELOOP_WIRE_DIR)`);
  process.exit(1);
}
const body = (name) => JSON.parse(readFileSync(join(golden, `${name}.json`), 'utf8')).response.body;

const cap = (s) => s.charAt(0).toUpperCase() + s.slice(1);

// --- discovery: every resource of every group version, in the server's order --------------------------------
const resources = [];
for (const [doc, core] of [
  [body('discovery-api-aggregated'), true],
  [body('discovery-apis-aggregated'), false],
]) {
  for (const item of doc.items) {
    const group = core ? '' : item.metadata.name;
    item.versions.forEach((v, i) => {
      for (const r of v.resources) {
        resources.push({
          group,
          version: v.version,
          preferred: i === 0,
          resource: r.resource,
          kind: r.responseKind.kind,
          namespaced: r.scope === 'Namespaced',
          verbs: [...r.verbs].sort(),
          subresources: (r.subresources ?? []).map((s) => s.subresource).sort(),
        });
      }
    });
  }
}

// --- models: parsed from client-node's declarations and attribute maps -----------------------------------------
function parseModel(name) {
  let text;
  try {
    text = readFileSync(join(modelsDir, `${name}.d.ts`), 'utf8');
  } catch {
    return undefined;
  }
  const cls = new RegExp(
    `/\\*\\*\\n\\*([\\s\\S]*?)\\*/\\nexport declare class ${name} \\{([\\s\\S]*?)\\n\\}`,
  ).exec(text);
  const classBody = cls
    ? cls[2]
    : (new RegExp(`export declare class ${name} \\{([\\s\\S]*?)\\n\\}`).exec(text)?.[1] ?? '');
  const docs = {};
  const re = /(?:\/\*\*\n\s*\*([\s\S]*?)\*\/\n)?\s*'([^']+)'(\?)?: ((?:\{[^}]*\})|[^;]+);/g;
  for (let m = re.exec(classBody); m; m = re.exec(classBody)) {
    const desc = m[1] ? m[1].replace(/\n\s*\*/g, '\n').trim() : '';
    docs[m[2]] = { required: !m[3], desc };
  }
  // biome-ignore lint/performance/noDynamicNamespaceImportAccess: a code generator looks model classes up by name; bundle size is moot here
  const attrs = client[name]?.getAttributeTypeMap?.() ?? [];
  const fields = attrs.map((a) => ({
    json: a.baseName,
    type: a.type,
    format: a.format,
    required: docs[a.name]?.required ?? false,
    desc: docs[a.name]?.desc ?? '',
  }));
  return { desc: cls ? cls[1].replace(/\n\*/g, '\n').trim() : '', fields };
}

// Fields Kubernetes 1.32 requires that client-node's newer models (1.33+) made optional; the model test
// (test/models-openapi.test.ts) finds any other difference against the recorded 1.32 OpenAPI.
const REQUIRED_IN_1_32 = { V1NetworkPolicySpec: ['podSelector'], V1StatefulSetSpec: ['serviceName'] };

const models = new Map();
const MODEL_REF = /\b[A-Z]\w*V\d\w*\b|\bV\d\w*\b/g;
function walk(name) {
  if (models.has(name) || name === 'V1MicroTime') return;
  const m = parseModel(name);
  if (!m) throw new Error(`no client-node model ${name}`);
  for (const f of m.fields) if (REQUIRED_IN_1_32[name]?.includes(f.json)) f.required = true;
  models.set(name, m);
  for (const f of m.fields) for (const ref of f.type.match(MODEL_REF) ?? []) walk(ref);
}

function modelFor(group, version, kind) {
  const prefix = group === '' ? 'Core' : cap(group.split('.')[0]);
  return [`${prefix}${cap(version)}${kind}`, `${cap(version)}${kind}`].find((c) => parseModel(c));
}

for (const r of resources) {
  r.model = modelFor(r.group, r.version, r.kind);
  if (!r.model) throw new Error(`no client-node model for ${r.group}/${r.version} ${r.kind}`);
  walk(r.model);
}
// bodies of subresources and of API replies the client hands out
for (const extra of [
  'V1Scale',
  'V1Eviction',
  'AuthenticationV1TokenRequest',
  'V1Status',
  'V1Condition',
  'V1OwnerReference',
  'V1ListMeta',
  'V1DeleteOptions',
])
  walk(extra);

/** A client-node attribute type written as its wire type. */
function wireType(type, format) {
  const t = type.trim();
  let m = /^Array<(.*)>$/.exec(t);
  if (m) {
    const inner = wireType(m[1], format);
    return /[|&]/.test(inner) ? `Array<${inner}>` : `${inner}[]`;
  }
  m = /^\{ \[key: string\]: (.*); \}$/.exec(t);
  if (m) return `{ [key: string]: ${wireType(m[1], format)} }`;
  if (t === 'Date') return 'Time';
  if (t === 'V1MicroTime') return 'MicroTime';
  if (t === 'IntOrString') return 'IntOrString';
  if (t === 'any') return 'unknown';
  if (t === 'string' && format === 'byte') return 'Bytes';
  if (t === 'string' || t === 'number' || t === 'boolean') return t;
  if (models.has(t)) return t;
  throw new Error(`unmapped type ${t}`);
}

const jsdoc = (text, indent) => {
  if (!text) return '';
  const lines = text.replace(/\*\//g, '*\\/').split('\n');
  return `${indent}/**\n${lines.map((l) => `${indent} * ${l.trim()}`.trimEnd()).join('\n')}\n${indent} */\n`;
};
const propName = (n) => (/^[A-Za-z_$][\w$]*$/.test(n) ? n : `'${n}'`);

const header = (what) => `// biome-ignore-all format: generated file
// biome-ignore-all lint: generated file
// GENERATED by packages/client/scripts/gen-builtin-kinds.mjs from ${what} — do not edit.
`;

let out = `${header(`@kubernetes/client-node ${clientVersion} models`)}
/**
 * The model types of the built-in kinds of Kubernetes 1.32, as they are on the wire: the fields, names and
 * descriptions of \`@kubernetes/client-node\`'s models, with timestamps as RFC 3339 strings ({@link Time},
 * {@link MicroTime}), int-or-string fields as \`number | string\` ({@link IntOrString}), byte fields as base64
 * strings ({@link Bytes}), quantities as strings (\`Quantity\`) and free-form JSON as \`unknown\`.
 * @module
 */
import type { Bytes, IntOrString, MicroTime, Time } from './scalars.js';

`;
for (const name of [...models.keys()].sort()) {
  const m = models.get(name);
  out += jsdoc(m.desc, '');
  out += `export interface ${name} {\n`;
  for (const f of m.fields) {
    // client-node drops the description beside a $ref (metadata, spec, status, …): the field then says what its
    // type is, in the referenced model's own words, rather than nothing
    const ref = wireType(f.type, f.format).replace(/\[\]$/, '');
    out += jsdoc(f.desc || (models.has(ref) ? models.get(ref).desc : ''), '  ');
    out += `  ${propName(f.json)}${f.required ? '' : '?'}: ${wireType(f.type, f.format)};\n`;
  }
  out += '}\n\n';
}
writeFileSync(resolve(here, '../src/models/generated.ts'), out);

// --- descriptors -------------------------------------------------------------------------------------------
const groupShort = (g) => (g === '' ? 'core' : g.split('.')[0]);
const flatNames = new Set();
for (const r of resources) {
  if (
    r.preferred &&
    !resources.some(
      (o) => o !== r && o.preferred && o.kind === r.kind && resources.indexOf(o) < resources.indexOf(r),
    )
  )
    if (!flatNames.has(r.kind)) {
      r.constName = r.kind;
      flatNames.add(r.kind);
    }
}
const imports = [...new Set(resources.map((r) => r.model))].sort();
let kinds = `${header('the aggregated discovery recorded from kube-apiserver v1.32 (packages/envtest/test/golden/1.32)')}
import { type BuiltinKind, builtinKind } from './kinds.js';
import type { ${imports.join(', ')} } from './models/generated.js';

`;
const groups = new Map();
for (const r of resources) {
  const apiVersion = r.group ? `${r.group}/${r.version}` : r.version;
  const expr = `builtinKind<${r.model}>(${JSON.stringify(apiVersion)}, ${JSON.stringify(r.kind)}, ${JSON.stringify(r.resource)}, ${r.namespaced}, ${JSON.stringify(r.subresources)}, ${JSON.stringify(r.verbs)})`;
  const gv = `${groupShort(r.group)}${cap(r.version)}`;
  if (!groups.has(gv)) groups.set(gv, { apiVersion, entries: [] });
  const scope = r.namespaced ? 'namespaced' : 'cluster-scoped';
  const subs = r.subresources.length ? `; subresources: ${r.subresources.join(', ')}` : '';
  if (r.constName) {
    kinds += `/** ${apiVersion} ${r.kind} (\`${r.resource}\`, ${scope}${subs}). */\nexport const ${r.constName}: BuiltinKind<${r.model}> = ${expr};\n`;
    groups.get(gv).entries.push(`  ${r.kind}: ${r.constName},`);
  } else {
    groups
      .get(gv)
      .entries.push(
        `  /** ${apiVersion} ${r.kind} (\`${r.resource}\`, ${scope}${subs}). */\n  ${r.kind}: ${expr},`,
      );
  }
}
kinds += '\n';
for (const [gv, { apiVersion, entries }] of groups) {
  kinds += `/** The built-in kinds of \`${apiVersion}\` (client-go's \`${cap(gv)}()\` clientset group). */\nexport const ${gv} = Object.freeze({\n${entries.join('\n')}\n});\n`;
}
kinds += `\n/** Every built-in resource of Kubernetes 1.32 (${resources.length}), in discovery order, grouped by API group and version. */\nexport const builtinKinds: Readonly<Record<string, Readonly<Record<string, BuiltinKind>>>> = Object.freeze({\n${[...groups.keys()].map((g) => `  ${g},`).join('\n')}\n});\n`;
writeFileSync(resolve(here, '../src/builtin-kinds.ts'), kinds);
console.log(`${models.size} models, ${resources.length} resources in ${groups.size} group versions`);

// --- README: the generated list of descriptors and models (every export is named in the README) -------------
const readmePath = resolve(here, '../README.md');
const readme = readFileSync(readmePath, 'utf8');
const BEGIN = '<!-- BEGIN generated by scripts/gen-builtin-kinds.mjs -->';
const END = '<!-- END generated by scripts/gen-builtin-kinds.mjs -->';
let section = `${BEGIN}\n| group version (\`builtinKinds.<name>\`) | kinds (\`BuiltinKind<T>\` descriptors; the model type in brackets) |\n| --- | --- |\n`;
for (const [gv, { apiVersion }] of groups) {
  const rows = resources.filter((r) => `${groupShort(r.group)}${cap(r.version)}` === gv);
  section += `| \`${gv}\` (\`${apiVersion}\`) | ${rows.map((r) => `${r.constName ? `\`${r.constName}\`` : `\`${gv}.${r.kind}\``} (\`${r.model}\`)`).join(', ')} |\n`;
}
section += `\n<details><summary>Every model type of <code>@kubeloop/client/models</code> (${models.size})</summary>\n\n${[
  ...models.keys(),
]
  .sort()
  .map((n) => `\`${n}\``)
  .join(', ')}\n\n</details>\n${END}`;
const a = readme.indexOf(BEGIN);
const b = readme.indexOf(END);
if (a < 0 || b < 0) throw new Error(`README.md has no ${BEGIN} … ${END} section`);
writeFileSync(readmePath, readme.slice(0, a) + section + readme.slice(b + END.length));

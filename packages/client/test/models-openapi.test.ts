/**
 * The generated model types (`src/models/generated.ts`) against the OpenAPI v3 schemas recorded from a real
 * kube-apiserver v1.32.13 (`fixtures/openapi-v3-1.32.json`): for every built-in kind descriptor, the model it
 * carries is walked with the TypeScript checker beside the kind's schema, field by field and through every
 * referenced model, and each field must be present with its wire type — `Time`/`MicroTime`, `Quantity` and
 * byte fields as strings, int-or-string as `number | string`, `RawExtension`/`JSON`/`FieldsV1` as `unknown`,
 * arrays, maps and nested models as such; a field the schema requires must not be optional.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { parseApiVersion } from '../src/entries/apiutil.js';
import { type BuiltinKind, builtinKinds } from '../src/entries/kinds.js';

interface Schema {
  type?: string;
  format?: string;
  $ref?: string;
  allOf?: Schema[];
  oneOf?: Schema[];
  items?: Schema;
  additionalProperties?: Schema | boolean;
  properties?: Record<string, Schema>;
  required?: string[];
  'x-kubernetes-group-version-kind'?: { group: string; version: string; kind: string }[];
}

const here = dirname(fileURLToPath(import.meta.url));
const recorded = JSON.parse(readFileSync(join(here, 'fixtures/openapi-v3-1.32.json'), 'utf8')) as {
  schemas: Record<string, Schema>;
};
const schemas = recorded.schemas;

const STRING_REFS = new Set([
  'io.k8s.apimachinery.pkg.apis.meta.v1.Time',
  'io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime',
  'io.k8s.apimachinery.pkg.api.resource.Quantity',
]);
const UNKNOWN_REFS = new Set([
  'io.k8s.apimachinery.pkg.runtime.RawExtension',
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON',
  'io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1',
  // JSONSchemaProps | boolean, JSONSchemaProps | JSONSchemaProps[], JSONSchemaProps | string[]: free-form
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool',
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray',
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray',
]);
const INT_OR_STRING = 'io.k8s.apimachinery.pkg.util.intstr.IntOrString';

const refOf = (s: Schema): string | undefined =>
  (s.$ref ?? s.allOf?.[0]?.$ref)?.replace('#/components/schemas/', '');

const program = ts.createProgram([join(here, '../src/models/generated.ts')], {
  strict: true,
  noEmit: true,
  skipLibCheck: true,
  types: [],
});
const checker = program.getTypeChecker();
const source = program.getSourceFile(join(here, '../src/models/generated.ts'));
if (!source) throw new Error('generated models not found');
const interfaces = new Map<string, ts.Type>();
for (const st of source.statements)
  if (ts.isInterfaceDeclaration(st)) interfaces.set(st.name.text, checker.getTypeAtLocation(st.name));

/** Model name of a kind, as the descriptor's type argument names it in builtin-kinds.ts. */
function modelNames(): Map<string, string> {
  const text = readFileSync(join(here, '../src/builtin-kinds.ts'), 'utf8');
  const out = new Map<string, string>();
  for (const m of text.matchAll(/builtinKind<(\w+)>\("([^"]+)", "([^"]+)"/g))
    out.set(`${m[2]}/${m[3]}`, m[1] as string);
  return out;
}

function describeType(t: ts.Type): string {
  return checker.typeToString(t);
}

/** Compares one schema with one TS type; pushes a message per mismatch. */
function compare(schema: Schema, type: ts.Type, path: string, problems: string[], seen: Set<string>): void {
  const t = checker.getNonNullableType(type);
  const ref = refOf(schema);
  if (ref !== undefined) {
    if (STRING_REFS.has(ref)) {
      if (!(t.flags & ts.TypeFlags.String))
        problems.push(`${path}: ${ref} should be string, is ${describeType(t)}`);
      return;
    }
    if (UNKNOWN_REFS.has(ref)) {
      if (!(type.flags & ts.TypeFlags.Unknown))
        problems.push(`${path}: ${ref} should be unknown, is ${describeType(type)}`);
      return;
    }
    if (ref === INT_OR_STRING) {
      const parts = t.isUnion() ? t.types.map((u) => u.flags) : [t.flags];
      const ok =
        parts.length === 2 &&
        parts.some((f) => f & ts.TypeFlags.String) &&
        parts.some((f) => f & ts.TypeFlags.Number);
      if (!ok) problems.push(`${path}: IntOrString should be number | string, is ${describeType(t)}`);
      return;
    }
    const target = schemas[ref];
    if (!target) throw new Error(`${path}: unknown ref ${ref}`);
    const key = `${ref}→${describeType(t)}`;
    if (seen.has(key)) return;
    seen.add(key);
    compare(target, t, path, problems, seen);
    return;
  }
  switch (schema.type) {
    case 'string':
      if (!(t.flags & ts.TypeFlags.String)) problems.push(`${path}: should be string, is ${describeType(t)}`);
      return;
    case 'integer':
    case 'number':
      if (!(t.flags & ts.TypeFlags.Number)) problems.push(`${path}: should be number, is ${describeType(t)}`);
      return;
    case 'boolean':
      if (!(t.flags & ts.TypeFlags.Boolean) && !(t.flags & ts.TypeFlags.BooleanLiteral) && !isBooleanUnion(t))
        problems.push(`${path}: should be boolean, is ${describeType(t)}`);
      return;
    case 'array': {
      if (!checker.isArrayType(t)) {
        problems.push(`${path}: should be an array, is ${describeType(t)}`);
        return;
      }
      const [item] = checker.getTypeArguments(t as ts.TypeReference);
      if (schema.items && item) compare(schema.items, item, `${path}[]`, problems, seen);
      return;
    }
    default:
      break;
  }
  if (schema.properties) {
    for (const [name, prop] of Object.entries(schema.properties)) {
      const symbol = t.getProperty(name);
      if (!symbol) {
        problems.push(`${path}.${name}: missing (in ${describeType(t)})`);
        continue;
      }
      if (schema.required?.includes(name) && symbol.flags & ts.SymbolFlags.Optional)
        problems.push(`${path}.${name}: required by the schema but optional`);
      compare(prop, checker.getTypeOfSymbol(symbol), `${path}.${name}`, problems, seen);
    }
    return;
  }
  if (typeof schema.additionalProperties === 'object') {
    const value = t.getStringIndexType();
    if (!value) problems.push(`${path}: should be a map, is ${describeType(t)}`);
    else compare(schema.additionalProperties, value, `${path}{}`, problems, seen);
    return;
  }
  if (schema.type === 'object' && !(type.flags & ts.TypeFlags.Unknown) && !(t.flags & ts.TypeFlags.Object))
    problems.push(`${path}: should be an object, is ${describeType(t)}`);
}

function isBooleanUnion(t: ts.Type): boolean {
  return t.isUnion() && t.types.every((u) => u.flags & ts.TypeFlags.BooleanLiteral);
}

/** The recorded schema of a kind, found by its `x-kubernetes-group-version-kind`. */
function schemaOfKind(k: BuiltinKind): [string, Schema] | undefined {
  const { group, version } = parseApiVersion(k.apiVersion);
  return Object.entries(schemas).find(
    ([name, s]) =>
      name.startsWith('io.k8s.') &&
      !name.endsWith('List') &&
      s['x-kubernetes-group-version-kind']?.some(
        (g) => g.group === group && g.version === version && g.kind === k.kind,
      ),
  );
}

describe('generated model types against the recorded OpenAPI of kube-apiserver 1.32', () => {
  const models = modelNames();
  const all = Object.values(builtinKinds).flatMap((g) => Object.values(g));

  it('cover every built-in kind descriptor', () => {
    expect(all).toHaveLength(59);
    for (const k of all)
      expect(models.get(`${k.apiVersion}/${k.kind}`), `${k.apiVersion} ${k.kind}`).toBeDefined();
  });

  it.each(all.map((k) => [`${k.apiVersion} ${k.kind}`, k] as const))(
    '%s: every field present with its wire type',
    (_, k) => {
      const found = schemaOfKind(k);
      expect(found, `no recorded schema for ${k.apiVersion} ${k.kind}`).toBeDefined();
      const modelName = models.get(`${k.apiVersion}/${k.kind}`) as string;
      const type = interfaces.get(modelName);
      expect(type, modelName).toBeDefined();
      const problems: string[] = [];
      compare((found as [string, Schema])[1], type as ts.Type, modelName, problems, new Set());
      expect(problems).toEqual([]);
    },
  );

  it('the comparison fails on a missing field, a timestamp that is not a string and an optional required field', () => {
    const meta = interfaces.get('V1ObjectMeta') as ts.Type;
    const problems: string[] = [];
    compare(
      {
        type: 'object',
        required: ['name'],
        properties: {
          absent: { type: 'string' },
          generation: { allOf: [{ $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Time' }] },
          name: { type: 'string' },
        },
      },
      meta,
      'X',
      problems,
      new Set(),
    );
    expect(problems).toEqual([
      'X.absent: missing (in V1ObjectMeta)',
      'X.generation: io.k8s.apimachinery.pkg.apis.meta.v1.Time should be string, is number',
      'X.name: required by the schema but optional',
    ]);
  });
});

import { SchemaError } from './errors.js';
import {
  checkKeywords,
  copyCommon,
  DROPPED,
  enumOf,
  fail,
  isNode,
  literalValues,
  type Node,
  SCALARS,
} from './structural-keywords.js';
import type { JSONSchemaProps, ValidationRule } from './types.js';

/**
 * Turns a JSON Schema (as TypeBox builds it: draft 2020-12 keywords) into an OpenAPI v3 *structural* schema as
 * apiextensions.k8s.io/v1 requires it (apiextensions-apiserver `pkg/apiserver/schema`, "Specifying a structural
 * schema" in the CRD docs): every node has a type (or is int-or-string / preserve-unknown-fields), logical junctors
 * carry value validations only, no `$ref`, no `additionalProperties: false`, no `uniqueItems: true`, one schema for
 * `items`. What kube cannot express throws a {@link SchemaError} naming the property path.
 *
 * Mappings: `const`/literal unions → `enum` (with the type); `T | null` → `nullable: true`; `integer | string` →
 * `x-kubernetes-int-or-string`; `Record<string, T>` → `additionalProperties`; an intersection of objects → one
 * object; `Type.Unknown()`/`Type.Any()` → `x-kubernetes-preserve-unknown-fields`; draft-6+ numeric
 * `exclusiveMinimum`/`exclusiveMaximum` → OpenAPI v3.0's `minimum` + boolean; a tagged union (objects that share a
 * string literal property, kube-rs's recurring structural bug) → one object with every variant's properties, the
 * tag as a required `enum`, and a `oneOf` of value validations that ties each tag to its variant's required fields.
 */
export function toStructural(schema: unknown, path: string): JSONSchemaProps {
  return convert(schema, path);
}

function convert(schema: unknown, path: string): JSONSchemaProps {
  if (
    schema === true ||
    (isNode(schema) && Object.keys(schema).every((k) => k === 'description' || DROPPED.has(k)))
  )
    return {
      ...(isNode(schema) && typeof schema.description === 'string'
        ? { description: schema.description }
        : {}),
      'x-kubernetes-preserve-unknown-fields': true,
    };
  if (!isNode(schema)) fail(path, `not a schema: ${JSON.stringify(schema)}`);
  const n = schema;
  checkKeywords(n, path);
  if (Array.isArray(n.anyOf) || Array.isArray(n.oneOf)) return union(n, path);
  if (Array.isArray(n.allOf)) return intersection(n, path);
  checkPlacement(n, path);

  const out: JSONSchemaProps = {};
  copyCommon(n, out, path);
  const literal = literalValues(n);
  if (literal) {
    const e = enumOf(literal, n.type, path);
    return { ...out, ...e };
  }
  // the enum of an object, array, nullable or int-or-string node (a scalar's went through `literalValues`)
  if (Array.isArray(n.enum)) out.enum = structuredClone(n.enum);
  let type = n.type;
  if (Array.isArray(type)) {
    const rest = type.filter((t) => t !== 'null');
    if (rest.length === type.length - 1 && rest.length === 1) {
      out.nullable = true;
      type = rest[0];
    } else if (rest.length === 2 && rest.includes('integer') && rest.includes('string')) {
      out['x-kubernetes-int-or-string'] = true;
      if (rest.length < type.length) out.nullable = true;
      return out;
    } else fail(path, `type ${JSON.stringify(type)}: a structural schema has one type per node`);
  }
  if (type === undefined) {
    if (out['x-kubernetes-int-or-string'] || out['x-kubernetes-preserve-unknown-fields']) {
      if (n.properties !== undefined || n.additionalProperties !== undefined || n.items !== undefined)
        fail(path, 'properties, additionalProperties and items need type: object / array');
      return out;
    }
    fail(path, 'type is required: a structural schema gives every node a type');
  }
  if (type === 'null') fail(path, 'null alone is not a type in a CRD schema: use Nullable(T) for T | null');
  if (type === 'object') return object(n, out, path);
  if (type === 'array') return array(n, out, path);
  if (!SCALARS.has(type as string))
    fail(
      path,
      `type ${JSON.stringify(type)} cannot be expressed in a CRD schema (a TypeBox JavaScript type?)`,
    );
  out.type = type as JSONSchemaProps['type'];
  if (out['x-kubernetes-int-or-string'])
    fail(path, 'x-kubernetes-int-or-string is set on a node with a type: use IntOrString() alone');
  return out;
}

/**
 * The structure keywords of a node that its type cannot carry, refused instead of dropped: `properties`,
 * `patternProperties`, `additionalProperties` and `required` are for `type: object`, `items` for `type: array`
 * (the generated CRD would otherwise silently lose them).
 */
function checkPlacement(n: Node, path: string): void {
  // an int-or-string has no type but is a scalar
  if (n.type === undefined && n['x-kubernetes-int-or-string'] !== true) return;
  const types = Array.isArray(n.type) ? n.type : [n.type];
  const objectOnly = ['properties', 'patternProperties', 'additionalProperties', 'required'].filter(
    (k) => n[k] !== undefined && !(k === 'additionalProperties' && n[k] === false),
  );
  const typeName = n.type === undefined ? 'int-or-string' : JSON.stringify(n.type);
  if (objectOnly.length > 0 && !types.includes('object'))
    fail(
      path,
      `${objectOnly.join(', ')} given to a node of type ${typeName}: only type: object has properties (the CRD schema would drop them)`,
    );
  if (n.items !== undefined && !types.includes('array'))
    fail(
      path,
      `items given to a node of type ${typeName}: only type: array has items (the CRD schema would drop them)`,
    );
}

/** The structure keywords given to a union or intersection itself, which its members define instead. */
function checkCombinedPlacement(n: Node, path: string, what: string): void {
  const given = ['properties', 'patternProperties', 'additionalProperties', 'required', 'items'].filter(
    (k) => n[k] !== undefined && !(k === 'additionalProperties' && n[k] === false),
  );
  if (given.length > 0)
    fail(
      path,
      `${given.join(', ')} given to ${what} itself: give them to its members (the CRD schema would drop them)`,
    );
}

const CATCH_ALL = new Set(['^.*$', '^(.*)$', '.*', '^[\\s\\S]*$']);

function object(n: Node, out: JSONSchemaProps, path: string): JSONSchemaProps {
  out.type = 'object';
  if (isNode(n.properties)) {
    const props: Record<string, JSONSchemaProps> = {};
    for (const [k, v] of Object.entries(n.properties)) props[k] = convert(v, path ? `${path}.${k}` : k);
    if (Object.keys(props).length > 0) out.properties = props;
  }
  if (Array.isArray(n.required) && n.required.length > 0) {
    const missing = n.required.filter((r) => !out.properties || !(r in out.properties));
    if (missing.length > 0)
      fail(
        path,
        `required names ${missing.map((m) => JSON.stringify(m)).join(', ')}, which has no schema in properties`,
      );
    out.required = [...(n.required as string[])];
  }
  let additional: JSONSchemaProps | undefined;
  if (isNode(n.patternProperties)) {
    const patterns = Object.keys(n.patternProperties);
    if (patterns.length !== 1 || !CATCH_ALL.has(patterns[0] as string))
      fail(
        path,
        `patternProperties ${patterns.map((p) => JSON.stringify(p)).join(', ')} cannot be expressed in a CRD schema: only a map with any string key (Type.Record(Type.String(), T)); check keys with a CEL rule`,
      );
    additional = convert(n.patternProperties[patterns[0] as string], `${path}[*]`);
  }
  if (n.additionalProperties !== undefined && n.additionalProperties !== false) {
    if (additional) fail(path, 'both patternProperties and additionalProperties are set');
    if (n.additionalProperties === true) out['x-kubernetes-preserve-unknown-fields'] = true;
    else additional = convert(n.additionalProperties, `${path}[*]`);
  }
  if (additional) {
    if (out.properties)
      fail(
        path,
        'properties and additionalProperties (a record) are mutually exclusive in a structural schema',
      );
    out.additionalProperties = additional;
  }
  if (
    out['x-kubernetes-embedded-resource'] &&
    !out.properties &&
    !out['x-kubernetes-preserve-unknown-fields']
  )
    fail(path, 'x-kubernetes-embedded-resource needs properties or x-kubernetes-preserve-unknown-fields');
  if (out['x-kubernetes-list-type'] || out['x-kubernetes-list-map-keys'])
    fail(path, 'x-kubernetes-list-type is for arrays, not objects');
  return out;
}

function array(n: Node, out: JSONSchemaProps, path: string): JSONSchemaProps {
  out.type = 'array';
  if (Array.isArray(n.items))
    fail(path, 'tuples cannot be expressed in a CRD schema: use an object or an array of one item type');
  if (n.items === undefined) fail(path, 'items is required for an array in a structural schema');
  const items = convert(n.items, `${path}[*]`);
  out.items = items;
  const listType = out['x-kubernetes-list-type'];
  const keys = out['x-kubernetes-list-map-keys'];
  if (keys !== undefined && listType !== 'map')
    fail(path, 'x-kubernetes-list-map-keys needs x-kubernetes-list-type: map');
  if (listType !== undefined && !['atomic', 'set', 'map'].includes(listType))
    fail(
      path,
      `x-kubernetes-list-type: Unsupported value: ${JSON.stringify(listType)}: supported values: "atomic", "map", "set"`,
    );
  if (listType === 'set') {
    const scalar = SCALARS.has(items.type as string) || items['x-kubernetes-int-or-string'];
    const atomic = items.type === 'object' && items['x-kubernetes-map-type'] === 'atomic';
    const atomicList = items.type === 'array' && items['x-kubernetes-list-type'] === 'atomic';
    if (!scalar && !atomic && !atomicList)
      fail(path, 'x-kubernetes-list-type: set needs scalar items (or atomic ones): use ListMap for objects');
  }
  if (listType === 'map') {
    if (items.type !== 'object') fail(path, 'x-kubernetes-list-type: map needs object items');
    if (!keys || keys.length === 0)
      fail(path, 'x-kubernetes-list-type: map needs x-kubernetes-list-map-keys');
    for (const key of keys) {
      const prop = items.properties?.[key];
      if (!prop) fail(`${path}[*]`, `list map key "${key}" is not a property of the items`);
      if (!SCALARS.has(prop.type as string) && !prop['x-kubernetes-int-or-string'])
        fail(`${path}[*].${key}`, 'a list map key must be a scalar');
      if (!items.required?.includes(key) && prop.default === undefined)
        fail(`${path}[*].${key}`, 'a list map key must be required or have a default');
    }
  }
  return out;
}

function union(n: Node, path: string): JSONSchemaProps {
  const members = (n.anyOf ?? n.oneOf) as unknown[];
  if (members.some((m) => !isNode(m))) fail(path, 'a union member is not a schema');
  const nodes = members as Node[];
  checkCombinedPlacement(n, path, 'a union');
  const outer: JSONSchemaProps = {};
  copyCommon(n, outer, path);
  const nonNull = nodes.filter((m) => m.type !== 'null');
  if (nonNull.length < nodes.length) outer.nullable = true;
  if (nonNull.length === 0) fail(path, 'a union of null only cannot be expressed');

  // literal unions: 'a' | 'b' → enum
  const literals = nonNull.map(literalValues);
  if (literals.every((l) => l !== undefined)) {
    if (n.enum !== undefined)
      fail(
        path,
        'enum given to a union of literals: its literals are its enum (the CRD schema would drop this one)',
      );
    const e = enumOf(literals.flat(), undefined, path);
    // null needs no place in the enum: kube-openapi checks only the type of a null value
    return { ...outer, ...e };
  }
  if (Array.isArray(n.enum)) outer.enum = structuredClone(n.enum);
  if (nonNull.length === 1) {
    const inner = convert(nonNull[0], path);
    if (inner.enum && outer.enum)
      fail(path, 'enum given both to a nullable union and to its member: keep one');
    return { ...inner, ...outer, ...(outer.nullable ? { nullable: true } : {}) };
  }
  // integer | string → int-or-string
  const plainTypes = nonNull.map((m) =>
    typeof m.type === 'string' && Object.keys(m).length === 1 ? m.type : undefined,
  );
  if (plainTypes.length === 2 && plainTypes.includes('integer') && plainTypes.includes('string'))
    return { ...outer, 'x-kubernetes-int-or-string': true };
  if (nonNull.every((m) => m.type === 'object')) return tagged(nonNull, outer, path);
  const kinds = nonNull.map((m) =>
    typeof m.type === 'string' ? m.type : Array.isArray(m.anyOf) ? 'union' : 'untyped',
  );
  fail(
    path,
    `a union of ${kinds.join(' | ')} cannot be expressed in a structural schema (one type per node): use IntOrString() for integer | string, a tagged union of objects, or PreserveUnknownFields()`,
  );
}

/** A tagged union of objects in the structural form (see {@link toStructural}). */
function tagged(variants: Node[], outer: JSONSchemaProps, path: string): JSONSchemaProps {
  const converted = variants.map((v, i) => {
    try {
      return convert(v, path);
    } catch (err) {
      if (err instanceof SchemaError) throw err;
      throw new SchemaError(path, `union member ${i}: ${String(err)}`);
    }
  });
  // the discriminator: a property that is a single string literal in every variant, with distinct values
  const first = converted[0] as JSONSchemaProps;
  const candidates = Object.keys(first.properties ?? {}).filter((key) =>
    converted.every((c) => {
      const p = c.properties?.[key];
      return p?.type === 'string' && p.enum?.length === 1 && c.required?.includes(key);
    }),
  );
  const tag = candidates.find((key) => {
    const values = converted.map((c) => c.properties?.[key]?.enum?.[0]);
    return new Set(values).size === values.length;
  });
  if (!tag)
    fail(
      path,
      'a union of objects needs a discriminator (a required string literal property with a distinct value in every variant, e.g. type: Type.Literal("s3")) to be expressed in a structural schema',
    );
  const properties: Record<string, JSONSchemaProps> = {};
  const tags: unknown[] = [];
  for (const c of converted) {
    for (const [k, p] of Object.entries(c.properties ?? {})) {
      if (k === tag) {
        tags.push(p.enum?.[0]);
        continue;
      }
      const seen = properties[k];
      if (seen && JSON.stringify(canonical(seen)) !== JSON.stringify(canonical(p)))
        fail(
          `${path}.${k}`,
          `the variants of a tagged union give property "${k}" different schemas; a structural schema has one schema per property: rename one of them`,
        );
      properties[k] = p;
    }
  }
  const tagSchema = (first.properties?.[tag] ?? {}) as JSONSchemaProps;
  properties[tag] = { ...tagSchema, type: 'string', enum: tags };
  const out: JSONSchemaProps = {
    ...outer,
    type: 'object',
    properties,
    required: [tag],
    oneOf: converted.map((c) => {
      const req = (c.required ?? []).filter((r) => r !== tag);
      return {
        properties: { [tag]: { enum: [c.properties?.[tag]?.enum?.[0]] } },
        required: [tag, ...req],
      };
    }),
  };
  const rules = converted.flatMap((c) => c['x-kubernetes-validations'] ?? []);
  if (rules.length > 0)
    out['x-kubernetes-validations'] = [...(outer['x-kubernetes-validations'] ?? []), ...rules];
  return out;
}

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (isNode(v))
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, canonical(v[k])]),
    );
  return v;
}

/** An intersection of objects (TypeBox `Type.Intersect`) is one object with the properties of all. */
function intersection(n: Node, path: string): JSONSchemaProps {
  checkCombinedPlacement(n, path, 'an intersection');
  const outer: JSONSchemaProps = {};
  copyCommon(n, outer, path);
  if (Array.isArray(n.enum)) outer.enum = structuredClone(n.enum);
  const parts = (n.allOf as unknown[]).map((p) => convert(p, path));
  if (parts.some((p) => p.type !== 'object'))
    fail(path, 'an intersection (allOf) of non-object types cannot be expressed in a structural schema');
  const properties: Record<string, JSONSchemaProps> = {};
  const required = new Set<string>();
  const rules: ValidationRule[] = [...(outer['x-kubernetes-validations'] ?? [])];
  let preserve = false;
  for (const p of parts) {
    for (const [k, s] of Object.entries(p.properties ?? {})) {
      const seen = properties[k];
      if (seen && JSON.stringify(canonical(seen)) !== JSON.stringify(canonical(s)))
        fail(`${path}.${k}`, `the parts of an intersection give property "${k}" different schemas`);
      properties[k] = s;
    }
    for (const r of p.required ?? []) required.add(r);
    if (p.additionalProperties) fail(path, 'an intersection with a record cannot be expressed');
    if (p['x-kubernetes-preserve-unknown-fields']) preserve = true;
    for (const r of p['x-kubernetes-validations'] ?? []) rules.push(r);
  }
  const out: JSONSchemaProps = { ...outer, type: 'object', properties };
  if (required.size > 0) out.required = [...required];
  if (preserve) out['x-kubernetes-preserve-unknown-fields'] = true;
  if (rules.length > 0) out['x-kubernetes-validations'] = rules;
  return out;
}

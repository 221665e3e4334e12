/**
 * The keyword rules of the structural-schema conversion (see `toStructural`): which JSON Schema keywords are
 * copied, read or dropped and why the others are refused, value validations shared by every node, numeric bounds,
 * CEL rule checks, and literal values as `enum`.
 */
import { SchemaError } from './errors.js';
import type { JSONSchemaProps, ValidationRule } from './types.js';

export type Node = Record<string, unknown>;

// value validations JSON Schema (TypeBox, ajv's draft-07) and OpenAPI v3.0 spell and mean alike
export const VALUE_VALIDATIONS = [
  'format',
  'maximum',
  'minimum',
  'multipleOf',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'maxProperties',
  'minProperties',
] as const;
// keywords copied as they are (value validations and extensions with the same meaning in OpenAPI v3.0)
export const COPIED = [
  'description',
  'title',
  'default',
  'example',
  ...VALUE_VALIDATIONS,
  'nullable',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-int-or-string',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
] as const;
// keywords read by the converter itself
export const STRUCTURE = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'patternProperties',
  'items',
  'anyOf',
  'oneOf',
  'allOf',
  'enum',
  'const',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'uniqueItems',
]);
// annotations with no meaning for the server: dropped
export const DROPPED = new Set(['$comment', 'examples', 'readOnly', 'writeOnly', 'deprecated', '$schema']);
export const WHY: Record<string, string> = {
  $ref: 'references ($ref) are not allowed in a CRD schema: inline the type (no Type.Ref / Type.Module)',
  $id: '$id is not allowed in a CRD schema',
  $defs: 'definitions are not allowed in a CRD schema: inline the type',
  definitions: 'definitions are not allowed in a CRD schema: inline the type',
  not: '"not" of a whole type cannot be expressed in a structural schema',
  prefixItems: 'tuples cannot be expressed in a CRD schema: use an object or an array of one item type',
  additionalItems: 'tuples cannot be expressed in a CRD schema: use an object or an array of one item type',
  dependencies: 'dependencies are not allowed in a CRD schema: use a CEL rule (WithRules)',
  dependentRequired: 'dependentRequired cannot be expressed in a CRD schema: use a CEL rule (WithRules)',
  dependentSchemas: 'dependentSchemas cannot be expressed in a CRD schema: use a CEL rule (WithRules)',
  if: 'if/then/else cannot be expressed in a CRD schema: use a CEL rule (WithRules)',
  contains: 'contains cannot be expressed in a CRD schema: use a CEL rule (WithRules)',
  propertyNames: 'propertyNames cannot be expressed in a CRD schema: use a CEL rule on the keys (WithRules)',
  unevaluatedProperties: 'unevaluatedProperties cannot be expressed in a CRD schema',
  unevaluatedItems: 'unevaluatedItems cannot be expressed in a CRD schema',
};

export const SCALARS = new Set(['string', 'integer', 'number', 'boolean']);

export function fail(path: string, detail: string): never {
  throw new SchemaError(path, detail);
}

export function isNode(v: unknown): v is Node {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function checkKeywords(n: Node, path: string): void {
  for (const key of Object.keys(n)) {
    if (STRUCTURE.has(key) || DROPPED.has(key) || (COPIED as readonly string[]).includes(key)) continue;
    if (key in WHY) fail(path, WHY[key] as string);
    if (key.startsWith('x-kubernetes-')) fail(path, `unknown extension "${key}"`);
    fail(path, `keyword "${key}" cannot be expressed in a CRD schema`);
  }
}

export function copyCommon(n: Node, out: JSONSchemaProps, path: string): void {
  for (const key of COPIED) {
    if (n[key] !== undefined) (out as Record<string, unknown>)[key] = clone(n[key]);
  }
  if (n.exclusiveMinimum !== undefined) numericBound(n, out, 'Minimum', path);
  if (n.exclusiveMaximum !== undefined) numericBound(n, out, 'Maximum', path);
  if (n.uniqueItems === true)
    fail(
      path,
      'uniqueItems cannot be set to true (the server refuses it: quadratic cost); use ListSet or ListMap (x-kubernetes-list-type)',
    );
  const rules = n['x-kubernetes-validations'];
  if (rules !== undefined) checkRules(rules, path);
}

/** draft 6+ `exclusiveMinimum: n` is OpenAPI v3.0's `minimum: n, exclusiveMinimum: true`. */
export function numericBound(
  n: Node,
  out: JSONSchemaProps,
  which: 'Minimum' | 'Maximum',
  path: string,
): void {
  const ex = n[`exclusive${which}`];
  const plain = which === 'Minimum' ? 'minimum' : 'maximum';
  if (typeof ex === 'boolean') {
    if (n[plain] === undefined) fail(path, `exclusive${which}: true needs ${plain}`);
    out[`exclusive${which}`] = ex;
    return;
  }
  if (typeof ex !== 'number') fail(path, `exclusive${which} must be a number`);
  if (n[plain] !== undefined) fail(path, `both ${plain} and exclusive${which} are set: keep one`);
  out[plain] = ex;
  out[`exclusive${which}`] = true;
}

export const REASONS = new Set([
  'FieldValueInvalid',
  'FieldValueForbidden',
  'FieldValueRequired',
  'FieldValueDuplicate',
]);

export function checkRules(rules: unknown, path: string): void {
  if (!Array.isArray(rules)) fail(path, 'x-kubernetes-validations must be a list of rules');
  rules.forEach((r: unknown, i) => {
    const where = `x-kubernetes-validations[${i}]`;
    if (!isNode(r) || typeof r.rule !== 'string' || r.rule.trim() === '')
      fail(path, `${where}.rule: Required value`);
    const rule = r as unknown as ValidationRule;
    for (const key of Object.keys(r)) {
      if (!['rule', 'message', 'messageExpression', 'reason', 'fieldPath', 'optionalOldSelf'].includes(key))
        fail(path, `${where}: unknown field "${key}"`);
    }
    if (rule.reason !== undefined && !REASONS.has(rule.reason))
      fail(
        path,
        `${where}.reason: Unsupported value: ${JSON.stringify(rule.reason)}: supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"`,
      );
    if (rule.message !== undefined && (rule.message.trim() === '' || rule.message.includes('\n')))
      fail(path, `${where}.message: must be non-empty and contain no line breaks`);
    if (
      rule.fieldPath !== undefined &&
      !/^(\.[A-Za-z_][A-Za-z0-9_]*|\['[^']*'\]|\[\d+\])+$/.test(rule.fieldPath)
    )
      fail(
        path,
        `${where}.fieldPath: Invalid value: ${JSON.stringify(rule.fieldPath)}: must be a relative path such as .spec.replicas or .labels['a.b']`,
      );
    if (rule.optionalOldSelf && !/\boldSelf\b/.test(rule.rule))
      fail(path, `${where}.optionalOldSelf: may only be set for transition rules (rules that use oldSelf)`);
  });
}

export function clone<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}

export function typeOfValue(v: unknown): 'string' | 'integer' | 'number' | 'boolean' | undefined {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'boolean';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return undefined;
}

/** The enum values of a literal node (`const` or a one-value `enum`), or undefined. */
export function literalValues(n: Node): unknown[] | undefined {
  if ('const' in n) return [n.const];
  if (Array.isArray(n.enum) && !n.type) return n.enum;
  if (Array.isArray(n.enum) && SCALARS.has(n.type as string)) return n.enum;
  return undefined;
}

export function enumOf(values: unknown[], declared: unknown, path: string): JSONSchemaProps {
  const types = new Set(values.map(typeOfValue));
  if (types.has(undefined)) fail(path, 'enum values must be strings, numbers or booleans');
  // integers inside a number enum are numbers
  if (types.has('number') && types.has('integer')) types.delete('integer');
  if (declared === 'number' && types.has('integer')) {
    types.delete('integer');
    types.add('number');
  }
  if (types.size !== 1)
    fail(
      path,
      `an enum mixes ${[...types].sort().join(' and ')} values: a structural schema has one type per node`,
    );
  return { type: [...types][0] as JSONSchemaProps['type'], enum: values };
}

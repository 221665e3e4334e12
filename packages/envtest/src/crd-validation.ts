/**
 * The validation strategy of one served version of a custom resource, in kube-apiserver 1.32's order
 * (apiextensions `customResourceStrategy.Validate`/`ValidateUpdate`): OpenAPI v3 value validation of the whole
 * object (with ratcheting on update), then `x-kubernetes-list-type` duplicates (on update only when the old
 * object had none), then the CEL `x-kubernetes-validations` rules — skipped, with the server's one
 * "some validation rules were not checked" error, when an earlier error is of a blocking type. Decoding (pruning
 * and defaults) is separate: `decodeCustomResource`, run on every write and, when the schema has defaults, on
 * every read from storage.
 */
import type { FieldError } from './errors.js';
import type { KObject } from './resource-type.js';
import { pruneAndDefault } from './schema/cr-defaulting.js';
import { hasBlockingError, type SchemaNode, validateAgainstSchema } from './schema/cr-validation.js';
import { validateListTypes } from './schema/list-types.js';

/** Extra validation stage run after the schema (the CEL rules), given the errors so far. */
export type RuleValidator = (obj: KObject, old: KObject | undefined) => FieldError[];

function hasDefaults(s: unknown, depth = 0): boolean {
  if (depth > 64 || s === null || typeof s !== 'object') return false;
  if (Array.isArray(s)) return s.some((x) => hasDefaults(x, depth + 1));
  const o = s as Record<string, unknown>;
  if (o.default !== undefined) return true;
  return Object.entries(o).some(([k, v]) => k !== 'enum' && k !== 'example' && hasDefaults(v, depth + 1));
}

/** Whether reading an object of this schema from storage changes it (defaults the schema gained later). */
export function schemaHasDefaults(schema: SchemaNode): boolean {
  return hasDefaults(schema);
}

/**
 * Prune unknown fields and apply defaults, in place, keeping `apiVersion`, `kind`, `metadata` first.
 * Returns the pruned field paths.
 */
export function decodeCustomResource(o: KObject, schema: SchemaNode): string[] {
  const pruned = pruneAndDefault(o as Record<string, unknown>, schema);
  const { apiVersion, kind, metadata, ...rest } = o;
  for (const key of Object.keys(o)) delete o[key];
  // Only the members the object has: a patched object reaches here without apiVersion and kind (the server
  // sets them when it stores it), and a member set to undefined would then be validated as a null of a
  // `type: string` property, refusing every patch of a CR whose schema declares them.
  const head: Record<string, unknown> = {};
  if (kind !== undefined) head.kind = kind;
  if (apiVersion !== undefined) head.apiVersion = apiVersion;
  if (metadata !== undefined) head.metadata = metadata;
  Object.assign(o, head, rest);
  return pruned;
}

/**
 * The object as the schema validator sees it: ObjectMeta is validated on its own, so of `metadata` only what a
 * CRD schema may constrain (`name`, `generateName`) is kept, and only when the schema declares `metadata`.
 */
function schemaView(o: KObject, schema: SchemaNode): Record<string, unknown> {
  const { metadata, ...body } = o;
  const props = schema.properties as Record<string, unknown> | undefined;
  if (props?.metadata && metadata && typeof metadata === 'object') {
    const m = metadata as Record<string, unknown>;
    const view: Record<string, unknown> = {};
    if (m.name !== undefined) view.name = m.name;
    if (m.generateName !== undefined) view.generateName = m.generateName;
    return { ...body, metadata: view };
  }
  return body;
}

const NOT_CHECKED: FieldError = {
  type: 'FieldValueInvalid',
  field: '<nil>',
  detail:
    'Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
};

/**
 * Validate a custom resource (`old` on update) against its version's schema and rules.
 * @returns the field errors, in the server's order
 */
export function validateCustomResource(
  schema: SchemaNode,
  o: KObject,
  old: KObject | undefined,
  rules?: RuleValidator,
): FieldError[] {
  const body = schemaView(o, schema);
  const oldBody = old ? schemaView(old, schema) : undefined;
  const errs = validateAgainstSchema(body, schema, old ? { old: oldBody, hasOld: true } : {});
  const listErrs = validateListTypes(o, schema);
  // loops, not push(...list): a spread passes every element as an argument, and a long list's errors overflow the stack
  if (!old || validateListTypes(old, schema).length === 0) for (const e of listErrs) errs.push(e);
  if (rules) {
    if (hasBlockingError(errs)) errs.push(NOT_CHECKED);
    else for (const e of rules(o, old)) errs.push(e);
  }
  return errs;
}

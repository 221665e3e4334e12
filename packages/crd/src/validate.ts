import type { ObjectOf } from '@kubeloop/client';
import { applyDefaults } from './defaults.js';
import type { CustomResourceKind } from './kind.js';
import type { JSONSchemaProps } from './types.js';
import { child, compile, jsonType, mapError } from './validate-ajv.js';
import { type FieldError, fieldError, InvalidObjectError } from './validate-errors.js';

export { type FieldError, type FieldErrorType, InvalidObjectError } from './validate-errors.js';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** metadata.name as the server checks it for a custom resource (a DNS subdomain, or generateName). */
function checkName(obj: Record<string, unknown>, errors: FieldError[]): void {
  const meta = obj.metadata as Record<string, unknown> | undefined;
  const name = meta?.name;
  if ((name === undefined || name === '') && !meta?.generateName) {
    errors.push(fieldError('FieldValueRequired', 'metadata.name', 'name or generateName is required'));
    return;
  }
  if (typeof name === 'string' && name !== '' && (name.length > 253 || !DNS_SUBDOMAIN.test(name)))
    errors.push(
      fieldError(
        'FieldValueInvalid',
        'metadata.name',
        name.length > 253
          ? 'must be no more than 253 characters'
          : "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        name,
      ),
    );
}

/** Walks data and schema together: list-type set/map duplicates and embedded resources' type meta. */
function walk(node: JSONSchemaProps, data: unknown, path: string, errors: FieldError[]): void {
  if (data === null || data === undefined) return;
  if (node.type === 'object' && typeof data === 'object' && !Array.isArray(data)) {
    const o = data as Record<string, unknown>;
    if (node['x-kubernetes-embedded-resource']) {
      for (const k of ['apiVersion', 'kind'])
        if (typeof o[k] !== 'string' || o[k] === '')
          errors.push(fieldError('FieldValueRequired', child(path, k), 'must not be empty'));
    }
    for (const [k, v] of Object.entries(o)) {
      const s =
        node.properties?.[k] ??
        (typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined);
      if (s) walk(s, v, child(path, k), errors);
    }
  } else if (node.type === 'array' && Array.isArray(data) && node.items) {
    const listType = node['x-kubernetes-list-type'];
    if (listType === 'set' || listType === 'map') {
      const keys = node['x-kubernetes-list-map-keys'] ?? [];
      // how often each value (set) or key (map) was seen: each repeated one is reported once, at its second
      // occurrence, as apiextensions' listtype validation does (validateListSet)
      const seen = new Map<string, number>();
      data.forEach((item, i) => {
        const id =
          listType === 'set'
            ? JSON.stringify(item)
            : JSON.stringify(
                keys.map(
                  (k) =>
                    (item as Record<string, unknown> | null)?.[k] ??
                    node.items?.properties?.[k]?.default ??
                    null,
                ),
              );
        const times = seen.get(id) ?? 0;
        seen.set(id, times + 1);
        if (times === 1) {
          const bad =
            listType === 'set'
              ? item
              : Object.fromEntries(keys.map((k) => [k, (item as Record<string, unknown>)?.[k]]));
          errors.push(fieldError('FieldValueDuplicate', `${path}[${i}]`, '', bad));
        }
      });
    }
    for (const [i, item] of data.entries()) walk(node.items, item, `${path}[${i}]`, errors);
  }
}

/**
 * Validates an object against its kind's schema in-process, as kube-apiserver validates a create or update of a
 * custom resource, after applying the schema's defaults as the server does first (see {@link applyDefaults}): every OpenAPI value validation (types, enum, bounds, lengths,
 * pattern, items, properties, the formats the server checks), required fields, `x-kubernetes-list-type` set/map
 * uniqueness, embedded resources' `apiVersion`/`kind`, and `metadata.name`. Returns the errors (empty when valid)
 * with the server's field paths and messages. CEL `x-kubernetes-validations` are not evaluated here (envtest
 * and the server do); unknown fields are not errors (the server prunes them).
 *
 * Uses ajv on the CRD's own schema, converted from OpenAPI v3.0 to JSON Schema (nullable, boolean exclusive bounds,
 * int-or-string); the compiled validator is cached per kind.
 */
export function validate(kind: CustomResourceKind, obj: unknown): FieldError[] {
  const errors: FieldError[] = [];
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) {
    return [
      fieldError(
        'FieldValueTypeInvalid',
        '',
        `body must be of type object: ${JSON.stringify(jsonType(obj))}`,
        jsonType(obj),
      ),
    ];
  }
  checkName(obj as Record<string, unknown>, errors);
  // the server defaults before it validates: a required field with a default is not missing
  obj = applyDefaults(kind, obj);
  const fn = compile(kind.schema);
  if (!fn(obj)) {
    const all = fn.errors ?? [];
    const junctor = all.filter((e) => /\/(oneOf|anyOf|allOf|not)\//.test(e.schemaPath));
    for (const e of all) {
      if (junctor.includes(e)) continue;
      const fe = mapError(obj, e);
      if (fe && !errors.some((x) => x.message === fe.message)) errors.push(fe);
    }
  }
  walk(kind.schema, obj, '', errors);
  return errors;
}

/**
 * Throws {@link InvalidObjectError} when {@link validate} finds errors; narrows `obj` to the kind's type otherwise.
 */
export function assertValid<K extends CustomResourceKind>(kind: K, obj: unknown): asserts obj is ObjectOf<K> {
  const errors = validate(kind, obj);
  if (errors.length > 0) {
    const name = String(
      ((obj as Record<string, unknown> | null)?.metadata as Record<string, unknown> | undefined)?.name ?? '',
    );
    throw new InvalidObjectError(kind, name, errors);
  }
}

import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { applyDefaults } from './defaults.js';
import type { CustomResourceKind, KindObject } from './kind.js';
import type { JSONSchemaProps } from './types.js';

/** The `reason` of one cause of a 422 reply (apimachinery `field.ErrorType`). */
export type FieldErrorType =
  | 'FieldValueRequired'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'FieldValueTypeInvalid'
  | 'FieldValueDuplicate'
  | 'FieldValueForbidden';

/**
 * One validation error, shaped as kube-apiserver reports it (apimachinery `field.Error`): `field` is the path the
 * server names (`spec.ports[0].name`, `spec.labels.app`), `message` is the text of the Status cause
 * (`spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1`).
 */
export interface FieldError {
  readonly type: FieldErrorType;
  readonly field: string;
  readonly badValue?: unknown;
  readonly detail: string;
  /** `<field>: <body>`, as `field.Error.Error()` prints it. */
  readonly message: string;
}

/**
 * An object that does not validate against its kind's schema. `message` reads like the server's 422 Status
 * message (`WebApp.example.com "web" is invalid: [spec.replicas: …, …]`); `errors` are the causes.
 */
export class InvalidObjectError extends Error {
  override readonly name = 'InvalidObjectError';
  readonly errors: readonly FieldError[];
  constructor(kind: CustomResourceKind, name: string, errors: readonly FieldError[]) {
    const list =
      errors.length === 1 ? (errors[0]?.message ?? '') : `[${errors.map((e) => e.message).join(', ')}]`;
    super(`${kind.kind}.${kind.group} ${JSON.stringify(name)} is invalid: ${list}`);
    this.errors = errors;
  }
}

const ERROR_NAMES: Record<FieldErrorType, string> = {
  FieldValueRequired: 'Required value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  FieldValueTypeInvalid: 'Invalid value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueForbidden: 'Forbidden',
};

/** Go's `%v`/`%q` of a decoded JSON value, as `field.Error` prints a bad value. */
function formatValue(v: unknown): string {
  if (v === null || v === undefined) return '"null"';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

function fieldError(type: FieldErrorType, field: string, detail: string, badValue?: unknown): FieldError {
  let body = ERROR_NAMES[type];
  if (type !== 'FieldValueRequired' && type !== 'FieldValueForbidden' && type !== 'FieldValueTooLong')
    body += `: ${formatValue(badValue)}`;
  if (detail) body += `: ${detail}`;
  return {
    type,
    field,
    ...(badValue !== undefined ? { badValue } : {}),
    detail,
    message: `${field}: ${body}`,
  };
}

// the formats kube-openapi's default registry checks (others are accepted as any string, as the server does)
const CHECKED_FORMATS = [
  'uri',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'uuid',
  'byte',
  'date',
  'date-time',
  'duration',
];

function ajvInstance(): Ajv {
  const ajv = new Ajv({ allErrors: true, verbose: true, strict: false, validateFormats: true, formats: {} });
  for (const f of CHECKED_FORMATS) {
    const def = (fullFormats as Record<string, unknown>)[f];
    if (def) ajv.addFormat(f, def as Parameters<Ajv['addFormat']>[1]);
  }
  // OpenAPI's `datetime` spelling and kube's extra formats
  ajv.addFormat(
    'datetime',
    (fullFormats as Record<string, unknown>)['date-time'] as Parameters<Ajv['addFormat']>[1],
  );
  ajv.addFormat('cidr', (s: string) => isCidr(s));
  ajv.addFormat('mac', /^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$/);
  return ajv;
}

function isCidr(s: string): boolean {
  const slash = s.indexOf('/');
  if (slash < 0) return false;
  const ip = s.slice(0, slash);
  const bits = s.slice(slash + 1);
  if (!/^\d{1,3}$/.test(bits)) return false;
  const v4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/.test(ip);
  if (v4) return Number(bits) <= 32;
  return ip.includes(':') && Number(bits) <= 128;
}

/** The OpenAPI v3.0 structural schema as a draft-07 schema for ajv (nullable, boolean exclusive bounds, int-or-string). */
function toAjv(p: JSONSchemaProps): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of [
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
    'required',
  ] as const) {
    if (p[k] !== undefined) out[k] = p[k];
  }
  if (p.enum) out.enum = p.nullable ? [...p.enum, null] : p.enum;
  if (p.exclusiveMinimum && p.minimum !== undefined) {
    delete out.minimum;
    out.exclusiveMinimum = p.minimum;
  }
  if (p.exclusiveMaximum && p.maximum !== undefined) {
    delete out.maximum;
    out.exclusiveMaximum = p.maximum;
  }
  let types: string[] | undefined;
  if (p['x-kubernetes-int-or-string']) types = ['integer', 'string'];
  else if (p.type) types = [p.type];
  if (types) out.type = p.nullable ? [...types, 'null'] : types.length === 1 ? types[0] : types;
  if (p.properties)
    out.properties = Object.fromEntries(Object.entries(p.properties).map(([k, v]) => [k, toAjv(v)]));
  if (typeof p.additionalProperties === 'object') out.additionalProperties = toAjv(p.additionalProperties);
  if (p.items) out.items = toAjv(p.items);
  for (const j of ['allOf', 'anyOf', 'oneOf'] as const) if (p[j]) out[j] = p[j]?.map(toAjv);
  if (p.not) out.not = toAjv(p.not);
  return out;
}

const compiled = new WeakMap<JSONSchemaProps, ValidateFunction>();
let sharedAjv: Ajv | undefined;

function compile(schema: JSONSchemaProps): ValidateFunction {
  let fn = compiled.get(schema);
  if (!fn) {
    sharedAjv ??= ajvInstance();
    fn = sharedAjv.compile(toAjv(schema));
    compiled.set(schema, fn);
  }
  return fn;
}

/** `/spec/items/0/name` → `spec.items[0].name`, as kube-openapi names the field. */
function fieldPath(obj: unknown, pointer: string): string {
  if (pointer === '') return '';
  let out = '';
  let cur: unknown = obj;
  for (const raw of pointer.slice(1).split('/')) {
    const seg = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (Array.isArray(cur)) {
      out += `[${seg}]`;
      cur = cur[Number(seg)];
    } else {
      out += out ? `.${seg}` : seg;
      cur = typeof cur === 'object' && cur !== null ? (cur as Record<string, unknown>)[seg] : undefined;
    }
  }
  return out;
}

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  if (typeof v === 'object') return 'object';
  return typeof v;
}

function child(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** One ajv error as kube-apiserver's `kubeOpenAPIResultToFieldErrors` reports it (apiextensions-apiserver). */
function mapError(obj: unknown, e: ErrorObject): FieldError | undefined {
  const at = fieldPath(obj, e.instancePath);
  const p = e.params as Record<string, unknown>;
  const inBody = `${at} in body`;
  switch (e.keyword) {
    case 'required':
      return fieldError('FieldValueRequired', child(at, String(p.missingProperty)), '');
    case 'type': {
      const expected = String(p.type)
        .split(',')
        .filter((t) => t !== 'null')
        .join(',');
      const actual = jsonType(e.data);
      return fieldError(
        'FieldValueTypeInvalid',
        at,
        `${inBody} must be of type ${expected}: ${JSON.stringify(actual)}`,
        actual,
      );
    }
    case 'enum': {
      const allowed = ((e.schema as unknown[]) ?? []).filter((v) => v !== null);
      const values = allowed.map((v) =>
        typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(JSON.stringify(v)),
      );
      return fieldError('FieldValueNotSupported', at, `supported values: ${values.join(', ')}`, e.data);
    }
    case 'maxLength':
      return fieldError('FieldValueTooLong', at, `may not be longer than ${p.limit}`, e.data);
    case 'maxItems':
      return fieldError(
        'FieldValueTooMany',
        at,
        `must have at most ${p.limit} items`,
        (e.data as unknown[]).length,
      );
    case 'maxProperties':
      return fieldError(
        'FieldValueTooMany',
        at,
        `must have at most ${p.limit} items`,
        Object.keys(e.data as object).length,
      );
    case 'minLength':
      return fieldError(
        'FieldValueInvalid',
        at,
        `${inBody} should be at least ${p.limit} chars long`,
        e.data,
      );
    case 'minItems':
      return fieldError('FieldValueInvalid', at, `${inBody} should have at least ${p.limit} items`, e.data);
    case 'minProperties':
      return fieldError(
        'FieldValueInvalid',
        at,
        `${inBody} should have at least ${p.limit} properties`,
        e.data,
      );
    case 'minimum':
      return fieldError(
        'FieldValueInvalid',
        at,
        `${inBody} should be greater than or equal to ${p.limit}`,
        e.data,
      );
    case 'exclusiveMinimum':
      return fieldError('FieldValueInvalid', at, `${inBody} should be greater than ${p.limit}`, e.data);
    case 'maximum':
      return fieldError(
        'FieldValueInvalid',
        at,
        `${inBody} should be less than or equal to ${p.limit}`,
        e.data,
      );
    case 'exclusiveMaximum':
      return fieldError('FieldValueInvalid', at, `${inBody} should be less than ${p.limit}`, e.data);
    case 'multipleOf':
      return fieldError('FieldValueInvalid', at, `${inBody} should be a multiple of ${p.multipleOf}`, e.data);
    case 'pattern':
      return fieldError('FieldValueInvalid', at, `${inBody} should match '${p.pattern}'`, e.data);
    case 'format':
      return fieldError(
        'FieldValueTypeInvalid',
        at,
        `${inBody} must be of type ${p.format}: ${JSON.stringify(e.data)}`,
        e.data,
      );
    case 'oneOf':
      return fieldError(
        'FieldValueInvalid',
        at,
        `"${at}" must validate one and only one schema (oneOf). Found none valid`,
        '',
      );
    case 'anyOf':
      return fieldError('FieldValueInvalid', at, `"${at}" must validate at least one schema (anyOf)`, '');
    case 'not':
      return fieldError('FieldValueInvalid', at, `"${at}" must not validate the schema (not)`, '');
    default:
      return fieldError('FieldValueInvalid', at, `${inBody} ${e.message ?? 'is invalid'}`, e.data);
  }
}

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
export function assertValid<K extends CustomResourceKind>(
  kind: K,
  obj: unknown,
): asserts obj is KindObject<K> {
  const errors = validate(kind, obj);
  if (errors.length > 0) {
    const name = String(
      ((obj as Record<string, unknown> | null)?.metadata as Record<string, unknown> | undefined)?.name ?? '',
    );
    throw new InvalidObjectError(kind, name, errors);
  }
}

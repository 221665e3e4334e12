/**
 * The value validations of a structural schema run by ajv (draft-07), with kube-openapi's checked formats, and
 * ajv's errors turned into the field errors kube-apiserver reports (apiextensions-apiserver
 * `kubeOpenAPIResultToFieldErrors`).
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { VALUE_VALIDATIONS } from './structural-keywords.js';
import type { JSONSchemaProps } from './types.js';
import { type FieldError, fieldError } from './validate-errors.js';

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
  // OpenAPI's numeric and password formats (controller-gen writes int64/int32 on every Go integer) constrain
  // nothing the server checks: known, so ajv does not log "unknown format … ignored" on each compile
  for (const f of ['int32', 'int64', 'float', 'double', 'password']) ajv.addFormat(f, true);
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
  for (const k of [...VALUE_VALIDATIONS, 'required'] as const) {
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

export function compile(schema: JSONSchemaProps): ValidateFunction {
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

export function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  if (typeof v === 'object') return 'object';
  return typeof v;
}

export function child(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** One ajv error as kube-apiserver's `kubeOpenAPIResultToFieldErrors` reports it (apiextensions-apiserver). */
export function mapError(obj: unknown, e: ErrorObject): FieldError | undefined {
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

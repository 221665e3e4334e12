/**
 * The errors of the CRD value validation as kube-openapi makes them (`errors.Validation`), the enum and number
 * validators that make them, and their conversion into `field.Error`s as apiextensions-apiserver does it
 * (`kubeOpenAPIResultToFieldErrors`).
 */

import { goBadValue, goFloat, goNumber, goQuote } from '@kubeloop/core/go-format';
import type { FieldError } from '../errors.js';
import { jsonEqual, type SchemaNode } from './json-value.js';

/** Where kube-openapi says the value was found (`in body`). */
export const IN = 'body';

/** One kube-openapi validation error before conversion to a field error. */
export interface OpenApiError {
  readonly kind:
    | 'required'
    | 'enum'
    | 'tooLong'
    | 'maxItems'
    | 'maxProperties'
    | 'type'
    | 'invalid'
    | 'composite';
  readonly name: string;
  readonly value: unknown;
  readonly message: string;
  readonly enumValues?: readonly unknown[];
  readonly limit?: number;
}

/** The errors of one schema node, and how many of its validators ran (kube-openapi picks the best anyOf/oneOf branch by it). */
export interface Result {
  errors: OpenApiError[];
  matchCount: number;
}

/** Add errors whose message is not there yet (kube-openapi's `Result.AddErrors` de-duplicates by message). */
export function addErrors(into: OpenApiError[], from: readonly OpenApiError[]): void {
  for (const e of from) if (!into.some((x) => x.message === e.message)) into.push(e);
}

/** The bound as Go prints it next to a value: int64 when the value is an integer, float64 otherwise. */
export function bound(limit: number, value: number): string {
  return Number.isInteger(value) ? String(Math.trunc(limit)) : goFloat(limit);
}

/** errors.InvalidType for the value at `path`. */
export function typeError(path: string, typeName: string, value: unknown): OpenApiError {
  // errors.InvalidType: a string value (the data's type name, or the data for formats) is printed with %q
  return {
    kind: 'type',
    name: path,
    value,
    message: `${path} in ${IN} must be of type ${typeName}: ${goQuote(String(value))}`,
  };
}

/** The enum validator: a NotSupported error unless the value equals a member. */
export function enumErrors(v: unknown, s: SchemaNode, path: string): OpenApiError[] {
  if (!Array.isArray(s.enum) || s.enum.length === 0) return [];
  if ((s.enum as unknown[]).some((e) => enumMatches(v, e))) return [];
  return [
    {
      kind: 'enum',
      name: path,
      value: v,
      enumValues: s.enum as unknown[],
      message: `${path} in ${IN} should be one of ${goEnumList(s.enum as unknown[])}`,
    },
  ];
}

/** reflect: the value converted to the enum member's Go type, then DeepEqual (ints and floats compare by value). */
export function enumMatches(v: unknown, e: unknown): boolean {
  if (e === null || e === undefined) return false;
  if (typeof e === 'number' && typeof v === 'number')
    return Number.isInteger(e) ? Math.trunc(v) === e : v === e;
  return jsonEqual(v, e);
}

export function goEnumList(values: readonly unknown[]): string {
  return `[${values.map((x) => (typeof x === 'string' ? x : typeof x === 'number' ? goNumber(x) : JSON.stringify(x))).join(' ')}]`;
}

/** The number validators in kube-openapi's order: multipleOf, minimum, maximum. */
export function numberErrors(v: number, s: SchemaNode, path: string): OpenApiError[] {
  const out: OpenApiError[] = [];
  const isInt = Number.isInteger(v);
  if (typeof s.multipleOf === 'number') {
    const f = s.multipleOf;
    if (isInt) {
      const fi = Math.trunc(f);
      if (fi <= 0)
        out.push({
          kind: 'invalid',
          name: path,
          value: fi,
          message: `factor MultipleOf declared for ${path} must be positive: ${fi}`,
        });
      else if (v % fi !== 0)
        out.push({
          kind: 'invalid',
          name: path,
          value: v,
          message: `${path} in ${IN} should be a multiple of ${fi}`,
        });
    } else if (f <= 0)
      out.push({
        kind: 'invalid',
        name: path,
        value: f,
        message: `factor MultipleOf declared for ${path} must be positive: ${goFloat(f)}`,
      });
    else {
      const mult = f < 1 ? (1 / f) * v : v / f;
      if (!Number.isInteger(mult) || !Number.isFinite(mult))
        out.push({
          kind: 'invalid',
          name: path,
          value: v,
          message: `${path} in ${IN} should be a multiple of ${goFloat(f)}`,
        });
    }
  }
  if (typeof s.minimum === 'number') {
    const min = isInt ? Math.trunc(s.minimum) : s.minimum;
    const excl = s.exclusiveMinimum === true;
    if ((!excl && v < min) || (excl && v <= min))
      out.push({
        kind: 'invalid',
        name: path,
        value: v,
        message: `${path} in ${IN} should be greater than ${excl ? '' : 'or equal to '}${bound(s.minimum, v)}`,
      });
  }
  if (typeof s.maximum === 'number') {
    const max = isInt ? Math.trunc(s.maximum) : s.maximum;
    const excl = s.exclusiveMaximum === true;
    if ((!excl && v > max) || (excl && v >= max))
      out.push({
        kind: 'invalid',
        name: path,
        value: v,
        message: `${path} in ${IN} should be less than ${excl ? '' : 'or equal to '}${bound(s.maximum, v)}`,
      });
  }
  return out;
}

/** An allOf/oneOf/anyOf/not failure: it has no field, so it prints as `<nil>` or under the prefix. */
export function composite(message: string): OpenApiError {
  return { kind: 'composite', name: '', value: '', message };
}

/** apiextensions `kubeOpenAPIResultToFieldErrors`, with `prefix` as the field path the errors hang under. */
export function toFieldError(e: OpenApiError, prefix: string): FieldError {
  if (e.kind === 'composite')
    return { type: 'FieldValueInvalid', field: prefix || '<nil>', detail: `Invalid value: "": ${e.message}` };
  const name = e.name.replace(/^\./, '');
  const field = prefix ? (name ? `${prefix}.${name}` : prefix) : name || '<nil>';
  switch (e.kind) {
    case 'required':
      return { type: 'FieldValueRequired', field, detail: 'Required value' };
    case 'enum': {
      const values = (e.enumValues ?? []).map((x) => goQuote(typeof x === 'string' ? x : JSON.stringify(x)));
      return {
        type: 'FieldValueNotSupported',
        field,
        detail: `Unsupported value: ${goBadValue(e.value)}${values.length ? `: supported values: ${values.join(', ')}` : ''}`,
      };
    }
    case 'tooLong':
      return { type: 'FieldValueTooLong', field, detail: `Too long: may not be more than ${e.limit} bytes` };
    case 'maxItems':
    case 'maxProperties':
      return {
        type: 'FieldValueTooMany',
        field,
        detail: `Too many: ${e.value}: must have at most ${e.limit} items`,
      };
    case 'type':
      return {
        type: 'FieldValueTypeInvalid',
        field,
        detail: `Invalid value: ${goBadValue(e.value)}: ${e.message}`,
      };
    default:
      return {
        type: 'FieldValueInvalid',
        field,
        detail: `Invalid value: ${goBadValue(e.value === undefined ? '' : e.value)}: ${e.message}`,
      };
  }
}

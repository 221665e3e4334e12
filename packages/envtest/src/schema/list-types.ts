/**
 * `x-kubernetes-list-type` invariants of a custom resource, as apiextensions `listtype.ValidateListSetsAndMaps`
 * checks them after schema validation: a `set` holds no value twice, a `map` holds no two items with the same
 * `x-kubernetes-list-map-keys` values (a missing key counts as a value of its own). Each repeat is reported once,
 * at the index of its second occurrence, as `Duplicate value: <value>` (map items as the Go map of their keys).
 * Paths use apimachinery `field.Path` notation: `spec.ports[1]`, map keys as `spec.byName[key]`.
 */

import { goBadValue } from '@kubeloop/core/go-format';
import type { FieldError } from '../errors.js';
import type { SchemaNode } from './cr-validation.js';

function node(v: unknown): SchemaNode | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as SchemaNode) : undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Canonical key of a value for duplicate detection (Go compares scalars by value and compounds by JSON). */
function canon(v: unknown): string {
  if (isObject(v)) {
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canon(v[k])}`).join(',')}}`;
  }
  if (Array.isArray(v)) return `[${v.map(canon).join(',')}]`;
  return `${typeof v}:${JSON.stringify(v)}`;
}

function duplicates(values: readonly unknown[]): number[] {
  if (values.length <= 1) return [];
  const seen = new Map<string, number>();
  const out: number[] = [];
  values.forEach((x, i) => {
    const k = canon(x);
    const n = seen.get(k) ?? 0;
    if (n === 1) out.push(i);
    seen.set(k, n + 1);
  });
  return out;
}

function dup(field: string, value: unknown): FieldError {
  return { type: 'FieldValueDuplicate', field, detail: `Duplicate value: ${goBadValue(value)}` };
}

const UNSPECIFIED = Symbol('unspecified');

function walk(value: unknown, s: SchemaNode | undefined, path: string, errs: FieldError[]): void {
  if (!s) return;
  if (Array.isArray(value)) {
    const lt = s['x-kubernetes-list-type'];
    if (lt === 'set') for (const i of duplicates(value)) errs.push(dup(`${path}[${i}]`, value[i]));
    else if (lt === 'map') {
      const bad = value.findIndex((x) => x !== null && !isObject(x));
      if (bad >= 0)
        errs.push({
          type: 'FieldValueInvalid',
          field: `${path}[${bad}]`,
          detail: `Invalid value: ${goBadValue(value[bad])}: must be an object for an array of list-type map`,
        });
      else {
        const keys = Array.isArray(s['x-kubernetes-list-map-keys'])
          ? (s['x-kubernetes-list-map-keys'] as string[])
          : [];
        if (keys.length === 1) {
          const k = keys[0] as string;
          const vals = value.map((x) => (isObject(x) && Object.hasOwn(x, k) ? x[k] : UNSPECIFIED));
          const canonVals = vals.map((x) => (x === UNSPECIFIED ? { __unspecified: true } : x));
          for (const i of duplicates(canonVals))
            errs.push(dup(`${path}[${i}]`, vals[i] === UNSPECIFIED ? {} : { [k]: vals[i] }));
        } else {
          const vals = value.map((x) => {
            const key: Record<string, unknown> = {};
            if (isObject(x)) for (const k of keys) if (Object.hasOwn(x, k)) key[k] = x[k];
            return key;
          });
          for (const i of duplicates(vals)) errs.push(dup(`${path}[${i}]`, vals[i]));
        }
      }
    }
    const items = node(s.items);
    if (items)
      value.forEach((x, i) => {
        walk(x, items, `${path}[${i}]`, errs);
      });
    return;
  }
  if (!isObject(value)) return;
  const addl = node(s.additionalProperties);
  if (addl) for (const [k, x] of Object.entries(value)) walk(x, addl, `${path}[${k}]`, errs);
  const props = node(s.properties);
  if (props)
    for (const [k, x] of Object.entries(value)) {
      const p = node(props[k]);
      if (p) walk(x, p, path === '' ? k : `${path}.${k}`, errs);
    }
}

/** Duplicate items in `set` and `map` lists of `obj` under `schema`. */
export function validateListTypes(obj: unknown, schema: SchemaNode, prefix = ''): FieldError[] {
  const errs: FieldError[] = [];
  walk(obj, schema, prefix, errs);
  return errs;
}

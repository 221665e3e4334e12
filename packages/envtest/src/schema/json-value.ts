/**
 * Plain-JSON helpers of the CRD value validation: the decoded value's kube-openapi type name, deep equality
 * (reflect.DeepEqual on unstructured data), rune counts, and Go regexps (RE2) compiled once per pattern.
 */
import { RE2JS } from '@bufbuild/re2';

/** A node of a CRD's `openAPIV3Schema` (JSONSchemaProps) as plain JSON. */
export type SchemaNode = Readonly<Record<string, unknown>>;

/** The value as a schema node when it is a JSON object, else `undefined`. */
export function node(v: unknown): SchemaNode | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as SchemaNode) : undefined;
}

/** Whether the value is a JSON object (not null, not an array). */
export function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** JSON type name as kube-openapi infers it from a decoded value. */
export function jsonType(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'boolean';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  if (Array.isArray(v)) return 'array';
  return 'object';
}

/**
 * Deep equality of JSON values (reflect.DeepEqual on unstructured data), key order ignored; a key whose value is
 * `undefined` counts as absent, as it does once the value is encoded.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => jsonEqual(x, bb[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
  if (ak.length !== bk.length) return false;
  return ak.every((k) => jsonEqual(ao[k], bo[k]));
}

/** The schema's `type` as a list; `x-kubernetes-int-or-string` is `integer` or `string`. */
export function schemaTypes(s: SchemaNode): string[] {
  if (s['x-kubernetes-int-or-string'] === true) return ['integer', 'string'];
  return typeof s.type === 'string' && s.type !== '' ? [s.type] : [];
}

const regexCache = new Map<string, RE2JS | Error>();

/** Compile a Go regexp (RE2 syntax); the Error carries Go's message (`error parsing regexp: …`). */
export function compileRe2(pattern: string): RE2JS | Error {
  let re = regexCache.get(pattern);
  if (re === undefined) {
    try {
      re = new RE2JS(pattern);
    } catch (e) {
      re = new Error((e as Error).message);
    }
    if (regexCache.size > 1000) regexCache.clear();
    regexCache.set(pattern, re);
  }
  return re;
}

/** Length in runes (Go's utf8.RuneCountInString), as maxLength and minLength count. */
export function runeCount(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

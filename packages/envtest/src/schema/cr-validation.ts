/**
 * Value validation of a custom resource against its CRD's OpenAPI v3 schema, as kube-apiserver 1.32 runs it:
 * kube-openapi's `SchemaValidator` (validators per node in its order: type, allOf/oneOf/anyOf/not, string
 * (maxLength, minLength, pattern — first failure only), format, number (multipleOf, minimum, maximum), array
 * (items, minItems, maxItems, uniqueItems), enum, object (min/maxProperties, additionalProperties, properties,
 * required)), whose errors apiextensions-apiserver turns into `field.Error`s
 * (`kubeOpenAPIResultToFieldErrors`: Required, NotSupported for enum, TooLong for maxLength, TooMany for
 * maxItems/maxProperties, TypeInvalid for type and format, Invalid for the rest; oneOf/anyOf/allOf/not failures
 * have no field and print as `<nil>`). Lengths count runes, patterns are RE2 (Go regexp) via `@bufbuild/re2`.
 * Validation ratcheting (CRDValidationRatcheting, on by default in 1.32): on update, a value equal to the old
 * value at the same correlated place (object properties, map keys, list-type=map items by key) is not
 * re-validated, so an object stored before a schema tightened can still be updated elsewhere.
 */

import { goQuote } from '@kubeloop/core/go-format';
import type { FieldError } from '../errors.js';
import { formatChecker } from './formats.js';
import {
  compileRe2,
  isObject,
  jsonEqual,
  jsonType,
  node,
  runeCount,
  type SchemaNode,
  schemaTypes,
} from './json-value.js';
import {
  addErrors,
  composite,
  enumErrors,
  IN,
  numberErrors,
  type OpenApiError,
  type Result,
  toFieldError,
  typeError,
} from './openapi-errors.js';

export type { SchemaNode } from './json-value.js';

/** Context of one validation walk: ratcheting correlation to the old object. */
interface Walk {
  readonly ratchet: boolean;
}

function validateNode(
  value: unknown,
  s: SchemaNode,
  path: string,
  old: unknown,
  hasOld: boolean,
  w: Walk,
): Result {
  const res: Result = { errors: [], matchCount: 0 };
  if (w.ratchet && hasOld && jsonEqual(value, old)) return res;
  const types = schemaTypes(s);
  const format = typeof s.format === 'string' && formatChecker(s.format) ? s.format : '';
  const nullable = s.nullable === true;
  if (value === null || value === undefined) {
    if (types.length > 0 && !nullable) addErrors(res.errors, [typeError(path, types.join(','), 'null')]);
    addErrors(res.errors, enumErrors(value, s, path));
    return res;
  }
  const kind = jsonType(value);
  const v = value;
  // type
  if (types.length > 0 || format !== '') {
    res.matchCount++;
    const numeric = types.includes('number') || types.includes('integer');
    const stringish = kind === 'string' || kind === 'array';
    if (!(!numeric && format !== '' && stringish)) {
      const ok =
        types.includes(kind) ||
        (kind === 'integer' && types.includes('number')) ||
        (kind === 'number' && types.includes('integer') && Number.isInteger(v));
      if (!ok && types.length > 0) addErrors(res.errors, [typeError(path, types.join(','), kind)]);
    }
  }
  // allOf / oneOf / anyOf / not
  addErrors(res.errors, schemaProps(v, s, path, old, hasOld, w, res));
  // string
  if (kind === 'string') {
    res.matchCount++;
    const str = v as string;
    const max = typeof s.maxLength === 'number' ? s.maxLength : undefined;
    const min = typeof s.minLength === 'number' ? s.minLength : undefined;
    const len = max !== undefined || min !== undefined ? runeCount(str) : 0;
    if (max !== undefined && len > max)
      addErrors(res.errors, [
        {
          kind: 'tooLong',
          name: path,
          value: str,
          limit: max,
          message: `${path} in ${IN} should be at most ${max} chars long`,
        },
      ]);
    else if (min !== undefined && len < min)
      addErrors(res.errors, [
        {
          kind: 'invalid',
          name: path,
          value: str,
          message: `${path} in ${IN} should be at least ${min} chars long`,
        },
      ]);
    else if (typeof s.pattern === 'string' && s.pattern !== '') {
      const re = compileRe2(s.pattern);
      if (re instanceof Error)
        addErrors(res.errors, [
          {
            kind: 'invalid',
            name: path,
            value: str,
            message: `${path} in ${IN} should match '${s.pattern}, but pattern is invalid: ${re.message}'`,
          },
        ]);
      else if (!re.test(str))
        addErrors(res.errors, [
          {
            kind: 'invalid',
            name: path,
            value: str,
            message: `${path} in ${IN} should match '${s.pattern}'`,
          },
        ]);
    }
    // format
    if (format !== '') {
      res.matchCount++;
      const check = formatChecker(format);
      if (check && !check(str)) addErrors(res.errors, [typeError(path, format, str)]);
    }
  }
  // number
  if (kind === 'integer' || kind === 'number') {
    res.matchCount++;
    addErrors(res.errors, numberErrors(v as number, s, path));
  }
  // array
  if (Array.isArray(v)) {
    res.matchCount++;
    const items = node(s.items);
    if (items) {
      const oldList = Array.isArray(old) ? old : undefined;
      const correlate = listCorrelation(s, oldList);
      v.forEach((item, i) => {
        const o = correlate(item);
        const r = validateNode(item, items, `${path}[${i}]`, o.value, o.found, w);
        addErrors(res.errors, r.errors);
        res.matchCount += r.matchCount;
      });
    }
    const size = v.length;
    if (typeof s.minItems === 'number' && size < s.minItems)
      addErrors(res.errors, [
        {
          kind: 'invalid',
          name: path,
          value: size,
          message: `${path} in ${IN} should have at least ${s.minItems} items`,
        },
      ]);
    if (typeof s.maxItems === 'number' && size > s.maxItems)
      addErrors(res.errors, [
        {
          kind: 'maxItems',
          name: path,
          value: size,
          limit: s.maxItems,
          message: `${path} in ${IN} should have at most ${s.maxItems} items`,
        },
      ]);
    if (s.uniqueItems === true && v.some((x, i) => v.slice(0, i).some((y) => jsonEqual(x, y))))
      addErrors(res.errors, [
        {
          kind: 'invalid',
          name: path,
          value: undefined,
          message: `${path} in ${IN} shouldn't contain duplicates`,
        },
      ]);
  }
  // enum
  res.matchCount++;
  addErrors(res.errors, enumErrors(v, s, path));
  // object
  if (isObject(v)) {
    res.matchCount++;
    const n = Object.keys(v).length;
    if (typeof s.minProperties === 'number' && n < s.minProperties)
      addErrors(res.errors, [
        {
          kind: 'invalid',
          name: path,
          value: n,
          message: `${path} in ${IN} should have at least ${s.minProperties} properties`,
        },
      ]);
    if (typeof s.maxProperties === 'number' && n > s.maxProperties)
      addErrors(res.errors, [
        {
          kind: 'maxProperties',
          name: path,
          value: n,
          limit: s.maxProperties,
          message: `${path} in ${IN} should have at most ${s.maxProperties} properties`,
        },
      ]);
    const props = node(s.properties) ?? {};
    const addl = s.additionalProperties;
    const oldObj = isObject(old) ? old : undefined;
    const granular = s['x-kubernetes-map-type'] !== 'atomic';
    const child = (k: string) => (path === '' ? k : `${path}.${k}`);
    if (addl === false) {
      for (const k of Object.keys(v))
        if (!Object.hasOwn(props, k))
          addErrors(res.errors, [
            {
              kind: 'invalid',
              name: path,
              value: k,
              message: `${path}.${k} in ${IN} is a forbidden property`,
            },
          ]);
    } else if (node(addl)) {
      for (const [k, x] of Object.entries(v)) {
        if (Object.hasOwn(props, k)) continue;
        const r = validateNode(
          x,
          node(addl) as SchemaNode,
          `${path}.${k}`,
          granular ? oldObj?.[k] : undefined,
          granular && oldObj !== undefined && Object.hasOwn(oldObj, k),
          w,
        );
        addErrors(res.errors, r.errors);
        res.matchCount += r.matchCount;
      }
    }
    for (const [k, ps] of Object.entries(props)) {
      // a member holding undefined is absent, as it is once the object is JSON (it cannot come off the wire)
      if (!Object.hasOwn(v, k) || v[k] === undefined) continue;
      const sub = node(ps);
      if (!sub) continue;
      const r = validateNode(
        v[k],
        sub,
        child(k),
        granular ? oldObj?.[k] : undefined,
        granular && oldObj !== undefined && Object.hasOwn(oldObj, k),
        w,
      );
      addErrors(res.errors, r.errors);
      res.matchCount += r.matchCount;
    }
    if (Array.isArray(s.required))
      for (const k of s.required as string[])
        if (!Object.hasOwn(v, k) || v[k] === undefined)
          addErrors(res.errors, [
            {
              kind: 'required',
              name: `${path}.${k}`,
              value: undefined,
              message: `${path}.${k} in ${IN} is required`,
            },
          ]);
  }
  res.matchCount++;
  return res;
}

/** How the old list's items correlate with the new ones: list-type=map by its keys, nothing otherwise. */
function listCorrelation(
  s: SchemaNode,
  oldList: readonly unknown[] | undefined,
): (item: unknown) => { value: unknown; found: boolean } {
  const keys = s['x-kubernetes-list-map-keys'];
  if (!oldList || s['x-kubernetes-list-type'] !== 'map' || !Array.isArray(keys))
    return () => ({ value: undefined, found: false });
  const keyOf = (x: unknown) =>
    isObject(x) ? JSON.stringify((keys as string[]).map((k) => x[k] ?? null)) : undefined;
  const byKey = new Map<string, unknown>();
  for (const o of oldList) {
    const k = keyOf(o);
    if (k !== undefined && !byKey.has(k)) byKey.set(k, o);
  }
  return (item) => {
    const k = keyOf(item);
    return k !== undefined && byKey.has(k)
      ? { value: byKey.get(k), found: true }
      : { value: undefined, found: false };
  };
}

function schemaProps(
  v: unknown,
  s: SchemaNode,
  path: string,
  old: unknown,
  hasOld: boolean,
  w: Walk,
  parent: Result,
): OpenApiError[] {
  const out: OpenApiError[] = [];
  // nested value validations are not ratcheted (upstream: allOf errors are never ratcheted)
  const sub = (x: unknown) => {
    const n = node(x);
    return n ? validateNode(v, n, path, old, false, { ratchet: false }) : { errors: [], matchCount: 0 };
  };
  void hasOld;
  void w;
  const anyOf = Array.isArray(s.anyOf) ? s.anyOf : [];
  if (anyOf.length > 0) {
    let best: Result | undefined;
    let ok = false;
    for (const a of anyOf) {
      const r = sub(a);
      if (r.errors.length === 0) {
        ok = true;
        best = undefined;
        break;
      }
      if (!best || r.matchCount > best.matchCount) best = r;
    }
    if (!ok) addErrors(out, [composite(`${goQuote(path)} must validate at least one schema (anyOf)`)]);
    if (best) addErrors(out, best.errors);
  }
  const oneOf = Array.isArray(s.oneOf) ? s.oneOf : [];
  if (oneOf.length > 0) {
    let best: Result | undefined;
    let validated = 0;
    for (const a of oneOf) {
      const r = sub(a);
      if (r.errors.length === 0) {
        validated++;
        best = undefined;
        continue;
      }
      if (validated === 0 && (!best || r.matchCount > best.matchCount)) best = r;
    }
    if (validated !== 1) {
      const more = validated === 0 ? 'Found none valid' : `Found ${validated} valid alternatives`;
      addErrors(out, [composite(`${goQuote(path)} must validate one and only one schema (oneOf). ${more}`)]);
      if (best) addErrors(out, best.errors);
    }
  }
  const allOf = Array.isArray(s.allOf) ? s.allOf : [];
  if (allOf.length > 0) {
    let validated = 0;
    for (const a of allOf) {
      const r = sub(a);
      if (r.errors.length === 0) validated++;
      addErrors(out, r.errors);
    }
    if (validated !== allOf.length)
      addErrors(out, [
        composite(
          `${goQuote(path)} must validate all the schemas (allOf)${validated === 0 ? '. None validated' : ''}`,
        ),
      ]);
  }
  if (node(s.not)) {
    const r = sub(s.not);
    if (r.errors.length === 0)
      addErrors(out, [composite(`${goQuote(path)} must not validate the schema (not)`)]);
  }
  parent.matchCount++;
  return out;
}

/**
 * Validate `value` against `schema` (a CRD version's `openAPIV3Schema`, or a subtree of it with `prefix`
 * naming where it sits, e.g. `status` for the status subresource). `old` is the stored value on update, for
 * validation ratcheting. Errors are in kube-openapi's order (the real server iterates Go maps, so across
 * different properties its order varies; this walk uses the schema's property order).
 */
export function validateAgainstSchema(
  value: unknown,
  schema: SchemaNode,
  options: { prefix?: string; old?: unknown; hasOld?: boolean } = {},
): FieldError[] {
  const hasOld = options.hasOld ?? options.old !== undefined;
  const r = validateNode(value, schema, '', options.old, hasOld, { ratchet: hasOld });
  return r.errors.map((e) => toFieldError(e, options.prefix ?? ''));
}

/** Field error types that stop CEL rules from running (apiextensions `hasBlockingErr`). */
export function hasBlockingError(errs: readonly FieldError[]): boolean {
  return errs.some(
    (e) =>
      e.type === 'FieldValueNotSupported' ||
      e.type === 'FieldValueRequired' ||
      e.type === 'FieldValueTooLong' ||
      e.type === 'FieldValueTooMany' ||
      e.type === 'FieldValueTypeInvalid',
  );
}

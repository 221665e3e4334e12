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
import { RE2JS } from '@bufbuild/re2';
import type { FieldError } from '../errors.js';
import { formatChecker } from './formats.js';
import { goBadValue, goFloat, goNumber, goQuote } from './go-format.js';

/** A node of a CRD's `openAPIV3Schema` (JSONSchemaProps) as plain JSON. */
export type SchemaNode = Readonly<Record<string, unknown>>;

const IN = 'body';

/** One kube-openapi validation error before conversion to a field error. */
interface OpenApiError {
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

interface Result {
  errors: OpenApiError[];
  matchCount: number;
}

function node(v: unknown): SchemaNode | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as SchemaNode) : undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** JSON type name as kube-openapi infers it from a decoded value. */
function jsonType(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'boolean';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  if (Array.isArray(v)) return 'array';
  return 'object';
}

/** Deep equality of decoded JSON values (reflect.DeepEqual on unstructured data). */
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
  const ak = Object.keys(ao);
  if (ak.length !== Object.keys(bo).length) return false;
  return ak.every((k) => Object.hasOwn(bo, k) && jsonEqual(ao[k], bo[k]));
}

function addErrors(into: OpenApiError[], from: readonly OpenApiError[]): void {
  for (const e of from) if (!into.some((x) => x.message === e.message)) into.push(e);
}

function schemaTypes(s: SchemaNode): string[] {
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

function runeCount(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** The bound as Go prints it next to a value: int64 when the value is an integer, float64 otherwise. */
function bound(limit: number, value: number): string {
  return Number.isInteger(value) ? String(Math.trunc(limit)) : goFloat(limit);
}

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

function typeError(path: string, typeName: string, value: unknown): OpenApiError {
  // errors.InvalidType: a string value (the data's type name, or the data for formats) is printed with %q
  return {
    kind: 'type',
    name: path,
    value,
    message: `${path} in ${IN} must be of type ${typeName}: ${goQuote(String(value))}`,
  };
}

function enumErrors(v: unknown, s: SchemaNode, path: string): OpenApiError[] {
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
function enumMatches(v: unknown, e: unknown): boolean {
  if (e === null || e === undefined) return false;
  if (typeof e === 'number' && typeof v === 'number')
    return Number.isInteger(e) ? Math.trunc(v) === e : v === e;
  return jsonEqual(v, e);
}

function goEnumList(values: readonly unknown[]): string {
  return `[${values.map((x) => (typeof x === 'string' ? x : typeof x === 'number' ? goNumber(x) : JSON.stringify(x))).join(' ')}]`;
}

function numberErrors(v: number, s: SchemaNode, path: string): OpenApiError[] {
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

function composite(message: string): OpenApiError {
  return { kind: 'composite', name: '', value: '', message };
}

/** apiextensions `kubeOpenAPIResultToFieldErrors`, with `prefix` as the field path the errors hang under. */
function toFieldError(e: OpenApiError, prefix: string): FieldError {
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

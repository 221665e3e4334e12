/**
 * The JSON type errors kube-apiserver's decoder raises for a built-in object (apimachinery's JSON serializer,
 * `sigs.k8s.io/json`, a fork of encoding/json, decoding into the kind's Go struct), driven by the generated
 * schema table with the Go type facts of `go-types.ts` and `builtin-number-types.ts`:
 *
 * - a value of the wrong JSON type: `json: cannot unmarshal number into Go struct field ConfigMap.data of type
 *   string`. The struct is the innermost Go struct holding the field, the path is every JSON field name from
 *   the root (list indexes and map keys are not part of it), the type is Go's `reflect.Type` string
 *   (`int32`, `[]v1.Container`, `map[string]string`, `v1.DeploymentSpec`);
 * - an integer field given a fraction or an out-of-range number: `… unmarshal number 3.5 into … of type int32`;
 * - a `[]byte` field that is not base64: `illegal base64 data at input byte N`;
 * - a `resource.Quantity` that does not parse (its own JSON decoder; numbers are accepted):
 *   `quantities must match the regular expression '…'` or `unable to parse quantity's suffix`;
 * - `intstr.IntOrString` (a string, or a number that fits int32) and `metav1.Time`/`MicroTime` (a string)
 *   report the error of their own decoder, named with the field it was decoding.
 *
 * As encoding/json does, `null` is accepted everywhere, fields the kind does not declare are skipped (they
 * are fieldValidation's business), the first plain type error in document order is kept while decoding goes
 * on, and an error from a custom decoder (Quantity, IntOrString, Time) ends decoding at once and wins.
 * Number literals: given the raw JSON text, a number written `3.0`, `1e3` or with more digits than a double
 * keeps its literal (`json: cannot unmarshal number 3.0 into … of type int32`, as strconv.ParseInt refuses it);
 * without it (YAML bodies, patched objects) such a number counts as the value JavaScript parsed. Duplicate keys
 * are not seen.
 */
import { goBase64Error } from './base64.js';
import { BUILTIN_BYTE_FIELDS } from './builtin-byte-fields.js';
import { BUILTIN_NUMBER_TYPES } from './builtin-number-types.js';
import { BUILTIN_SCHEMAS } from './builtin-schemas.js';
import { NAMED_STRING_TYPES, QUANTITY_FIELDS } from './go-types.js';

type GoType =
  | { readonly k: 'struct'; readonly model: string; readonly goName: string; readonly name: string }
  | { readonly k: 'slice' | 'map'; readonly of: GoType; readonly name: string }
  | { readonly k: 'string' | 'bool' | 'float' | 'bytes'; readonly name: string }
  | { readonly k: 'int'; readonly bits: 32 | 64; readonly name: string }
  | { readonly k: 'time' | 'quantity' | 'intstr' | 'any' };

const ANY: GoType = { k: 'any' };
const STRING: GoType = { k: 'string', name: 'string' };
const BYTES: GoType = { k: 'bytes', name: '[]uint8' };
const QUANTITY: GoType = { k: 'quantity' };

/** `V1DeploymentSpec` → `DeploymentSpec` in package `v1`; `CoreV1Event` → `Event`; `V2MetricTarget` → `v2`. */
function goNameOf(model: string): { pkg: string; name: string } {
  const m = /^(?:[A-Z][a-z]+)?V(\d+(?:alpha\d+|beta\d+)?)(?=[A-Z])/.exec(model);
  return m ? { pkg: `v${m[1]}`, name: model.slice(m[0].length) } : { pkg: 'v1', name: model };
}

function structType(model: string): GoType {
  const { pkg, name } = goNameOf(model);
  return { k: 'struct', model, goName: name, name: `${pkg}.${name}` };
}

/** The Go type of a client type string (`Array<V1Container>`, `{ [key: string]: string; }`, …). */
function parseType(type: string, num: 'int32' | 'int64' | 'float64'): GoType {
  const arr = /^Array<(.+)>$/.exec(type);
  if (arr) {
    const of = parseType(arr[1]!, num);
    return 'name' in of ? { k: 'slice', of, name: `[]${of.name}` } : { k: 'slice', of, name: '[]any' };
  }
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map) {
    const of = parseType(map[1]!, num);
    return { k: 'map', of, name: 'name' in of ? `map[string]${of.name}` : 'map[string]any' };
  }
  switch (type) {
    case 'string':
      return STRING;
    case 'boolean':
      return { k: 'bool', name: 'bool' };
    case 'number':
      return num === 'float64'
        ? { k: 'float', name: num }
        : { k: 'int', bits: num === 'int64' ? 64 : 32, name: num };
    case 'Date':
    case 'V1MicroTime':
      return { k: 'time' };
    case 'IntOrString':
      return { k: 'intstr' };
  }
  return BUILTIN_SCHEMAS.models[type] ? structType(type) : ANY;
}

const fieldTypes = new Map<string, GoType>();

/** The Go type of `model.field` (declared with client type `type`), with the facts the table lacks. */
function fieldType(model: string, field: string, type: string): GoType {
  const key = `${model}\u0000${field}`;
  const cached = fieldTypes.get(key);
  if (cached) return cached;
  let t: GoType;
  const quantity = QUANTITY_FIELDS[model]?.[field];
  const named = NAMED_STRING_TYPES[model]?.[field];
  if (quantity === 'single') t = QUANTITY;
  else if (quantity === 'list') t = { k: 'map', of: QUANTITY, name: 'v1.ResourceList' };
  else if (BUILTIN_BYTE_FIELDS[model]?.includes(field))
    t = type.startsWith('{') ? { k: 'map', of: BYTES, name: 'map[string][]uint8' } : BYTES;
  else if (named?.startsWith('[]'))
    t = { k: 'slice', of: { k: 'string', name: named.slice(2) }, name: named };
  else if (named) t = { k: 'string', name: named };
  else t = parseType(type, BUILTIN_NUMBER_TYPES[model]?.[field] ?? 'int32');
  fieldTypes.set(key, t);
  return t;
}

/** A JSON number whose literal JavaScript would not keep (`3.0`, `1e3`, 17+ digits). */
class RawNumber {
  constructor(
    readonly literal: string,
    readonly value: number,
  ) {}
}

const isNumber = (v: unknown): boolean => typeof v === 'number' || v instanceof RawNumber;

function isObj(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof RawNumber);
}

/** How encoding/json names a JSON value in an UnmarshalTypeError. */
function jsonKind(v: unknown): string {
  if (v instanceof RawNumber) return 'number';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'boolean') return 'bool';
  return typeof v === 'string' ? 'string' : typeof v === 'number' ? 'number' : 'object';
}

const QUANTITY_FORMAT_MSG =
  "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
const QUANTITY_SUFFIXES = new Set([
  '',
  'Ki',
  'Mi',
  'Gi',
  'Ti',
  'Pi',
  'Ei',
  'n',
  'u',
  'm',
  'k',
  'M',
  'G',
  'T',
  'P',
  'E',
]);

/**
 * The error of apimachinery `resource.ParseQuantity` for `s` (after the JSON decoder strips the quotes and
 * surrounding spaces), or undefined when it parses: the number, a fraction, then a suffix made of
 * `eEinumkKMGTP` letters and an optional signed exponent, which must be a binary/decimal SI suffix or `e<int>`.
 */
export function quantityError(s: string): string | undefined {
  const m = /^[+-]?[0-9]*(?:\.[0-9]*)?([eEinumkKMGTP]*[-+]?[0-9]*)$/.exec(s);
  if (s === '' || !m) return QUANTITY_FORMAT_MSG;
  const suffix = m[1]!;
  if (QUANTITY_SUFFIXES.has(suffix) || /^[eE][-+]?[0-9]+$/.test(suffix)) return undefined;
  return "unable to parse quantity's suffix";
}

/** A custom decoder's error: it ends decoding. */
class Fatal {
  constructor(readonly message: string) {}
}

class Decoder {
  saved: string | undefined;
  readonly stack: string[] = [];
  struct = '';

  typeError(value: string, type: string): string {
    return `json: cannot unmarshal ${value} into Go struct field ${this.struct}.${this.stack.join('.')} of type ${type}`;
  }

  save(message: string): void {
    this.saved ??= message;
  }

  value(t: GoType, v: unknown): void {
    if (v === null || v === undefined) return;
    switch (t.k) {
      case 'any':
        return;
      case 'struct':
        if (isObj(v)) this.struct_(t.model, t.goName, v);
        else this.save(this.typeError(jsonKind(v), t.name));
        return;
      case 'slice':
        if (Array.isArray(v)) for (const x of v) this.value(t.of, x);
        else this.save(this.typeError(jsonKind(v), t.name));
        return;
      case 'map':
        if (isObj(v)) for (const x of Object.values(v)) this.value(t.of, x);
        else this.save(this.typeError(jsonKind(v), t.name));
        return;
      case 'string':
        if (typeof v !== 'string') this.save(this.typeError(jsonKind(v), t.name));
        return;
      case 'bool':
        if (typeof v !== 'boolean') this.save(this.typeError(jsonKind(v), t.name));
        return;
      case 'float':
        if (!isNumber(v)) this.save(this.typeError(jsonKind(v), t.name));
        return;
      case 'int':
        if (v instanceof RawNumber) this.save(this.typeError(`number ${v.literal}`, t.name));
        else if (typeof v !== 'number') this.save(this.typeError(jsonKind(v), t.name));
        else if (!fitsInt(v, t.bits)) this.save(this.typeError(`number ${v}`, t.name));
        return;
      case 'bytes': {
        if (typeof v !== 'string') {
          if (!Array.isArray(v)) this.save(this.typeError(jsonKind(v), t.name));
          return;
        }
        const off = goBase64Error(v);
        if (off !== undefined) this.save(`illegal base64 data at input byte ${off}`);
        return;
      }
      case 'time':
        // metav1.Time / MicroTime decode their JSON into a string first
        if (typeof v !== 'string') throw new Fatal(this.typeError(jsonKind(v), 'string'));
        return;
      case 'intstr':
        if (typeof v === 'string') return;
        if (v instanceof RawNumber) throw new Fatal(this.typeError(`number ${v.literal}`, 'int32'));
        if (typeof v !== 'number') throw new Fatal(this.typeError(jsonKind(v), 'int32'));
        if (!fitsInt(v, 32)) throw new Fatal(this.typeError(`number ${v}`, 'int32'));
        return;
      case 'quantity': {
        if (isNumber(v)) return;
        const err = typeof v === 'string' ? quantityError(v.trim()) : QUANTITY_FORMAT_MSG;
        if (err) throw new Fatal(err);
        return;
      }
    }
  }

  struct_(model: string, goName: string, o: Record<string, unknown>): void {
    const m = BUILTIN_SCHEMAS.models[model];
    if (!m) return;
    const outer = this.struct;
    for (const [k, v] of Object.entries(o)) {
      const f = m.f[k];
      if (!f) continue;
      this.stack.push(k);
      this.struct = goName;
      this.value(fieldType(model, k, f[0]), v);
      this.stack.pop();
      this.struct = outer;
    }
  }
}

function fitsInt(v: number, bits: 32 | 64): boolean {
  if (!Number.isInteger(v)) return false;
  return bits === 32 ? v >= -2147483648 && v <= 2147483647 : v >= -(2 ** 63) && v < 2 ** 63;
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?/y;
const WS = /[ \t\n\r]*/y;
const JSON_STRING = /"(?:[^"\\]|\\.)*"/y;

/**
 * Parse JSON text as JSON.parse does, except that a number whose literal has a fraction, an exponent or more
 * than 15 digits becomes a RawNumber keeping its literal. Undefined when the text is not JSON.
 */
export function parseKeepingLiterals(text: string): unknown {
  let i = 0;
  const skip = () => {
    WS.lastIndex = i;
    WS.exec(text);
    i = WS.lastIndex;
  };
  const token = (re: RegExp): string => {
    re.lastIndex = i;
    const m = re.exec(text);
    if (!m) throw new SyntaxError(`bad JSON at ${i}`);
    i = re.lastIndex;
    return m[0];
  };
  const value = (): unknown => {
    skip();
    const c = text[i];
    if (c === '{') {
      i++;
      const out: Record<string, unknown> = {};
      skip();
      if (text[i] === '}') {
        i++;
        return out;
      }
      for (;;) {
        skip();
        const key = JSON.parse(token(JSON_STRING)) as string;
        skip();
        if (text[i++] !== ':') throw new SyntaxError(`bad JSON at ${i}`);
        out[key] = value();
        skip();
        const sep = text[i++];
        if (sep === '}') return out;
        if (sep !== ',') throw new SyntaxError(`bad JSON at ${i}`);
      }
    }
    if (c === '[') {
      i++;
      const out: unknown[] = [];
      skip();
      if (text[i] === ']') {
        i++;
        return out;
      }
      for (;;) {
        out.push(value());
        skip();
        const sep = text[i++];
        if (sep === ']') return out;
        if (sep !== ',') throw new SyntaxError(`bad JSON at ${i}`);
      }
    }
    if (c === '"') return JSON.parse(token(JSON_STRING));
    for (const [word, v] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const)
      if (text.startsWith(word, i)) {
        i += word.length;
        return v;
      }
    const lit = token(NUMBER);
    const n = Number(lit);
    return /[.eE]/.test(lit) || lit.replace('-', '').length > 15 ? new RawNumber(lit, n) : n;
  };
  try {
    const v = value();
    skip();
    return i === text.length ? v : undefined;
  } catch {
    return undefined;
  }
}

/** Could `text` hold a number literal that JavaScript does not keep (a cheap check before the slow parse)? */
const mayHoldRawNumbers = (text: string) => /[0-9][.eE]|[0-9]{16}/.test(text);

/**
 * The error kube-apiserver's JSON decoder reports for `obj` decoded into the built-in model `modelName`
 * (without the `<Kind> in version … cannot be handled as a <Kind>: ` prefix), or undefined when it decodes.
 * `rawJson`, the request body `obj` was parsed from, lets integer fields see number literals as written.
 */
export function goDecodeErrorOf(
  modelName: string,
  obj: Record<string, unknown>,
  rawJson?: string,
): string | undefined {
  const d = new Decoder();
  const raw = rawJson !== undefined && mayHoldRawNumbers(rawJson) ? parseKeepingLiterals(rawJson) : undefined;
  try {
    d.struct_(modelName, goNameOf(modelName).name, isObj(raw) ? raw : obj);
  } catch (e) {
    if (e instanceof Fatal) return e.message;
    throw e;
  }
  return d.saved;
}

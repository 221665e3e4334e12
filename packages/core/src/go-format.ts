/**
 * @packageDocumentation
 * `@kubeloop/core/go-format` — how kube-apiserver prints a decoded JSON value in a message, shared by
 * `@kubeloop/crd` (`validate()`) and `@kubeloop/envtest` (its 422 replies), which may not import each other:
 * apimachinery's `field.Error.ErrorBody` prints a bad value ({@link goBadValue}) with `%v` for int64/float64/bool,
 * `%q` for strings, `"null"` for nil and `%#v` for every other Go type (so an object is
 * `map[string]interface {}{"a":1}` and a list `[]interface {}{"a", 1}` — the real server shows Go syntax there).
 * JSON numbers decode to int64 when integral and to float64 otherwise, as apimachinery's JSON decoder does for
 * unstructured objects. No dependencies.
 */

/**
 * Go's `%v` of a float64 (strconv 'g' with the shortest precision): shortest round-trip digits, exponent form
 * (`1e+06`, `1.5e-05`) when the decimal exponent is below -4 or at least 6.
 */
export function goFloat(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : '-Inf';
  if (n === 0) return Object.is(n, -0) ? '-0' : '0';
  const [mant, e] = n.toExponential().split('e');
  const ex = Number(e);
  if (ex < -4 || ex >= 6) {
    const sign = ex < 0 ? '-' : '+';
    const digits = String(Math.abs(ex)).padStart(2, '0');
    return `${mant}e${sign}${digits}`;
  }
  return String(n);
}

/** `%v` of a number as apimachinery decodes it: an integral JSON number is an int64, others float64. */
export function goNumber(n: number): string {
  return Number.isInteger(n) && Math.abs(n) < 2 ** 63 ? String(n) : goFloat(n);
}

/** Go's `%q` of a string (strconv.Quote): printable runes as they are, control characters escaped. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0) as number;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (c === 7) out += '\\a';
    else if (c === 8) out += '\\b';
    else if (c === 12) out += '\\f';
    else if (c === 10) out += '\\n';
    else if (c === 13) out += '\\r';
    else if (c === 9) out += '\\t';
    else if (c === 11) out += '\\v';
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else if (c >= 0x80 && c < 0xa0) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** Go's `%#v` of a decoded JSON value held in an `interface{}`. */
export function goSharpV(v: unknown, inInterface = false): string {
  if (v === null || v === undefined) return inInterface ? 'interface {}(nil)' : '<nil>';
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number') return goNumber(v);
  if (typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[]interface {}{${v.map((x) => goSharpV(x, true)).join(', ')}}`;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o).sort();
    return `map[string]interface {}{${keys.map((k) => `${goQuote(k)}:${goSharpV(o[k], true)}`).join(', ')}}`;
  }
  return String(v);
}

/**
 * The value part of `field.Error.ErrorBody` (`Invalid value: <this>`): `%v` for numbers and booleans, `%q`
 * for strings, `"null"` for nil (apimachinery swaps a nil value for the string `"null"` before quoting it), `%#v`
 * for the rest.
 */
export function goBadValue(v: unknown): string {
  if (v === null || v === undefined) return '"null"';
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number') return goNumber(v);
  if (typeof v === 'boolean') return String(v);
  return goSharpV(v);
}

/**
 * Field selectors (apimachinery `pkg/fields`): the one parser of the stack. `parseFieldSelector` turns the
 * wire form into requirements with unescaped values; `formatFieldSelector` builds the wire form. The cache
 * answers field-selected reads from parsed requirements, so a value containing `,` or `=` (escaped on the
 * wire) means the same to the client and to the cache.
 */
import { SelectorParseError } from './label-selector.js';

/** One field requirement; `value` is unescaped. `=` and `==` both mean equality (apimachinery). */
export interface FieldRequirement {
  readonly field: string;
  readonly operator: '=' | '==' | '!=';
  readonly value: string;
}

/** A field selector as the wire string, or an equality map (`{ 'metadata.name': 'p1' }`, values escaped). */
export type FieldSelectorInput = string | Readonly<Record<string, string>>;

/** Escapes `\`, `,` and `=` in a field selector value (apimachinery `fields.EscapeValue`). */
export function escapeFieldValue(v: string): string {
  return v.replace(/[\\,=]/g, (c) => `\\${c}`);
}

/**
 * The wire string for a field selector; map keys sorted, values escaped; null or undefined: none.
 * @throws SelectorParseError for a selector that is neither a string nor a map, a field with selector syntax in
 *   it, or a value that is not a string.
 */
export function formatFieldSelector(sel: FieldSelectorInput | undefined): string {
  if (sel === undefined || (sel as unknown) === null) return '';
  if (typeof sel === 'string') return sel.trim();
  return fieldMapEntries(sel)
    .map(([k, v]) => `${k}=${escapeFieldValue(v)}`)
    .join(',');
}

/**
 * The entries of an equality map, sorted by field. A field must be a non-empty path without selector syntax
 * (`,`, `=`, `!`, spaces): it is not escaped on the wire, so `{'a=x,b': 'y'}` would become two requirements.
 * null is no selector, as undefined is (JSON's "none").
 * @throws SelectorParseError for a selector that is neither a string nor a map, a bad field or a non-string value.
 */
function fieldMapEntries(sel: unknown): Array<[string, string]> {
  if (typeof sel !== 'object' || sel === null || Array.isArray(sel))
    throw new SelectorParseError(
      `field selector must be a string or a map of field to value, got ${Array.isArray(sel) ? 'an array' : typeof sel}`,
    );
  const entries = Object.entries(sel as Record<string, unknown>);
  for (const [k, v] of entries) {
    if (k === '' || /[\s,=!]/.test(k))
      throw new SelectorParseError(
        `field selector: invalid field ${JSON.stringify(k)}: a field path such as metadata.name, without ",", "=", "!" or spaces`,
      );
    if (typeof v !== 'string')
      throw new SelectorParseError(
        `field selector: the value of ${k} must be a string, got ${v === null ? 'null' : typeof v}`,
      );
  }
  return (entries as Array<[string, string]>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Parses a field selector's wire form exactly as apimachinery `fields.ParseSelector` does (`parseSelector`,
 * `splitTerm`, `UnescapeValue`): terms split on unescaped `,`, and an empty term is skipped (`a=b,` and `,a=b`
 * are one requirement); each term is split at its first `!=`, `==` or `=` — the field is everything before it,
 * as written (no escapes, no trimming; the server, like the cache, then refuses a field it does not know);
 * the value is unescaped (`\\`, `\,`, `\=`) and may not hold an unescaped `=` (`a=b=c` is refused: write
 * `a=b\=c`). An empty or blank selector has no requirements (upstream refuses a blank one; the client never
 * sends it: {@link formatFieldSelector} trims a string selector).
 * @throws SelectorParseError naming the selector and the term: no operator, an unescaped `=` in the value, or
 *   an invalid escape sequence in the value.
 */
export function parseFieldSelector(selector: string): FieldRequirement[] {
  const out: FieldRequirement[] = [];
  if (selector.trim() === '') return out;
  const where = (term: string) => `field selector ${JSON.stringify(selector)}: term ${JSON.stringify(term)}`;
  for (const term of splitTerms(selector)) {
    if (term === '') continue;
    const at = operatorAt(term);
    if (!at) throw new SelectorParseError(`${where(term)} has no operator (=, == or !=)`);
    const field = term.slice(0, at.index);
    const raw = term.slice(at.index + at.operator.length);
    const value = unescapeFieldValue(raw);
    if (value === 'unescaped')
      throw new SelectorParseError(`${where(term)} has an unescaped "=" in its value (escape it as \\=)`);
    if (value === 'badEscape') throw new SelectorParseError(`${where(term)} has an invalid escape sequence`);
    out.push({ field, operator: at.operator, value: value.value });
  }
  return out;
}

/**
 * The parsed requirements of any {@link FieldSelectorInput} (a map gives one equality per key); a string is
 * parsed as {@link formatFieldSelector} sends it (trimmed), so the cache reads what the server would.
 */
export function fieldRequirementsOf(sel: FieldSelectorInput | undefined): FieldRequirement[] {
  if (sel === undefined || (sel as unknown) === null) return [];
  if (typeof sel === 'string') return parseFieldSelector(sel.trim());
  return fieldMapEntries(sel).map(([field, value]) => ({ field, operator: '=', value }));
}

/**
 * Whether an object's field values satisfy every requirement. `fieldValue(field)` returns the object's value
 * of a field (`undefined` when it has none, which only a `!=` requirement matches).
 */
export function matchesFieldRequirements(
  requirements: readonly FieldRequirement[],
  fieldValue: (field: string) => string | undefined,
): boolean {
  for (const r of requirements) {
    const v = fieldValue(r.field);
    if (r.operator === '!=' ? v === r.value : v !== r.value) return false;
  }
  return true;
}

function splitTerms(s: string): string[] {
  const terms: string[] = [];
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\') i++;
    else if (s[i] === ',') {
      terms.push(s.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(s.slice(start));
  return terms;
}

/** The first `!=`, `==` or `=` of a term, scanning from its start; escapes are not looked at (apimachinery `splitTerm`). */
function operatorAt(term: string): { index: number; operator: FieldRequirement['operator'] } | undefined {
  for (let i = 0; i < term.length; i++) {
    const c = term[i];
    if (c === '!' && term[i + 1] === '=') return { index: i, operator: '!=' };
    if (c === '=') return { index: i, operator: term[i + 1] === '=' ? '==' : '=' };
  }
  return undefined;
}

/**
 * The value with `\\`, `\,` and `\=` unescaped (apimachinery `fields.UnescapeValue`); `'badEscape'` for any
 * other escape or a trailing `\`, `'unescaped'` for an unescaped `=` (an unescaped `,` cannot occur: terms
 * are split there).
 */
function unescapeFieldValue(v: string): { value: string } | 'badEscape' | 'unescaped' {
  if (!v.includes('\\') && !v.includes('=')) return { value: v };
  let out = '';
  for (let i = 0; i < v.length; i++) {
    const c = v[i];
    if (c === '=' || c === ',') return 'unescaped';
    if (c !== '\\') {
      out += c;
      continue;
    }
    const n = v[++i];
    if (n !== '\\' && n !== ',' && n !== '=') return 'badEscape';
    out += n;
  }
  return { value: out };
}

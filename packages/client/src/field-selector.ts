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

/** The wire string for a field selector; map keys sorted, values escaped. */
export function formatFieldSelector(sel: FieldSelectorInput | undefined): string {
  if (sel === undefined) return '';
  if (typeof sel === 'string') return sel.trim();
  return Object.entries(sel)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${escapeFieldValue(v)}`)
    .join(',');
}

/**
 * Parses a field selector's wire form (apimachinery `fields.ParseSelector`): terms split on unescaped `,`;
 * each term is `field=value`, `field==value` or `field!=value`, split at its first unescaped operator; the
 * value is unescaped (`\\`, `\,`, `\=`). An empty or blank selector has no requirements.
 * @throws SelectorParseError naming the selector and the term: no operator, an empty field, or an invalid
 *   escape sequence in the value.
 */
export function parseFieldSelector(selector: string): FieldRequirement[] {
  const out: FieldRequirement[] = [];
  if (selector.trim() === '') return out;
  const where = (term: string) => `field selector ${JSON.stringify(selector)}: term ${JSON.stringify(term)}`;
  for (const term of splitTerms(selector)) {
    const at = operatorAt(term);
    if (!at) throw new SelectorParseError(`${where(term)} has no operator (=, == or !=)`);
    const field = term.slice(0, at.index).trim();
    if (field === '') throw new SelectorParseError(`${where(term)} has no field`);
    const raw = term.slice(at.index + at.operator.length);
    const value = unescapeFieldValue(raw);
    if (value === undefined) throw new SelectorParseError(`${where(term)} has an invalid escape sequence`);
    out.push({ field, operator: at.operator, value });
  }
  return out;
}

/** The parsed requirements of any {@link FieldSelectorInput} (a map gives one equality per key). */
export function fieldRequirementsOf(sel: FieldSelectorInput | undefined): FieldRequirement[] {
  if (sel === undefined) return [];
  if (typeof sel === 'string') return parseFieldSelector(sel);
  return Object.entries(sel)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([field, value]) => ({ field, operator: '=', value }));
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

function operatorAt(term: string): { index: number; operator: FieldRequirement['operator'] } | undefined {
  for (let i = 0; i < term.length; i++) {
    const c = term[i];
    if (c === '\\') i++;
    else if (c === '!' && term[i + 1] === '=') return { index: i, operator: '!=' };
    else if (c === '=') return { index: i, operator: term[i + 1] === '=' ? '==' : '=' };
  }
  return undefined;
}

/** The value with `\\`, `\,` and `\=` unescaped, or undefined for any other escape or a trailing `\`. */
function unescapeFieldValue(v: string): string | undefined {
  if (!v.includes('\\')) return v;
  let out = '';
  for (let i = 0; i < v.length; i++) {
    const c = v[i];
    if (c !== '\\') {
      out += c;
      continue;
    }
    const n = v[++i];
    if (n !== '\\' && n !== ',' && n !== '=') return undefined;
    out += n;
  }
  return out;
}

import { SelectorParseError } from '@kubeloop/client';

/** One parsed field selector requirement; `value` is unescaped. */
export interface FieldRequirement {
  readonly field: string;
  readonly operator: '=' | '==' | '!=';
  readonly value: string;
}

/**
 * Parses a field selector's wire form (apimachinery `fields.ParseSelector`): terms split on unescaped `,`,
 * each `field=value`, `field==value` or `field!=value` at the first unescaped operator, values unescaped
 * (`\\`, `\,`, `\=`), so an escaped value made by `formatFieldSelector` parses back to the same value.
 * @throws SelectorParseError for a term without an operator, an empty field or an invalid escape.
 */
export function parseFieldSelectorRequirements(selector: string): FieldRequirement[] {
  const out: FieldRequirement[] = [];
  if (!selector.trim()) return out;
  for (const term of splitUnescaped(selector)) {
    let op: FieldRequirement['operator'] | undefined;
    let at = -1;
    for (let i = 0; i < term.length; i++) {
      const c = term[i];
      if (c === '\\') {
        i++;
        continue;
      }
      if (c === '!' && term[i + 1] === '=') op = '!=';
      else if (c === '=' && term[i + 1] === '=') op = '==';
      else if (c === '=') op = '=';
      if (op) {
        at = i;
        break;
      }
    }
    if (!op)
      throw new SelectorParseError(
        `field selector ${JSON.stringify(selector)}: term ${JSON.stringify(term)} has no operator`,
      );
    const field = term.slice(0, at).trim();
    if (!field)
      throw new SelectorParseError(
        `field selector ${JSON.stringify(selector)}: term ${JSON.stringify(term)} has no field`,
      );
    out.push({ field, operator: op, value: unescapeValue(term.slice(at + op.length), selector) });
  }
  return out;
}

function splitUnescaped(s: string): string[] {
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

function unescapeValue(v: string, selector: string): string {
  let out = '';
  for (let i = 0; i < v.length; i++) {
    const c = v[i]!;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const n = v[i + 1];
    if (n !== '\\' && n !== ',' && n !== '=')
      throw new SelectorParseError(
        `field selector ${JSON.stringify(selector)}: invalid escape sequence in ${JSON.stringify(v)}`,
      );
    out += n;
    i++;
  }
  return out;
}

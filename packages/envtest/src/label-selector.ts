import { badRequest } from './errors.js';

/** One parsed requirement of a label selector (apimachinery `labels.Requirement`). */
export interface LabelRequirement {
  readonly key: string;
  readonly op: 'in' | 'notin' | 'exists' | '!' | '=' | '==' | '!=' | 'gt' | 'lt';
  readonly values: readonly string[];
}

/** A parsed label selector: requirements ANDed; empty matches everything. */
export interface LabelSelector {
  readonly requirements: readonly LabelRequirement[];
  matches(labels: Readonly<Record<string, string>> | undefined): boolean;
}

const NAME_RE = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Validation of a qualified name (label key); returns problems, empty when valid. */
export function validateQualifiedName(key: string): string[] {
  const errs: string[] = [];
  const parts = key.split('/');
  let name = key;
  if (parts.length === 2) {
    const prefix = parts[0]!;
    name = parts[1]!;
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else if (prefix.length > 253 || !DNS_SUBDOMAIN_RE.test(prefix))
      errs.push(
        "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
      );
  } else if (parts.length > 2) {
    errs.push(
      "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    );
    return errs;
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (name.length > 63) errs.push('name part must be no more than 63 characters');
  else if (!NAME_RE.test(name))
    errs.push(
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    );
  return errs;
}

/** Validation of a label value; returns problems, empty when valid. */
export function validateLabelValue(v: string): string[] {
  if (v.length > 63) return ['must be no more than 63 characters'];
  if (v.length > 0 && !NAME_RE.test(v))
    return [
      "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    ];
  return [];
}

type Tok =
  | { t: 'id'; v: string }
  | { t: 'op'; v: string }
  | { t: '('; v: '(' }
  | { t: ')'; v: ')' }
  | { t: ','; v: ',' }
  | { t: '!'; v: '!' };

function lex(s: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  const isSpace = (c: string) => c === ' ' || c === '\t' || c === '\n' || c === '\r';
  const special = '!=<>(),';
  while (i < s.length) {
    const c = s[i]!;
    if (isSpace(c)) {
      i++;
      continue;
    }
    if (c === '(' || c === ')' || c === ',') {
      out.push({ t: c, v: c } as Tok);
      i++;
      continue;
    }
    if (c === '!' && s[i + 1] === '=') {
      out.push({ t: 'op', v: '!=' });
      i += 2;
      continue;
    }
    if (c === '!') {
      out.push({ t: '!', v: '!' });
      i++;
      continue;
    }
    if (c === '=' && s[i + 1] === '=') {
      out.push({ t: 'op', v: '==' });
      i += 2;
      continue;
    }
    if (c === '=' || c === '<' || c === '>') {
      out.push({ t: 'op', v: c });
      i++;
      continue;
    }
    let j = i;
    while (j < s.length && !isSpace(s[j]!) && !special.includes(s[j]!)) j++;
    const word = s.slice(i, j);
    if (word === 'in' || word === 'notin') out.push({ t: 'op', v: word });
    else out.push({ t: 'id', v: word });
    i = j;
  }
  return out;
}

function describe(t: Tok | undefined): string {
  if (!t) return '';
  return t.v;
}

/**
 * Parse a label selector (apimachinery `labels.Parse` grammar: `=`, `==`, `!=`, `in`, `notin`, exists,
 * `!key`, `>`/`<` with integers; requirements joined by `,`).
 * @throws ApiStatusError 400 BadRequest on a parse or validation error.
 */
export function parseLabelSelector(input: string | null | undefined): LabelSelector {
  const src = (input ?? '').trim();
  const reqs: LabelRequirement[] = [];
  if (src !== '') {
    const toks = lex(src);
    let p = 0;
    const fail = (msg: string): never => {
      throw badRequest(`unable to parse requirement: ${msg}`);
    };
    while (p < toks.length) {
      let tok = toks[p];
      let negate = false;
      if (tok?.t === '!') {
        negate = true;
        p++;
        tok = toks[p];
      }
      if (tok?.t !== 'id') fail(`found '${describe(tok)}', expected: !, identifier, or 'end of string'`);
      const key = (tok as { v: string }).v;
      p++;
      checkKey(key);
      const next = toks[p];
      if (negate) {
        if (next && next.t !== ',') fail(`found '${describe(next)}', expected: ',' or 'end of string'`);
        reqs.push({ key, op: '!', values: [] });
      } else if (!next || next.t === ',') {
        reqs.push({ key, op: 'exists', values: [] });
      } else if (next.t === 'op') {
        p++;
        const op = next.v;
        if (op === 'in' || op === 'notin') {
          if (toks[p]?.t !== '(') fail(`found '${describe(toks[p])}', expected: '('`);
          p++;
          const values: string[] = [];
          for (;;) {
            const v = toks[p];
            if (v?.t === 'id') {
              values.push(v.v);
              p++;
            } else if (v?.t === ',' || v?.t === ')') {
              // empty value between commas or before ')'
              if (v.t === ')' && values.length === 0 && toks[p - 1]?.t === '(') {
                fail(`for 'in', 'notin' operators, values set can't be empty`);
              }
              if (v.t === ',' || toks[p - 1]?.t === ',') values.push('');
            } else {
              fail(`found '${describe(v)}', expected: ',', ')' or identifier`);
            }
            const sep = toks[p];
            if (sep?.t === ',') {
              p++;
              continue;
            }
            if (sep?.t === ')') {
              p++;
              break;
            }
            fail(`found '${describe(sep)}', expected: ',' or ')'`);
          }
          for (const v of values) checkValue(v);
          reqs.push({ key, op: op === 'in' ? 'in' : 'notin', values });
        } else {
          const v = toks[p];
          let value = '';
          if (v?.t === 'id') {
            value = v.v;
            p++;
          } else if (v && v.t !== ',') {
            fail(`found '${describe(v)}', expected: identifier`);
          }
          if (op === '>' || op === '<') {
            if (!/^-?\d+$/.test(value)) fail(`for 'Gt', 'Lt' operators, the value must be an integer`);
            reqs.push({ key, op: op === '>' ? 'gt' : 'lt', values: [value] });
          } else {
            checkValue(value);
            reqs.push({ key, op: op as '=' | '==' | '!=', values: [value] });
          }
        }
      } else {
        fail(`found '${describe(next)}', expected: '=', '!=', '==', 'in', notin'`);
      }
      const sep = toks[p];
      if (sep === undefined) break;
      if (sep.t !== ',') fail(`found '${describe(sep)}', expected: ',' or 'end of string'`);
      p++;
      if (p >= toks.length) fail(`found '', expected: identifier after ','`);
    }
  }
  return {
    requirements: reqs,
    matches: (labels) => reqs.every((r) => matchOne(r, labels ?? {})),
  };
}

function checkKey(key: string): void {
  const errs = validateQualifiedName(key);
  if (errs.length > 0)
    throw badRequest(`unable to parse requirement: invalid label key "${key}": ${errs.join('; ')}`);
}

function checkValue(v: string): void {
  const errs = validateLabelValue(v);
  if (errs.length > 0)
    throw badRequest(`unable to parse requirement: invalid label value: "${v}": at key: ${errs.join('; ')}`);
}

function matchOne(r: LabelRequirement, labels: Readonly<Record<string, string>>): boolean {
  const has = Object.hasOwn(labels, r.key);
  const v = labels[r.key];
  switch (r.op) {
    case 'exists':
      return has;
    case '!':
      return !has;
    case '=':
    case '==':
    case 'in':
      return has && r.values.includes(v!);
    case '!=':
    case 'notin':
      return !has || !r.values.includes(v!);
    case 'gt':
    case 'lt': {
      if (!has || !/^-?\d+$/.test(v!)) return false;
      const n = Number(v);
      const w = Number(r.values[0]);
      return r.op === 'gt' ? n > w : n < w;
    }
  }
}

import { badRequest } from './errors.js';
import type { KObject, ResourceType } from './resource-type.js';

/** One field requirement (apimachinery `fields.Requirement`). */
export interface FieldRequirement {
  readonly field: string;
  readonly op: '=' | '!=';
  readonly value: string;
}

export interface FieldSelector {
  readonly requirements: readonly FieldRequirement[];
  matches(obj: KObject): boolean;
}

function splitTerms(s: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '\\' && i + 1 < s.length) {
      cur += c + s[i + 1];
      i++;
    } else if (c === ',') {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out;
}

function unescapeValue(v: string): string {
  let out = '';
  for (let i = 0; i < v.length; i++) {
    const c = v[i]!;
    if (c === '\\') {
      const n = v[i + 1];
      if (n === '\\' || n === ',' || n === '=') {
        out += n;
        i++;
        continue;
      }
      throw badRequest(`invalid field selector: invalid escape sequence: ${v}`);
    }
    if (c === ',' || c === '=') throw badRequest(`invalid field selector: unescaped ${c}: ${v}`);
    out += c;
  }
  return out;
}

/** Parse the `key=value,key!=value` grammar (with `\,` `\=` `\\` escapes). */
export function parseFieldRequirements(input: string | null | undefined): FieldRequirement[] {
  const src = (input ?? '').trim();
  if (src === '') return [];
  const reqs: FieldRequirement[] = [];
  for (const term of splitTerms(src)) {
    if (term === '') continue;
    let idx = -1;
    let op: '=' | '!=' = '=';
    let oplen = 1;
    for (let i = 0; i < term.length; i++) {
      const c = term[i]!;
      if (c === '\\') {
        i++;
        continue;
      }
      if (c === '!' && term[i + 1] === '=') {
        idx = i;
        op = '!=';
        oplen = 2;
        break;
      }
      if (c === '=') {
        idx = i;
        op = '=';
        oplen = term[i + 1] === '=' ? 2 : 1;
        break;
      }
    }
    if (idx < 0) throw badRequest(`invalid selector: '${src}'; can't understand '${term}'`);
    reqs.push({ field: term.slice(0, idx).trim(), op, value: unescapeValue(term.slice(idx + oplen)) });
  }
  return reqs;
}

function meta(obj: KObject): Record<string, unknown> {
  return (obj.metadata ?? {}) as Record<string, unknown>;
}

/** The value of a selectable field of an object (absent = ""), or undefined when the field is not selectable. */
export function fieldGetter(rt: ResourceType, field: string): ((obj: KObject) => string) | undefined {
  if (field === 'metadata.name') return (o) => String(meta(o).name ?? '');
  if (field === 'metadata.namespace') return (o) => String(meta(o).namespace ?? '');
  return rt.fieldSelectors[field];
}

/**
 * Parse a field selector for one resource. Supported fields: metadata.name, metadata.namespace and the
 * resource's own (pods: spec.nodeName, status.phase, ...).
 * @throws ApiStatusError 400 on a syntax error or an unsupported field (message as upstream).
 */
export function parseFieldSelector(rt: ResourceType, input: string | null | undefined): FieldSelector {
  const reqs = parseFieldRequirements(input);
  const getters = reqs.map((r) => {
    const g = fieldGetter(rt, r.field);
    if (!g) {
      if (rt.fieldSelectorStyle === 'builtin') throw badRequest(`field label not supported: ${r.field}`);
      const extra = Object.keys(rt.fieldSelectors);
      const all = ['metadata.name', 'metadata.namespace', ...extra].map((f) => `"${f}"`).join(', ');
      throw badRequest(`"${r.field}" is not a known field selector: only ${all}`);
    }
    return g;
  });
  return {
    requirements: reqs,
    matches: (obj) =>
      reqs.every((r, i) => {
        const v = getters[i]!(obj);
        return r.op === '=' ? v === r.value : v !== r.value;
      }),
  };
}

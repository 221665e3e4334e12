/**
 * The part of client-go's `util/jsonpath` that CRD printer columns use (apiextensions-apiserver
 * `tableconvertor`: the template `{<jsonPath>}` evaluated with missing keys allowed, the cell is the first
 * result): `.field`, `['field']`, `[n]` (negative from the end), `[*]`, and filters
 * `[?(@.a.b == "x")]` with `==`, `!=`, `<`, `<=`, `>`, `>=` against a quoted string, a number, `true`,
 * `false` or `null`, or `[?(@.a)]` (the field exists). Recursive descent (`..`), slices and unions are not
 * supported: such a path yields no value.
 */

type Step =
  | { readonly kind: 'field'; readonly name: string }
  | { readonly kind: 'index'; readonly index: number }
  | { readonly kind: 'all' }
  | {
      readonly kind: 'filter';
      readonly path: readonly string[];
      readonly op?: string;
      readonly value?: unknown;
    };

const FILTER = /^\?\(\s*@((?:\.[^.\s=!<>()]+)*)\s*(?:(==|!=|<=|>=|<|>)\s*(.+?))?\s*\)$/;

function literal(text: string): unknown {
  const t = text.trim();
  if ((t.startsWith('"') && t.endsWith('"')) || (t.startsWith("'") && t.endsWith("'"))) return t.slice(1, -1);
  if (t === 'true') return true;
  if (t === 'false') return false;
  if (t === 'null') return null;
  const n = Number(t);
  return Number.isFinite(n) ? n : undefined;
}

/** The steps of `path`, or undefined when it uses syntax outside the supported part. */
function parse(path: string): Step[] | undefined {
  let p = path.trim();
  if (p.startsWith('{') && p.endsWith('}')) p = p.slice(1, -1).trim();
  const steps: Step[] = [];
  let i = 0;
  while (i < p.length) {
    if (p[i] === '.') {
      if (p[i + 1] === '.') return undefined; // recursive descent
      let j = i + 1;
      while (j < p.length && p[j] !== '.' && p[j] !== '[') j++;
      const name = p.slice(i + 1, j);
      if (name) steps.push({ kind: 'field', name });
      i = j;
    } else if (p[i] === '[') {
      // a filter may hold ] inside quotes: find the ] that closes this bracket outside quotes
      let j = i + 1;
      let quote = '';
      while (j < p.length && (quote || p[j] !== ']')) {
        const ch = p[j] ?? '';
        if (quote && ch === quote) quote = '';
        else if (!quote && (ch === '"' || ch === "'")) quote = ch;
        j++;
      }
      if (j >= p.length) return undefined;
      const inner = p.slice(i + 1, j).trim();
      i = j + 1;
      if (inner === '*') steps.push({ kind: 'all' });
      else if (/^-?\d+$/.test(inner)) steps.push({ kind: 'index', index: Number(inner) });
      else if (/^(['"]).*\1$/.test(inner)) steps.push({ kind: 'field', name: inner.slice(1, -1) });
      else {
        const m = FILTER.exec(inner);
        if (!m) return undefined;
        const fieldPath = (m[1] ?? '').split('.').filter(Boolean);
        if (m[2] === undefined) steps.push({ kind: 'filter', path: fieldPath });
        else steps.push({ kind: 'filter', path: fieldPath, op: m[2], value: literal(m[3] ?? '') });
      }
    } else {
      // a leading bare name (`spec.color`) reads as `.spec.color`
      let j = i;
      while (j < p.length && p[j] !== '.' && p[j] !== '[') j++;
      steps.push({ kind: 'field', name: p.slice(i, j) });
      i = j;
    }
  }
  return steps;
}

function field(o: unknown, path: readonly string[]): unknown {
  let cur = o;
  for (const name of path) {
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) return undefined;
    cur = (cur as Record<string, unknown>)[name];
  }
  return cur;
}

function matches(step: Extract<Step, { kind: 'filter' }>, item: unknown): boolean {
  const v = field(item, step.path);
  if (step.op === undefined) return v !== undefined;
  if (v === undefined) return false;
  const want = step.value;
  switch (step.op) {
    case '==':
      return v === want;
    case '!=':
      return v !== want;
    default: {
      if (typeof v !== 'number' || typeof want !== 'number') return false;
      if (step.op === '<') return v < want;
      if (step.op === '<=') return v <= want;
      if (step.op === '>') return v > want;
      return v >= want;
    }
  }
}

/**
 * A getter for `jsonPath` that returns the first value it selects from an object (undefined when it selects
 * nothing or uses unsupported syntax), as a printer column cell takes `results[0][0]`.
 */
export function firstJsonPathValue(jsonPath: string): (o: unknown) => unknown {
  const steps = parse(jsonPath);
  return (o) => {
    if (!steps) return undefined;
    let values: unknown[] = [o];
    for (const step of steps) {
      const next: unknown[] = [];
      for (const v of values) {
        if (step.kind === 'field') {
          if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
            const x = (v as Record<string, unknown>)[step.name];
            if (x !== undefined) next.push(x);
          }
        } else if (Array.isArray(v)) {
          if (step.kind === 'index') {
            const x = v[step.index < 0 ? v.length + step.index : step.index];
            if (x !== undefined) next.push(x);
          } else if (step.kind === 'all') for (const x of v) next.push(x);
          else for (const x of v) if (matches(step, x)) next.push(x);
        }
      }
      values = next;
      if (values.length === 0) return undefined;
    }
    return values[0];
  };
}

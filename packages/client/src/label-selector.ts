/**
 * Label selectors: building their wire form, parsing it and matching objects against it
 * (apimachinery `pkg/labels/selector.go`). Field selectors are in `field-selector.ts`.
 */
import { BrandedError } from '@kubeloop/core';

/** One parsed label requirement. */
export interface LabelRequirement {
  readonly key: string;
  readonly operator: 'in' | 'notin' | 'exists' | '!' | 'gt' | 'lt';
  readonly values: readonly string[];
}

/** The Kubernetes `LabelSelector` object form (`matchLabels` + `matchExpressions`). */
export interface LabelSelectorObject {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: ReadonlyArray<{
    readonly key: string;
    readonly operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
    readonly values?: readonly string[];
  }>;
}

/**
 * A label selector as accepted by list/watch options: the wire string (`app=web,tier in (a,b)`), an
 * equality map (`{ app: 'web' }`, like `MatchingLabels`) or a `LabelSelector` object.
 */
export type LabelSelectorInput = string | Readonly<Record<string, string>> | LabelSelectorObject;

/** Thrown for a selector that does not parse. Code `'ERR_SELECTOR'`. */
export class SelectorParseError extends BrandedError {
  static override readonly brandName: string = 'client.SelectorParseError';
  readonly code = 'ERR_SELECTOR' as const;
  override readonly name = 'SelectorParseError';
}

function isSelectorObject(s: object): s is LabelSelectorObject {
  return 'matchLabels' in s || 'matchExpressions' in s;
}

/**
 * The wire string for a label selector (what goes into `?labelSelector=`). Map keys are sorted, as
 * `labels.SelectorFromSet(...).String()` does. The empty string selects everything.
 *
 * Keys and values of a map or object are checked as `labels.NewRequirement` does
 * (`metav1.LabelSelectorAsSelector`): a value holding selector syntax (`web,!admin`) is refused, never turned
 * into more requirements on the wire.
 *
 * @throws SelectorParseError for a map or `LabelSelector` object with an invalid key or value, an unknown
 *   operator, `In`/`NotIn` without values or `Exists`/`DoesNotExist` with values.
 */
export function formatLabelSelector(sel: LabelSelectorInput | undefined): string {
  // null (JSON's "none", e.g. a custom resource's `spec.selector: null`) is no selector, as undefined is.
  if (sel === undefined || (sel as unknown) === null) return '';
  if (typeof sel === 'string') return sel.trim();
  if (typeof sel !== 'object' || Array.isArray(sel))
    throw new SelectorParseError(
      `label selector must be a string, a map or a LabelSelector object, got ${Array.isArray(sel) ? 'an array' : typeof sel}`,
    );
  if (isSelectorObject(sel)) {
    const parts: string[] = [];
    for (const [k, v] of sortedEntries(sel.matchLabels ?? {}, 'matchLabels')) parts.push(`${k}=${v}`);
    for (const e of sel.matchExpressions ?? []) {
      checkLabel(e.key, undefined, 'matchExpressions');
      const values = [...(e.values ?? [])].sort();
      for (const v of values) checkLabel(e.key, v, 'matchExpressions');
      switch (e.operator) {
        case 'In':
        case 'NotIn':
          if (values.length === 0)
            throw new SelectorParseError(`${e.operator} for key ${e.key} needs values`);
          parts.push(`${e.key} ${e.operator === 'In' ? 'in' : 'notin'} (${values.join(',')})`);
          break;
        case 'Exists':
        case 'DoesNotExist':
          if (values.length > 0)
            throw new SelectorParseError(`${e.operator} for key ${e.key} takes no values`);
          parts.push(e.operator === 'Exists' ? e.key : `!${e.key}`);
          break;
        default:
          throw new SelectorParseError(`unknown label selector operator ${JSON.stringify(e.operator)}`);
      }
    }
    return parts.join(',');
  }
  return sortedEntries(sel as Record<string, string>, 'map')
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

/** The entries of a label map sorted by key, every key and value checked. */
function sortedEntries(m: Readonly<Record<string, string>>, where: string): Array<[string, string]> {
  const entries = Object.entries(m);
  for (const [k, v] of entries) checkLabel(k, v, where);
  return entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** @throws SelectorParseError naming `where`, the key and the value when either is not a valid label key or value. */
function checkLabel(key: unknown, value: unknown, where: string): void {
  const keyProblem = typeof key === 'string' ? labelKeyProblem(key) : 'it is not a string';
  if (keyProblem)
    throw new SelectorParseError(
      `label selector ${where}: invalid key ${JSON.stringify(key)}: ${keyProblem}`,
    );
  if (value === undefined) return;
  const valueProblem = typeof value === 'string' ? labelValueProblem(value) : 'it is not a string';
  if (valueProblem)
    throw new SelectorParseError(
      `label selector ${where}: invalid value ${JSON.stringify(value)} for key ${key}: ${valueProblem}`,
    );
}

const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Why `key` is not a valid label key (apimachinery `validateLabelKey`: a qualified name), or undefined. */
function labelKeyProblem(key: string): string | undefined {
  const slash = key.indexOf('/');
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (slash >= 0) {
    const prefix = key.slice(0, slash);
    if (prefix === '' || prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))
      return 'its prefix must be a DNS subdomain (lower case alphanumerics, "-" and ".")';
    if (name.includes('/')) return 'it may have one "/" at most';
  }
  if (name === '' || name.length > 63 || !LABEL_NAME.test(name))
    return 'its name must be 1-63 alphanumerics, "-", "_" or ".", starting and ending alphanumeric';
  return undefined;
}

/** Why `v` is not a valid label value (apimachinery `validateLabelValue`), or undefined. */
function labelValueProblem(v: string): string | undefined {
  if (v.length > 63 || (v !== '' && !LABEL_NAME.test(v)))
    return 'a value must be empty or 1-63 alphanumerics, "-", "_" or ".", starting and ending alphanumeric';
  return undefined;
}

/**
 * Parses a label selector string into requirements (AND-ed), validating keys and values as apimachinery's
 * `labels.Parse` does (keys are qualified names, values at most 63 name characters, `>`/`<` take an integer).
 *
 * @throws SelectorParseError naming the position on a syntax error (e.g. `in ()` with no values) or an
 *   invalid key or value.
 */
export function parseLabelSelector(selector: string): LabelRequirement[] {
  const s = selector;
  let i = 0;
  const out: LabelRequirement[] = [];
  const skipWs = () => {
    while (i < s.length && /\s/.test(s[i]!)) i++;
  };
  const ident = (): string => {
    skipWs();
    const start = i;
    while (i < s.length && !/[\s,()=!<>]/.test(s[i]!)) i++;
    return s.slice(start, i);
  };
  const fail = (msg: string): never => {
    throw new SelectorParseError(`label selector ${JSON.stringify(selector)}: ${msg} at position ${i}`);
  };
  const checkKey = (key: string) => {
    const problem = labelKeyProblem(key);
    if (problem) fail(`invalid key ${JSON.stringify(key)}: ${problem}`);
  };
  const checkValues = (values: readonly string[]) => {
    for (const v of values) {
      const problem = labelValueProblem(v);
      if (problem) fail(`invalid value ${JSON.stringify(v)}: ${problem}`);
    }
  };
  skipWs();
  if (i >= s.length) return out;
  for (;;) {
    skipWs();
    if (s[i] === '!') {
      i++;
      const key = ident();
      if (!key) fail('expected a key after "!"');
      checkKey(key);
      out.push({ key, operator: '!', values: [] });
    } else {
      const key = ident();
      if (!key) fail('expected a key');
      checkKey(key);
      skipWs();
      const rest = s.slice(i);
      if (i >= s.length || s[i] === ',') {
        out.push({ key, operator: 'exists', values: [] });
      } else if (rest.startsWith('==') || rest.startsWith('=') || rest.startsWith('!=')) {
        const op = rest.startsWith('!=') ? 'notin' : 'in';
        i += rest.startsWith('==') || rest.startsWith('!=') ? 2 : 1;
        const v = ident();
        checkValues([v]);
        out.push({ key, operator: op, values: [v] });
      } else if (rest.startsWith('>') || rest.startsWith('<')) {
        i++;
        const v = ident();
        if (!/^-?\d+$/.test(v)) fail('expected an integer');
        out.push({ key, operator: rest.startsWith('>') ? 'gt' : 'lt', values: [v] });
      } else {
        const word = ident();
        if (word !== 'in' && word !== 'notin') fail(`unexpected ${JSON.stringify(word || s[i])}`);
        skipWs();
        if (s[i] !== '(') fail('expected "("');
        i++;
        const values: string[] = [];
        for (;;) {
          const v = ident();
          values.push(v);
          skipWs();
          if (s[i] === ',') {
            i++;
            continue;
          }
          if (s[i] === ')') {
            i++;
            break;
          }
          fail('expected "," or ")"');
        }
        if (values.length === 1 && values[0] === '') fail(`${word} needs at least one value`);
        checkValues(values);
        out.push({ key, operator: word === 'in' ? 'in' : 'notin', values });
      }
    }
    skipWs();
    if (i >= s.length) return out;
    if (s[i] !== ',') fail('expected ","');
    i++;
  }
}

/** Whether `labels` satisfy every requirement (`!=` and `notin` match objects lacking the key). */
export function matchesLabelRequirements(
  reqs: readonly LabelRequirement[],
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  const l = labels ?? {};
  for (const r of reqs) {
    const has = Object.hasOwn(l, r.key);
    const v = l[r.key];
    switch (r.operator) {
      case 'in':
        if (!has || !r.values.includes(v!)) return false;
        break;
      case 'notin':
        if (has && r.values.includes(v!)) return false;
        break;
      case 'exists':
        if (!has) return false;
        break;
      case '!':
        if (has) return false;
        break;
      case 'gt':
      case 'lt': {
        if (!has || !/^-?\d+$/.test(v!)) return false;
        const n = Number(v);
        const bound = Number(r.values[0]);
        if (r.operator === 'gt' ? !(n > bound) : !(n < bound)) return false;
        break;
      }
    }
  }
  return true;
}

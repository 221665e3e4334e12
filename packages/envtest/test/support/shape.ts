/**
 * Shape comparison of API responses against the recorded goldens in `test/golden/1.32/golden/`.
 *
 * The golden README defines "shape": the same keys present or absent, the same JSON types, the same list
 * lengths, and equal values only for a fixed set of semantic keys (`kind`, `apiVersion`, `reason`, `code`, …).
 * Values that vary between runs (uids, resource versions, timestamps, continue tokens, generated names, content
 * hashes) are never compared as values; their presence and JSON type still are.
 */

/** One difference between the golden (expected) and the observed (actual) value. */
export interface ShapeDiff {
  /** JSON path of the difference, e.g. `$.metadata.labels.app` or `$.items[name=p1].spec`. */
  readonly path: string;
  readonly expected: string;
  readonly actual: string;
}

/** Keys whose values (when string, number or boolean) must be equal, per the golden README. */
export const VALUE_KEYS: ReadonlySet<string> = new Set([
  'kind',
  'apiVersion',
  'reason',
  'code',
  'status',
  'type',
  'generation',
  'remainingItemCount',
  'manager',
  'operation',
  'subresource',
  'field',
  'phase',
  'group',
]);

/** Options for {@link compareShape}. */
export interface CompareOptions {
  /**
   * Paths (in the `$.a.b[]` form with `[]` for any array element) where the expected side may hold more
   * object keys or array elements than the actual side: envtest serves a subset of kube-apiserver's API, so
   * discovery documents and the OpenAPI index list fewer groups and resources.
   */
  readonly subsetAt?: readonly string[];
  /** Compare `message` strings of `Status` objects after masking varying parts (default true). */
  readonly compareStatusMessages?: boolean;
  /** Paths (same form as `subsetAt`) whose subtree is not compared at all (a documented deliberate difference). */
  readonly ignoreAt?: readonly string[];
  /**
   * Strict comparison (what CI runs besides the shape check): every scalar value must be equal except the
   * run-to-run values the golden README lists ({@link VARYING_KEYS}, timestamps, Table ages, generated names),
   * Status messages are compared with only UUIDs, timestamps, generated names and resource-version-sized numbers
   * masked ({@link maskMessageStrict}), and arrays matched by identity must also keep the golden's order (the order of
   * `managedFields` entries, of discovery resources, of list items).
   */
  readonly strict?: boolean;
}

/**
 * Keys whose values vary from run to run (golden README "which values vary"); strict mode compares only their
 * presence and JSON type.
 */
export const VARYING_KEYS: ReadonlySet<string> = new Set([
  'uid',
  'resourceVersion',
  'creationTimestamp',
  'deletionTimestamp',
  'time',
  'lastTransitionTime',
  'continue',
  'storageVersionHash',
  'serverAddress',
  'serverRelativeURL',
  'acquireTime',
  'renewTime',
  'eventTime',
]);

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const TIMESTAMP = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g;
const GENERATED = /\b([a-z0-9-]+-)[bcdfghjklmnpqrstvwxz2456789]{5}\b/g;
const NUMBER = /\b\d+\b/g;

/**
 * Masks the parts of a Status message that differ from run to run: UUIDs, timestamps, generated-name
 * suffixes and bare numbers (resource versions).
 */
export function maskMessage(message: string, generatedPrefixes: readonly string[] = ['wire-gen-']): string {
  let m = message.replace(UUID, '<uid>').replace(TIMESTAMP, '<time>');
  m = m.replace(GENERATED, (whole, prefix: string) =>
    generatedPrefixes.includes(prefix) ? `${prefix}<gen>` : whole,
  );
  return m.replace(NUMBER, '<n>');
}

/**
 * The strict mask of a message: UUIDs, timestamps and generated-name suffixes, and numbers of three or more digits
 * (resource versions) except 100–599 (HTTP codes); small numbers such as a byte offset stay compared.
 */
export function maskMessageStrict(message: string): string {
  return message
    .replace(UUID, '<uid>')
    .replace(TIMESTAMP, '<time>')
    .replace(GENERATED, (whole, prefix: string) => (prefix === 'wire-gen-' ? `${prefix}<gen>` : whole))
    .replace(/\b\d{3,}\b/g, (n) => (/^[1-5]\d\d$/.test(n) ? n : '<n>'));
}

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

function describe(v: unknown): string {
  const t = typeOf(v);
  if (t === 'object') return `object{${Object.keys(v as object).join(',')}}`;
  if (t === 'array') return `array(${(v as unknown[]).length})`;
  return `${t} ${JSON.stringify(v)}`;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The identity of an array element, used to match elements regardless of order; undefined if none. */
function identityOf(v: unknown): string | undefined {
  if (!isRecord(v)) return typeof v === 'string' ? `=${v}` : undefined;
  const meta = v.metadata;
  if (isRecord(meta) && typeof meta.name === 'string' && meta.name !== '') {
    return `metadata.name=${isGeneratedName(meta.name) ? 'wire-gen-<gen>' : meta.name}`;
  }
  for (const k of ['name', 'resource', 'subresource', 'version', 'groupVersion', 'type', 'manager']) {
    const val = v[k];
    if (typeof val === 'string') {
      // managedFields entries: a manager may appear with several operations / subresources.
      if (k === 'manager') return `manager=${val}/${String(v.operation)}/${String(v.subresource ?? '')}`;
      return `${k}=${val}`;
    }
  }
  return undefined;
}

function elementIdentities(arr: readonly unknown[]): string[] | undefined {
  const ids: string[] = [];
  for (const el of arr) {
    const id = identityOf(el);
    if (id === undefined) return undefined;
    ids.push(id);
  }
  return new Set(ids).size === ids.length ? ids : undefined;
}

/** Normalises a concrete path (`$.items[3].x`, `$.a[name=b].c`) to the pattern form (`$.items[].x`). */
function pattern(path: string): string {
  return path.replace(/\[[^\]]*\]/g, '[]');
}

function matches(path: string, patterns: readonly string[] | undefined): boolean {
  if (!patterns || patterns.length === 0) return false;
  const p = pattern(path);
  return patterns.some((q) => (q.endsWith('*') ? p.startsWith(q.slice(0, -1)) : p === q));
}

/** Generated names (e.g. `wire-gen-d5lt9`) vary; treat both sides' `name` values with this prefix as equal. */
function isGeneratedName(v: unknown): boolean {
  return typeof v === 'string' && /^wire-gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/.test(v);
}

const AGE = /^(\d+[smhdy])+$|^<invalid>$|^<unknown>$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** Both strings are wall-clock derived (Table ages, timestamps) or generated names: never compared as values. */
function bothVarying(e: string, a: string): boolean {
  return (
    (AGE.test(e) && AGE.test(a)) ||
    (RFC3339.test(e) && RFC3339.test(a)) ||
    (isGeneratedName(e) && isGeneratedName(a))
  );
}

/**
 * managedFields entry ids in the order kube-apiserver writes them (apimachinery `sortEncodedManagedFields`:
 * operation, time in whole seconds with no time first, manager, apiVersion, subresource), taking each entry from
 * `byId` (the observed run, whose times decide).
 */
function sortManagedFieldIds(ids: readonly string[], byId: ReadonlyMap<string, unknown>): string[] {
  const key = (id: string) => {
    const e = (byId.get(id) ?? {}) as Record<string, unknown>;
    const t = typeof e.time === 'string' ? Math.floor(Date.parse(e.time) / 1000) : Number.NEGATIVE_INFINITY;
    return [
      String(e.operation),
      t,
      String(e.manager),
      String(e.apiVersion),
      String(e.subresource ?? ''),
    ] as const;
  };
  return [...ids].sort((x, y) => {
    const a = key(x);
    const b = key(y);
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
    return 0;
  });
}

/**
 * Compares the shape of `actual` with `expected` (the golden), returning every difference found.
 * An empty array means the shapes agree.
 *
 * Rules: object key sets must be equal (both directions); JSON types must be equal; arrays must have the same
 * length and are matched element-wise by identity (`metadata.name`, `name`, `resource`, `version`, `type`, …)
 * when every element has a distinct one, else by index; values are compared only under {@link VALUE_KEYS}
 * (`status` only when a string or number), and Status `message`s after {@link maskMessage}.
 */
export function compareShape(expected: unknown, actual: unknown, options: CompareOptions = {}): ShapeDiff[] {
  const diffs: ShapeDiff[] = [];
  const compareMessages = options.compareStatusMessages ?? true;

  const walk = (e: unknown, a: unknown, path: string, key: string | undefined, parent: unknown): void => {
    if (matches(path, options.ignoreAt)) return;
    const te = typeOf(e);
    const ta = typeOf(a);
    if (te !== ta) {
      diffs.push({ path, expected: describe(e), actual: describe(a) });
      return;
    }
    if (te === 'object') {
      const eo = e as Record<string, unknown>;
      const ao = a as Record<string, unknown>;
      const subset = matches(path, options.subsetAt);
      for (const k of Object.keys(eo)) {
        if (!(k in ao)) {
          if (!subset) diffs.push({ path: `${path}.${k}`, expected: describe(eo[k]), actual: 'absent' });
          continue;
        }
        walk(eo[k], ao[k], `${path}.${k}`, k, eo);
      }
      for (const k of Object.keys(ao)) {
        if (!(k in eo)) diffs.push({ path: `${path}.${k}`, expected: 'absent', actual: describe(ao[k]) });
      }
      return;
    }
    if (te === 'array') {
      const ea = e as unknown[];
      const aa = a as unknown[];
      const subset = matches(path, options.subsetAt);
      const eIds = elementIdentities(ea);
      const aIds = elementIdentities(aa);
      if (eIds && aIds && (ea.length > 0 || aa.length > 0)) {
        const aById = new Map(aIds.map((id, i) => [id, aa[i]]));
        const eSet = new Set(eIds);
        eIds.forEach((id, i) => {
          const sub = `${path}[${id}]`;
          if (aById.has(id)) walk(ea[i], aById.get(id), sub, undefined, ea);
          else if (!subset) diffs.push({ path: sub, expected: describe(ea[i]), actual: 'absent' });
        });
        for (const id of aIds) {
          if (!eSet.has(id)) {
            diffs.push({ path: `${path}[${id}]`, expected: 'absent', actual: describe(aById.get(id)) });
          }
        }
        if (options.strict) {
          const aSet = new Set(aIds);
          let common = eIds.filter((id) => aSet.has(id));
          // managedFields are sorted by time (whole seconds) second: the server would have ordered the entries
          // by the observed run's times, which may straddle a second where the recording's did not
          if (path.endsWith('.managedFields')) common = sortManagedFieldIds(common, aById);
          const eOrder = common.join(' ');
          const aOrder = aIds.filter((id) => eSet.has(id)).join(' ');
          if (eOrder !== aOrder) diffs.push({ path: `${path} (order)`, expected: eOrder, actual: aOrder });
        }
        return;
      }
      if (ea.length !== aa.length && !(subset && aa.length <= ea.length)) {
        diffs.push({ path, expected: `array(${ea.length})`, actual: `array(${aa.length})` });
      }
      const n = Math.min(ea.length, aa.length);
      for (let i = 0; i < n; i++) walk(ea[i], aa[i], `${path}[${i}]`, undefined, ea);
      return;
    }
    // Scalars of the same type.
    if (key === undefined) {
      // Array elements: strings in arrays (verbs, finalizers, shortNames) are compared by value.
      if (te === 'string' && e !== a && !bothVarying(e as string, a as string)) {
        diffs.push({ path, expected: describe(e), actual: describe(a) });
      }
      return;
    }
    if (options.strict) {
      if (key !== undefined && VARYING_KEYS.has(key)) return;
      if (e === a) return;
      if (te === 'string' && bothVarying(e as string, a as string)) return;
      if (te === 'string' && maskMessageStrict(e as string) === maskMessageStrict(a as string)) return;
      diffs.push({ path, expected: describe(e), actual: describe(a) });
      return;
    }
    if (key === 'message' && compareMessages && isRecord(parent) && parent.kind === 'Status') {
      if (maskMessage(String(e)) !== maskMessage(String(a))) {
        diffs.push({ path, expected: describe(e), actual: describe(a) });
      }
      return;
    }
    if (VALUE_KEYS.has(key) && e !== a) {
      if (isGeneratedName(e) && isGeneratedName(a)) return;
      diffs.push({ path, expected: describe(e), actual: describe(a) });
    }
  };

  walk(expected, actual, '$', undefined, undefined);
  return diffs;
}

/** Formats differences for an assertion message, one per line. */
export function formatDiffs(diffs: readonly ShapeDiff[]): string {
  return diffs.map((d) => `${d.path}: expected ${d.expected}, got ${d.actual}`).join('\n');
}

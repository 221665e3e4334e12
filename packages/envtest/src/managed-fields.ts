/**
 * managedFields bookkeeping: an approximation of structured-merge-diff's field sets (FieldsV1 tries),
 * enough for per-manager ownership, Update/Apply entries and apply conflicts (protocol §3, §7.4).
 */
import type { KObject, ResourceType } from './resource-type.js';

/** A field path is a list of path elements: `f:name`, `k:{"name":"c"}`, `v:"x"`. */
export type PathElem = string;

const SEP = '\u0001';
/** Value marker of a keyed list's own node (a member only when an update creates the list). */
const LIST_MEMBER = '\u0002list';
/** Value marker of a null leaf (never owned). */
const NULL_LEAF = '\u0002null';

/** A field set with the JSON of each leaf's value ('' for member nodes that are not leaves). */
export type FieldValues = Map<string, string>;

/** Metadata fields the server owns; never in managedFields. */
const IGNORED_META = new Set([
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'managedFields',
  'selfLink',
]);

/** Structs marked `structType=atomic` upstream (owned as a whole). */
const ATOMIC_STRUCTS = new Set(['regarding', 'related', 'involvedObject']);

/** Maps whose keys are data (so the map node itself is a member, shown as `.`). */
const GRANULAR_MAPS = new Set([
  'labels',
  'annotations',
  'data',
  'binaryData',
  'stringData',
  'matchLabels',
  'nodeSelector',
  'rollingUpdate',
  'conversion',
  'selector',
]);

function isObj(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The merge key of a list at a dotted path (strategic-merge keys; for CRs lists are atomic). */
export function listMergeKey(rt: ResourceType, dotted: string): string | undefined {
  const keys = rt.strategicMergeKeys;
  if (!keys) return dotted === 'metadata.ownerReferences' ? 'uid' : undefined;
  const k = keys[dotted];
  return k ? k : undefined;
}

export function isSetList(rt: ResourceType, dotted: string): boolean {
  return dotted === 'metadata.finalizers' || (rt.strategicSetLists ?? []).includes(dotted);
}

/** Encode a keyed list element's path element. */
export function keyElem(key: string, value: unknown): PathElem {
  return `k:${JSON.stringify({ [key]: value })}`;
}

/**
 * Compute the field set of an object (what a manager would own if it had written all of it).
 * `skipStatus` leaves `.status` out (main-resource writes of kinds with a status subresource).
 */
export function fieldValues(
  rt: ResourceType,
  obj: KObject,
  opts: { skipStatus?: boolean; onlyStatus?: boolean; apply?: boolean } = {},
): FieldValues {
  const custom = rt.crdName !== undefined;
  const out: FieldValues = new Map();
  const walkMap = (m: Record<string, unknown>, path: string, dotted: string, depth: number) => {
    for (const [k, v] of Object.entries(m)) {
      if (depth === 0) {
        if (k === 'kind' || k === 'apiVersion') continue;
        if (opts.skipStatus && k === 'status') continue;
        if (opts.onlyStatus && k !== 'status' && k !== 'metadata') continue;
      }
      if (depth === 1 && dotted === 'metadata' && IGNORED_META.has(k)) continue;
      if (
        opts.onlyStatus &&
        depth === 1 &&
        dotted === 'metadata' &&
        !(rt.statusWritesMetadata && (k === 'labels' || k === 'annotations'))
      )
        continue;
      const p = path ? `${path}${SEP}f:${k}` : `f:${k}`;
      const d = dotted ? `${dotted}.${k}` : k;
      walkValue(v, p, d, depth + 1, k);
    }
  };
  const walkValue = (v: unknown, p: string, d: string, depth: number, name: string) => {
    if (isObj(v)) {
      const keys = Object.keys(v);
      if (keys.length === 0) {
        out.set(p, '{}');
        return;
      }
      // atomic structs: a LabelSelector (matchLabels/matchExpressions), object references of events
      if (
        (name === 'selector' && (v.matchLabels !== undefined || v.matchExpressions !== undefined)) ||
        ATOMIC_STRUCTS.has(name)
      ) {
        out.set(p, JSON.stringify(v));
        return;
      }
      // maps keyed by data are members ('.') in Update sets; custom resources' maps always are
      if (!opts.apply && (GRANULAR_MAPS.has(name) || (custom && d !== 'metadata'))) out.set(p, '');
      walkMap(v, p, d, depth);
      return;
    }
    if (Array.isArray(v)) {
      const mk = listMergeKey(rt, d);
      if (mk && v.every((e) => isObj(e) && e[mk] !== undefined)) {
        if (v.length === 0) {
          out.set(p, '[]');
          return;
        }
        if (!opts.apply) out.set(p, LIST_MEMBER);
        for (const e of v) {
          const ep = `${p}${SEP}${keyElem(mk, (e as Record<string, unknown>)[mk])}`;
          out.set(ep, '');
          walkMap(e as Record<string, unknown>, ep, d, depth);
        }
        return;
      }
      if (isSetList(rt, d) && v.every((e) => typeof e === 'string')) {
        if (v.length === 0) {
          out.set(p, '[]');
          return;
        }
        if (!opts.apply) out.set(p, '');
        for (const e of v) out.set(`${p}${SEP}v:${JSON.stringify(e)}`, '');
        return;
      }
      out.set(p, JSON.stringify(v));
      return;
    }
    // null is "unset": typed encoding drops it, so nobody owns it
    // (inside keyed list elements a null time stays a field of the element, as upstream shows)
    if (v !== null && v !== undefined) out.set(p, JSON.stringify(v));
    else out.set(p, p.includes(`${SEP}k:`) ? 'null' : NULL_LEAF);
  };
  walkMap(obj, '', '', 0);
  return out;
}

/** Render a set of paths as a FieldsV1 trie. */
export function toFieldsV1(paths: Iterable<string>): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  const all = [...paths];
  const set = new Set(all);
  for (const p of all) {
    const elems = p.split(SEP);
    let node = root;
    for (const e of elems) {
      let child = node[e] as Record<string, unknown> | undefined;
      if (!child) {
        child = {};
        node[e] = child;
      }
      node = child;
    }
  }
  // mark member nodes that have children with "."
  const mark = (node: Record<string, unknown>, prefix: string) => {
    for (const [k, child] of Object.entries(node)) {
      if (k === '.') continue;
      const p = prefix ? `${prefix}${SEP}${k}` : k;
      const c = child as Record<string, unknown>;
      if (Object.keys(c).length > 0) {
        if (set.has(p)) c['.'] = {};
        mark(c, p);
      }
    }
  };
  mark(root, '');
  return sortTrie(root);
}

function sortTrie(node: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const keys = Object.keys(node).sort((a, b) =>
    a === '.' ? -1 : b === '.' ? 1 : a < b ? -1 : a > b ? 1 : 0,
  );
  for (const k of keys) out[k] = sortTrie(node[k] as Record<string, unknown>);
  return out;
}

/** Parse a FieldsV1 trie back to paths. */
export function fromFieldsV1(trie: unknown): Set<string> {
  const out = new Set<string>();
  const walk = (node: unknown, prefix: string) => {
    if (!isObj(node)) return;
    const keys = Object.keys(node);
    if (keys.length === 0 && prefix) out.add(prefix);
    for (const k of keys) {
      if (k === '.') {
        if (prefix) out.add(prefix);
        continue;
      }
      walk(node[k], prefix ? `${prefix}${SEP}${k}` : k);
    }
  };
  walk(trie, '');
  return out;
}

/** One managedFields entry. */
export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Update' | 'Apply';
  apiVersion: string;
  /** Absent on scale-subresource entries, as upstream. */
  time?: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Record<string, unknown>;
  subresource?: string;
}

interface Owned {
  manager: string;
  operation: 'Update' | 'Apply';
  apiVersion: string;
  time?: string;
  subresource?: string;
  paths: Set<string>;
}

function readEntries(obj: KObject | undefined): Owned[] {
  const mf = (obj?.metadata as Record<string, unknown> | undefined)?.managedFields;
  if (!Array.isArray(mf)) return [];
  return mf.filter(isObj).map((e) => ({
    manager: String(e.manager ?? ''),
    operation: e.operation === 'Apply' ? 'Apply' : 'Update',
    apiVersion: String(e.apiVersion ?? ''),
    ...(e.time !== undefined ? { time: String(e.time) } : {}),
    ...(e.subresource ? { subresource: String(e.subresource) } : {}),
    paths: fromFieldsV1(e.fieldsV1),
  }));
}

/** Whole seconds of an entry's time; an entry without one (scale) counts as the zero time, as upstream. */
function entrySeconds(e: Owned): number {
  return e.time === undefined ? Number.NEGATIVE_INFINITY : Math.floor(Date.parse(e.time) / 1000);
}

/**
 * The order kube-apiserver writes entries in (apimachinery managedfields `sortEncodedManagedFields`): by
 * operation (`Apply` before `Update`), then time in whole seconds (no time first), manager, apiVersion,
 * subresource.
 */
function compareEntries(p: Owned, q: Owned): number {
  if (p.operation !== q.operation) return p.operation < q.operation ? -1 : 1;
  const ps = entrySeconds(p);
  const qs = entrySeconds(q);
  if (ps !== qs) return ps < qs ? -1 : 1;
  for (const [a, b] of [
    [p.manager, q.manager],
    [p.apiVersion, q.apiVersion],
    [p.subresource ?? '', q.subresource ?? ''],
  ] as const) {
    if (a !== b) return a < b ? -1 : 1;
  }
  return 0;
}

function writeEntries(entries: Owned[]): ManagedFieldsEntry[] {
  return entries
    .filter((e) => e.paths.size > 0)
    .sort(compareEntries)
    .map((e) => ({
      manager: e.manager,
      operation: e.operation,
      apiVersion: e.apiVersion,
      ...(e.time !== undefined ? { time: e.time } : {}),
      fieldsType: 'FieldsV1',
      fieldsV1: toFieldsV1(e.paths),
      ...(e.subresource ? { subresource: e.subresource } : {}),
    }));
}

/**
 * managedFields after a non-apply write (create, update, patch) by `manager`: the manager owns what it
 * changed plus what it owned before and is still there; other managers lose what changed.
 */
export function updateManagedFields(
  rt: ResourceType,
  old: KObject | undefined,
  next: KObject,
  manager: string,
  apiVersion: string,
  time: string,
  subresource: string | undefined,
): ManagedFieldsEntry[] {
  const scope = {
    skipStatus: rt.statusSubresource && subresource !== 'status',
    onlyStatus: subresource === 'status',
  };
  const before = old ? fieldValues(rt, old, scope) : new Map<string, string>();
  const after = fieldValues(rt, next, scope);
  const changed = new Set<string>();
  for (const [p, v] of after) {
    if (v === NULL_LEAF) continue;
    if (v === LIST_MEMBER && (!old || before.has(p))) continue;
    if (before.get(p) !== v) changed.add(p);
  }
  const entries = readEntries(old);
  const allAfter = fieldValues(rt, next);
  for (const e of entries) {
    for (const p of [...e.paths])
      if (!allAfter.has(p) || allAfter.get(p) === NULL_LEAF || changed.has(p)) e.paths.delete(p);
  }
  let mine = entries.find(
    (e) => e.manager === manager && e.operation === 'Update' && (e.subresource ?? '') === (subresource ?? ''),
  );
  if (!mine && changed.size > 0) {
    mine = {
      manager,
      operation: 'Update',
      apiVersion,
      ...(subresource === 'scale' ? {} : { time }),
      paths: new Set(),
      ...(subresource ? { subresource } : {}),
    };
    entries.push(mine);
  }
  if (mine && changed.size > 0) {
    for (const p of changed) mine.paths.add(p);
    if (subresource !== 'scale') mine.time = time;
    mine.apiVersion = apiVersion;
  }
  return writeEntries(entries);
}

/** One apply conflict: another manager owns a field with a different value. */
export interface ApplyConflict {
  readonly manager: string;
  readonly apiVersion: string;
  /** `.spec.replicas`-style path for messages. */
  readonly field: string;
}

/** Render a path as upstream prints it in conflict messages: `.spec.containers[name="c"].image`. */
export function pathString(p: string): string {
  let s = '';
  for (const e of p.split(SEP)) {
    if (e.startsWith('f:')) s += `.${e.slice(2)}`;
    else if (e.startsWith('k:')) {
      const kv = JSON.parse(e.slice(2)) as Record<string, unknown>;
      s += `[${Object.entries(kv)
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join(',')}]`;
    } else if (e.startsWith('v:')) s += `[=${e.slice(2)}]`;
  }
  return s;
}

/**
 * Server-side apply bookkeeping. Returns conflicts (when not forced), the paths the manager previously
 * applied and no longer applies and nobody else owns (to remove from the object), and a function that
 * computes the new managedFields once the merged object is known.
 */
export function planApply(
  rt: ResourceType,
  live: KObject | undefined,
  applied: KObject,
  manager: string,
  force: boolean,
  subresource: string | undefined,
): {
  conflicts: ApplyConflict[];
  removed: string[];
  finish(merged: KObject, apiVersion: string, time: string): ManagedFieldsEntry[];
} {
  const scope = {
    skipStatus: rt.statusSubresource && subresource !== 'status',
    onlyStatus: subresource === 'status',
  };
  const appliedVals = fieldValues(rt, applied, { ...scope, apply: true });
  const liveVals = live ? fieldValues(rt, live) : new Map<string, string>();
  const entries = readEntries(live);
  const conflicts: ApplyConflict[] = [];
  const conflictPaths = new Set<string>();
  for (const e of entries) {
    if (e.manager === manager && e.operation === 'Apply') continue;
    for (const p of e.paths) {
      const av = appliedVals.get(p);
      if (av === undefined || av === '' || av === NULL_LEAF || av === LIST_MEMBER) continue;
      if (liveVals.get(p) !== av) {
        conflicts.push({ manager: e.manager, apiVersion: e.apiVersion, field: pathString(p) });
        conflictPaths.add(p);
      }
    }
  }
  const mineBefore = entries.find(
    (e) => e.manager === manager && e.operation === 'Apply' && (e.subresource ?? '') === (subresource ?? ''),
  );
  const removed: string[] = [];
  if (mineBefore) {
    for (const p of mineBefore.paths) {
      if (appliedVals.has(p)) continue;
      const ownedByOther = entries.some((e) => e !== mineBefore && e.paths.has(p));
      if (!ownedByOther) removed.push(p);
    }
  }
  return {
    conflicts: force ? [] : conflicts,
    removed,
    finish(merged, apiVersion, time) {
      const mergedVals = fieldValues(rt, merged);
      for (const e of entries) {
        if (force) for (const p of conflictPaths) e.paths.delete(p);
        for (const p of [...e.paths]) if (!mergedVals.has(p)) e.paths.delete(p);
      }
      const rest = entries.filter((e) => e !== mineBefore);
      const mine: Owned = {
        manager,
        operation: 'Apply',
        apiVersion,
        time,
        paths: new Set(
          [...appliedVals.entries()]
            .filter(
              ([p, v]) =>
                v !== NULL_LEAF && v !== LIST_MEMBER && mergedVals.has(p) && mergedVals.get(p) !== NULL_LEAF,
            )
            .map(([p]) => p),
        ),
        ...(subresource ? { subresource } : {}),
      };
      rest.push(mine);
      return writeEntries(rest);
    },
  };
}

/** Delete a field path (as produced by fieldValues) from an object in place. */
export function removePath(obj: KObject, p: string): void {
  const elems = p.split(SEP);
  const walk = (node: unknown, i: number): void => {
    const e = elems[i]!;
    const last = i === elems.length - 1;
    if (e.startsWith('f:') && isObj(node)) {
      const k = e.slice(2);
      if (last) delete node[k];
      else walk(node[k], i + 1);
      if (!last && isObj(node[k]) && Object.keys(node[k] as object).length === 0) delete node[k];
    } else if (e.startsWith('k:') && Array.isArray(node)) {
      const kv = JSON.parse(e.slice(2)) as Record<string, unknown>;
      const [[kk, vv]] = Object.entries(kv) as [[string, unknown]];
      const idx = node.findIndex((x) => isObj(x) && x[kk] === vv);
      if (idx < 0) return;
      if (last) node.splice(idx, 1);
      else walk(node[idx], i + 1);
    } else if (e.startsWith('v:') && Array.isArray(node)) {
      const v = JSON.parse(e.slice(2));
      const idx = node.indexOf(v);
      if (idx >= 0 && last) node.splice(idx, 1);
    }
  };
  walk(obj, 0);
}

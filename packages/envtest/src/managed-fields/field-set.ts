/**
 * Field sets for managedFields: an approximation of structured-merge-diff's field sets (which fields of an
 * object a write covers, with each leaf's value) and their FieldsV1 trie encoding (protocol §3, §7.4).
 */
import type { KObject, ResourceType } from '../resource-type.js';

/** A field path is a list of path elements: `f:name`, `k:{"name":"c"}`, `v:"x"`. */
export type PathElem = string;

export const SEP = '\u0001';
/** Value marker of a keyed list's own node (a member only when an update creates the list). */
export const LIST_MEMBER = '\u0002list';
/** Value marker of a null leaf (never owned). */
export const NULL_LEAF = '\u0002null';

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

export function isObj(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The merge key of a list at a dotted path (strategic-merge keys; for CRs lists are atomic). */
export function listMergeKey(rt: ResourceType, dotted: string): string | undefined {
  const keys = rt.strategicMergeKeys;
  if (!keys) return dotted === 'metadata.ownerReferences' ? 'uid' : rt.applyListKeys?.[dotted] || undefined;
  const k = keys[dotted];
  return k ? k : undefined;
}

export function isSetList(rt: ResourceType, dotted: string): boolean {
  return (
    dotted === 'metadata.finalizers' ||
    (rt.strategicSetLists ?? []).includes(dotted) ||
    (rt.applySetLists ?? []).includes(dotted)
  );
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

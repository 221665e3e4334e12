/**
 * managedFields entries as kube-apiserver writes them: one per manager, operation and subresource, in
 * apimachinery's order, and the bookkeeping of a non-apply write (structured-merge-diff's Update).
 */
import type { KObject, ResourceType } from '../resource-type.js';
import { fieldValues, fromFieldsV1, isObj, LIST_MEMBER, NULL_LEAF, SEP, toFieldsV1 } from './field-set.js';

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

/** @internal An entry with its field set decoded. */
export interface Owned {
  manager: string;
  operation: 'Update' | 'Apply';
  apiVersion: string;
  time?: string;
  subresource?: string;
  paths: Set<string>;
}

export function readEntries(obj: KObject | undefined): Owned[] {
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

export function writeEntries(entries: Owned[]): ManagedFieldsEntry[] {
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

/** Whether `p` was a non-empty map or list in `before` (it had members below it). */
function wasContainer(before: Map<string, string>, p: string): boolean {
  const prefix = `${p}${SEP}`;
  for (const q of before.keys()) if (q.startsWith(prefix)) return true;
  return false;
}

/**
 * managedFields after a non-apply write (create, update, patch) by `manager`: the manager owns what it
 * changed plus what it owned before and is still there; other managers lose what changed. As
 * structured-merge-diff does, an entry whose field set ends up empty is dropped, and a write that owns no
 * field (one that only removes, such as the last finalizer) gives its manager no entry.
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
    if (before.get(p) === v) continue;
    // a map or list emptied by this write existed before: structured-merge-diff's compare sees its
    // members removed, nothing added or modified, so the writer owns nothing for it
    if ((v === '{}' || v === '[]') && wasContainer(before, p)) continue;
    changed.add(p);
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

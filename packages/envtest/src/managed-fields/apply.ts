/**
 * Server-side apply bookkeeping (structured-merge-diff's Apply): conflicts with other managers, `force`, the fields
 * a manager stops applying, and the new managedFields.
 */
import type { KObject, ResourceType } from '../resource-type.js';
import { type ManagedFieldsEntry, type Owned, readEntries, writeEntries } from './entries.js';
import { fieldValues, LIST_MEMBER, NULL_LEAF, pathString } from './field-set.js';

/** One apply conflict: another manager owns a field with a different value. */
export interface ApplyConflict {
  readonly manager: string;
  readonly apiVersion: string;
  /** `.spec.replicas`-style path for messages. */
  readonly field: string;
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

/**
 * Server-side apply bookkeeping (structured-merge-diff's Apply): conflicts with other managers, `force`, the fields
 * a manager stops applying, and the new managedFields.
 */
import type { KObject, ResourceType } from '../resource-type.js';
import { type ManagedFieldsEntry, type Owned, readEntries, writeEntries } from './entries.js';
import { fieldValues, LIST_MEMBER, NULL_LEAF, pathString, SEP } from './field-set.js';

/** One apply conflict: another manager owns a field with a different value. */
export interface ApplyConflict {
  readonly manager: string;
  readonly operation: 'Update' | 'Apply';
  readonly apiVersion: string;
  readonly subresource?: string;
  /** `.spec.replicas`-style path for messages. */
  readonly field: string;
  /** @internal the path in field-set encoding, to order conflicts as structured-merge-diff iterates a set. */
  readonly path: string;
}

/**
 * apiserver's manager identifier (managedfields `BuildManagerIdentifier`): the entry's JSON without time and
 * fields, and without apiVersion for appliers. Conflicting managers are grouped and sorted by it.
 */
function managerIdentifier(c: ApplyConflict): string {
  return JSON.stringify({
    manager: c.manager,
    operation: c.operation,
    ...(c.operation === 'Update' && c.apiVersion ? { apiVersion: c.apiVersion } : {}),
    ...(c.subresource ? { subresource: c.subresource } : {}),
  });
}

/**
 * How apiserver prints a conflicting manager (`printManager`): `"name"`, plus ` with subresource "status"`,
 * plus ` using <apiVersion>` for an Update manager (its identifier has no time, so no ` at <time>`).
 */
export function printManager(c: ApplyConflict): string {
  let s = JSON.stringify(c.manager);
  if (c.subresource) s += ` with subresource ${JSON.stringify(c.subresource)}`;
  if (c.operation === 'Update') s += ` using ${c.apiVersion}`;
  return s;
}

/**
 * structured-merge-diff's order of a field set's paths (`Set.Iterate`): at each level the leaves of that level
 * first, then the deeper paths, each sorted by path element (field names before keys before values).
 */
function comparePaths(p: string, q: string): number {
  const a = p.split(SEP);
  const b = q.split(SEP);
  for (let i = 0; ; i++) {
    const aLeaf = i === a.length - 1;
    const bLeaf = i === b.length - 1;
    if (a[i] !== b[i]) {
      if (aLeaf !== bLeaf) return aLeaf ? -1 : 1;
      return a[i]! < b[i]! ? -1 : 1;
    }
    if (aLeaf || bLeaf) return aLeaf === bLeaf ? 0 : aLeaf ? -1 : 1;
  }
}

/**
 * Order conflicts as the 409 lists them: managers sorted by identifier (Go ranges over a map there, so the
 * server's order across managers is not fixed; this one is what its message prints), each manager's paths
 * in field-set order.
 */
export function sortConflicts(conflicts: readonly ApplyConflict[]): ApplyConflict[] {
  return conflicts
    .map((c) => ({ c, id: managerIdentifier(c) }))
    .sort((x, y) => (x.id !== y.id ? (x.id < y.id ? -1 : 1) : comparePaths(x.c.path, y.c.path)))
    .map((x) => x.c);
}

/**
 * The 409 message of apiserver's `NewConflictError`: one conflict: `Apply failed with 1 conflict: conflict with
 * <manager>: <path>`; more: `Apply failed with N conflicts: ` then per manager (sorted by identifier)
 * `conflicts with <manager>:` and one `- <path>` line per field, joined by newlines.
 */
export function conflictMessage(sorted: readonly ApplyConflict[]): string {
  if (sorted.length === 1)
    return `Apply failed with 1 conflict: conflict with ${printManager(sorted[0]!)}: ${sorted[0]!.field}`;
  const lines: string[] = [];
  let last: string | undefined;
  for (const c of sorted) {
    const id = managerIdentifier(c);
    if (id !== last) lines.push(`conflicts with ${printManager(c)}:`);
    last = id;
    lines.push(`- ${c.field}`);
  }
  return `Apply failed with ${sorted.length} conflicts: ${lines.join('\n')}`;
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
    // the applier itself: same manager, Apply, same subresource (its identifier); any other entry can conflict
    if (e.manager === manager && e.operation === 'Apply' && (e.subresource ?? '') === (subresource ?? ''))
      continue;
    for (const p of e.paths) {
      const av = appliedVals.get(p);
      if (av === undefined || av === '' || av === NULL_LEAF || av === LIST_MEMBER) continue;
      if (liveVals.get(p) !== av) {
        conflicts.push({
          manager: e.manager,
          operation: e.operation,
          apiVersion: e.apiVersion,
          ...(e.subresource ? { subresource: e.subresource } : {}),
          field: pathString(p),
          path: p,
        });
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
    conflicts: force ? [] : sortConflicts(conflicts),
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

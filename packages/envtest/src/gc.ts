/**
 * An opt-in garbage collector for `ownerReferences` (beyond upstream envtest, which runs no
 * controller-manager), following kube-controller-manager's garbage collector: when an owner is deleted, each
 * dependent whose every owner is gone is deleted in turn (Background), dependents that still have another
 * owner only lose the dangling reference, and with `propagationPolicy: Orphan` dependents keep living with the
 * reference removed. Like the real collector it runs asynchronously, after the owner's DELETED event.
 *
 * Foreground (`propagationPolicy: Foreground`): the registry keeps the owner, marked for deletion with the
 * `foregroundDeletion` finalizer; the collector deletes every dependent (in the foreground too, so a chain
 * unwinds from its leaves, as the real collector deletes a dependent that has dependents of its own) and removes
 * the finalizer once no dependent with `blockOwnerDeletion: true` is left — dependents without it are deleted
 * but do not hold the owner (kube-controller-manager `processDeletingDependentsItem`).
 */
import type { DeleteOptions, Registry } from './registry.js';
import type { KObject, ResourceType } from './resource-type.js';

interface OwnerRef {
  readonly uid?: string;
  readonly blockOwnerDeletion?: boolean;
}

const FOREGROUND_FINALIZER = 'foregroundDeletion';

interface Found {
  readonly rt: ResourceType;
  readonly obj: Readonly<KObject>;
}

function metaOf(o: Readonly<KObject>): {
  name: string;
  namespace?: string;
  uid?: string;
  finalizers?: unknown;
} {
  return (o.metadata ?? {}) as { name: string; namespace?: string; uid?: string; finalizers?: unknown };
}

/** Every stored object, once per storage key (a resource served in several versions is stored once). */
function everyObject(reg: Registry, types: readonly ResourceType[]): Found[] {
  const seen = new Set<string>();
  const out: Found[] = [];
  for (const rt of types) {
    if (seen.has(rt.storageKey)) continue;
    seen.add(rt.storageKey);
    const snap = reg.store.snapshot(rt.storageKey);
    for (const k of snap.keys) {
      const e = snap.get(k);
      if (e) out.push({ rt, obj: e.obj });
    }
  }
  return out;
}

function isForegroundDeleting(o: Readonly<KObject>): boolean {
  const f = metaOf(o).finalizers;
  return Array.isArray(f) && f.includes(FOREGROUND_FINALIZER);
}

/**
 * Drop the `foregroundDeletion` finalizer of a foreground-deleting owner once no dependent that blocks it is
 * left (the registry then removes the owner if no other finalizer remains).
 */
function releaseIfUnblocked(reg: Registry, all: readonly Found[], owner: Found): void {
  const uid = metaOf(owner.obj).uid;
  const blocked = all.some(({ obj }) =>
    ownerRefs(obj).some((r) => r.uid === uid && r.blockOwnerDeletion === true),
  );
  if (blocked) return;
  try {
    editList(reg, owner, 'finalizers', (f) => f !== FOREGROUND_FINALIZER);
  } catch {
    // gone meanwhile
  }
}

/**
 * Write a metadata list of `target` as the collector does (manager `generic-garbage-collector`, no resourceVersion
 * precondition): keep the entries `keep` accepts, drop the list when none is left.
 */
function editList<T>(
  reg: Registry,
  target: Found,
  field: 'finalizers' | 'ownerReferences',
  keep: (e: T) => boolean,
): void {
  const m = metaOf(target.obj);
  reg.patch(
    target.rt,
    m.namespace,
    m.name,
    (cur) => {
      const cm = cur.metadata as Record<string, unknown>;
      const kept = (Array.isArray(cm[field]) ? (cm[field] as T[]) : []).filter(keep);
      if (kept.length > 0) cm[field] = kept;
      else delete cm[field];
      delete cm.resourceVersion;
      return cur;
    },
    { fieldManager: 'generic-garbage-collector' },
  );
}

/**
 * An object entered foreground deletion (it carries the `foregroundDeletion` finalizer): delete its dependents,
 * each in the foreground, and release it when nothing blocks it.
 */
export function collectForeground(
  registry: () => Registry,
  types: () => readonly ResourceType[],
  owner: Readonly<KObject>,
): void {
  const uid = metaOf(owner).uid;
  if (!uid || !isForegroundDeleting(owner)) return;
  setImmediate(() => {
    const reg = registry();
    const all = everyObject(reg, types());
    for (const { rt, obj } of all) {
      if (!ownerRefs(obj).some((r) => r.uid === uid)) continue;
      const m = metaOf(obj);
      try {
        reg.delete(rt, m.namespace, m.name, { propagationPolicy: 'Foreground' });
      } catch {
        // gone or changed meanwhile
      }
    }
    const self = all.find((f) => metaOf(f.obj).uid === uid);
    if (self) releaseIfUnblocked(reg, everyObject(reg, types()), self);
  });
}

/** A dependent was removed: release each of its owners that is waiting for it in foreground deletion. */
export function releaseOwnersOf(
  registry: () => Registry,
  types: () => readonly ResourceType[],
  dependent: Readonly<KObject>,
): void {
  const uids = new Set(ownerRefs(dependent).map((r) => r.uid));
  if (uids.size === 0) return;
  setImmediate(() => {
    const reg = registry();
    const all = everyObject(reg, types());
    for (const f of all) {
      if (uids.has(metaOf(f.obj).uid) && isForegroundDeleting(f.obj)) releaseIfUnblocked(reg, all, f);
    }
  });
}

function ownerRefs(o: Readonly<KObject>): OwnerRef[] {
  const refs = (o.metadata as { ownerReferences?: unknown } | undefined)?.ownerReferences;
  return Array.isArray(refs) ? (refs as OwnerRef[]) : [];
}

/**
 * Collect the dependents of a deleted owner. `types()` lists every served resource type; `exists(uid)` tells
 * whether some object still has that uid.
 */
export function collectDependents(
  registry: () => Registry,
  types: () => readonly ResourceType[],
  owner: Readonly<KObject>,
  policy: DeleteOptions['propagationPolicy'],
): void {
  const uid = (owner.metadata as { uid?: string } | undefined)?.uid;
  if (!uid) return;
  setImmediate(() => {
    const reg = registry();
    const all = everyObject(reg, types());
    const live = new Set(all.map((f) => metaOf(f.obj).uid).filter((u) => u !== undefined));
    const dependents = all.filter((f) => ownerRefs(f.obj).some((r) => r.uid === uid));
    for (const dependent of dependents) {
      const { rt, obj } = dependent;
      const m = metaOf(obj);
      const others = ownerRefs(obj).filter((r) => r.uid !== uid && r.uid !== undefined && live.has(r.uid));
      try {
        if (policy === 'Orphan' || others.length > 0) {
          // keep the dependent, drop the reference to the owner that is gone
          editList<OwnerRef>(reg, dependent, 'ownerReferences', (r) => r.uid !== uid);
        } else {
          reg.delete(rt, m.namespace, m.name, { propagationPolicy: 'Background' });
        }
      } catch {
        // gone or changed meanwhile: the next owner deletion or a retry by the test settles it
      }
    }
  });
}

/**
 * An opt-in garbage collector for `ownerReferences` (beyond upstream envtest, which runs no
 * controller-manager), following kube-controller-manager's garbage collector: when an owner is deleted, each
 * dependent whose every owner is gone is deleted in turn (Background), dependents that still have another
 * owner only lose the dangling reference, and with `propagationPolicy: Orphan` dependents keep living with the
 * reference removed. Like the real collector it runs asynchronously, after the owner's DELETED event.
 */
import type { DeleteOptions, Registry } from './registry.js';
import type { KObject, ResourceType } from './resource-type.js';

interface OwnerRef {
  readonly uid?: string;
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
    const seen = new Set<string>();
    const live = new Set<string>();
    const dependents: { rt: ResourceType; obj: Readonly<KObject> }[] = [];
    for (const rt of types()) {
      if (seen.has(rt.storageKey)) continue;
      seen.add(rt.storageKey);
      const snap = reg.store.snapshot(rt.storageKey);
      for (const k of snap.keys) {
        const e = snap.get(k);
        if (!e) continue;
        const ouid = (e.obj.metadata as { uid?: string } | undefined)?.uid;
        if (ouid) live.add(ouid);
        if (ownerRefs(e.obj).some((r) => r.uid === uid)) dependents.push({ rt, obj: e.obj });
      }
    }
    for (const { rt, obj } of dependents) {
      const m = obj.metadata as { name: string; namespace?: string };
      const others = ownerRefs(obj).filter((r) => r.uid !== uid && r.uid !== undefined && live.has(r.uid));
      try {
        if (policy === 'Orphan' || others.length > 0) {
          // keep the dependent, drop the reference to the owner that is gone
          reg.patch(
            rt,
            m.namespace,
            m.name,
            (cur) => {
              const cm = cur.metadata as Record<string, unknown>;
              const kept = ownerRefs(cur).filter((r) => r.uid !== uid);
              if (kept.length > 0) cm.ownerReferences = kept;
              else delete cm.ownerReferences;
              delete cm.resourceVersion;
              return cur;
            },
            { fieldManager: 'generic-garbage-collector' },
          );
        } else {
          reg.delete(rt, m.namespace, m.name, { propagationPolicy: 'Background' });
        }
      } catch {
        // gone or changed meanwhile: the next owner deletion or a retry by the test settles it
      }
    }
  });
}

/**
 * delete and deletecollection (protocol §8): preconditions, finalizers (deletionTimestamp, MODIFIED),
 * graceful deletion with period 0 for kinds that return the deleted object, namespace content removal.
 */
import { ApiStatusError, conflict } from '../errors.js';
import type { KObject, ResourceType } from '../resource-type.js';
import { meta, normalize, nowTimestamp, storageKeyOf, toStorage } from './object-meta.js';
import type { DeleteOptions, DeleteResult, ListOptions, RegistryOps } from './types.js';

/** The finalizer of an object deleted in the foreground (metav1.FinalizerDeleteDependents). */
export const FOREGROUND_FINALIZER = 'foregroundDeletion';

/**
 * Delete one object (protocol §8): preconditions, finalizers (deletionTimestamp, MODIFIED), immediate
 * removal (DELETED). No garbage collection of dependents (like upstream envtest, which runs no
 * controller-manager).
 * @throws ApiStatusError 404, 409 precondition failures.
 */
export function deleteObject(
  reg: RegistryOps,
  rt: ResourceType,
  namespace: string | undefined,
  name: string,
  opts: DeleteOptions,
): DeleteResult {
  const key = storageKeyOf(rt, namespace, name);
  const cur = reg.get(rt, namespace, name);
  const om = cur.obj.metadata as Record<string, unknown>;
  const pre = opts.preconditions;
  // the store's precondition check words it with the Kind (apiserver registry/generic/registry/store.go)
  if (pre?.uid && pre.uid !== om.uid)
    throw conflict(
      rt.kind,
      rt.group,
      name,
      `the UID in the precondition (${pre.uid}) does not match the UID in record (${String(om.uid)}). The object might have been deleted and then recreated`,
    );
  if (pre?.resourceVersion && pre.resourceVersion !== om.resourceVersion)
    throw conflict(
      rt.kind,
      rt.group,
      name,
      `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${String(om.resourceVersion)}). The object might have been modified`,
    );
  if (om.deletionTimestamp) return { object: reg.view(rt, cur) as KObject };
  const now = nowTimestamp();
  const next = structuredClone(reg.view(rt, cur)) as KObject;
  const nm = meta(next);
  if (reg.hooks.foregroundDeletion && opts.propagationPolicy === 'Foreground') {
    // the collector deletes the dependents first; the owner stays until the blocking ones are gone
    const current = Array.isArray(nm.finalizers) ? (nm.finalizers as string[]) : [];
    if (!current.includes(FOREGROUND_FINALIZER)) nm.finalizers = [...current, FOREGROUND_FINALIZER];
  }
  const fins = nm.finalizers;
  if (Array.isArray(fins) && fins.length > 0) {
    nm.deletionTimestamp = now;
    nm.deletionGracePeriodSeconds = 0;
    if (rt.hasGeneration && typeof nm.generation === 'number') nm.generation += 1;
    const obj = normalize(rt, next);
    if (opts.dryRun) return { object: obj };
    const entry = reg.store.put(rt.storageKey, key, toStorage(rt, obj));
    reg.hooks.afterUpdate?.(rt, entry.obj);
    return { object: reg.view(rt, entry) as KObject };
  }
  if (rt.returnDeletedObject) {
    nm.deletionTimestamp = now;
    nm.deletionGracePeriodSeconds = 0;
  }
  const finalObj = normalize(rt, next);
  if (!opts.dryRun) {
    if (rt.resource === 'namespaces' && rt.group === '') deleteNamespaceContents(reg, name);
    if (rt.returnDeletedObject) {
      // graceful deletion with period 0: the object is first marked (MODIFIED), then removed (DELETED)
      const marked = reg.store.put(rt.storageKey, key, toStorage(rt, finalObj));
      reg.hooks.afterUpdate?.(rt, marked.obj);
    }
    const last = reg.store.remove(rt.storageKey, key, toStorage(rt, structuredClone(finalObj)));
    if (last) reg.hooks.afterDelete?.(rt, last.obj, opts);
    if (rt.returnDeletedObject && last) return { object: reg.view(rt, last) as KObject };
  }
  if (rt.returnDeletedObject) return { object: finalObj };
  return {
    status: {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: { name, ...(rt.group ? { group: rt.group } : {}), kind: rt.resource, uid: om.uid },
    },
  };
}

/** Remove everything inside a namespace (objects with finalizers get a deletionTimestamp instead). */
function deleteNamespaceContents(reg: RegistryOps, ns: string): void {
  const seen = new Set<string>();
  for (const rt of reg.hooks.allTypes()) {
    if (!rt.namespaced || seen.has(rt.storageKey)) continue;
    seen.add(rt.storageKey);
    const snap = reg.store.snapshot(rt.storageKey);
    const prefix = `${ns}/`;
    const keys = snap.keys.filter((k) => k.startsWith(prefix));
    for (const k of keys) {
      const e = snap.get(k);
      if (!e) continue;
      try {
        deleteObject(reg, rt, ns, e.name, {});
      } catch {
        // already gone
      }
    }
  }
}

/** deletecollection: delete every match; returns the deleted (or now terminating) objects. */
export async function deleteCollection(
  reg: RegistryOps,
  rt: ResourceType,
  opts: ListOptions,
  del: DeleteOptions,
): Promise<{ rv: number; items: KObject[] }> {
  const res = await reg.list(rt, { ...opts, limit: undefined, continueToken: undefined });
  const items: KObject[] = [];
  for (const e of res.entries) {
    try {
      const r = deleteObject(reg, rt, e.namespace, e.name, del);
      items.push(r.object ?? (reg.view(rt, e) as KObject));
    } catch (err) {
      if (!(err instanceof ApiStatusError && err.httpCode === 404)) throw err;
    }
  }
  return { rv: reg.store.rv, items };
}

/** Comparisons the write path needs: did the spec change (generation), is a write a no-op (no new RV). */
import type { KObject, ResourceType } from '../resource-type.js';

/** Did anything outside metadata (and status, when it is a subresource) change? */
export function specChanged(rt: ResourceType, a: KObject, b: KObject): boolean {
  const strip = (o: KObject) => {
    const { metadata: _m, kind: _k, apiVersion: _a, ...rest } = o;
    if (rt.statusSubresource) delete (rest as Record<string, unknown>).status;
    return rest;
  };
  return !deepEqual(strip(a), strip(b));
}

export function sameIgnoringManagedTimes(a: KObject, b: KObject): boolean {
  const norm = (o: KObject) => {
    const m = { ...(o.metadata as Record<string, unknown>) };
    delete m.resourceVersion;
    if (Array.isArray(m.managedFields))
      m.managedFields = (m.managedFields as Record<string, unknown>[]).map(({ time: _t, ...r }) => r);
    return { ...o, metadata: m };
  };
  return deepEqual(norm(a), norm(b));
}

/** Structural JSON equality (key order ignored). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => deepEqual(x, bb[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
  if (ak.length !== bk.length) return false;
  return ak.every((k) => deepEqual(ao[k], bo[k]));
}

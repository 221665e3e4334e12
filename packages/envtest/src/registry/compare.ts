/** Comparisons the write path needs: did the spec change (generation), is a write a no-op (no new RV). */
import type { KObject, ResourceType } from '../resource-type.js';
import { jsonEqual } from '../schema/json-value.js';

/** Did anything outside metadata (and status, when it is a subresource) change? */
export function specChanged(rt: ResourceType, a: KObject, b: KObject): boolean {
  const strip = (o: KObject) => {
    const { metadata: _m, kind: _k, apiVersion: _a, ...rest } = o;
    if (rt.statusSubresource) delete (rest as Record<string, unknown>).status;
    return rest;
  };
  return !jsonEqual(strip(a), strip(b));
}

export function sameIgnoringManagedTimes(a: KObject, b: KObject): boolean {
  const norm = (o: KObject) => {
    const m = { ...(o.metadata as Record<string, unknown>) };
    delete m.resourceVersion;
    if (Array.isArray(m.managedFields))
      m.managedFields = (m.managedFields as Record<string, unknown>[]).map(({ time: _t, ...r }) => r);
    return { ...o, metadata: m };
  };
  return jsonEqual(norm(a), norm(b));
}

/**
 * Where a kind's objects live on the API server (apimachinery's REST paths): `/api/v1/…` for the core group,
 * `/apis/<group>/<version>/…` for the others, under `namespaces/<ns>/` for a namespaced kind in a namespace.
 */
import type { ObjectKey } from './kinds.js';
import type { RESTMapping } from './rest-mapper.js';

/**
 * The collection path for a mapping (`/api/v1/namespaces/ns/pods`, `/apis/apps/v1/deployments`). A
 * namespaced kind without a namespace gets the all-namespaces path; a namespace is ignored for a
 * cluster-scoped kind. Path segments are percent-encoded.
 */
export function collectionPath(mapping: RESTMapping, namespace: string | undefined): string {
  const r = mapping.resource;
  const prefix = r.group === '' ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
  if (mapping.scope === 'Namespaced' && namespace) {
    return `${prefix}/namespaces/${encodeURIComponent(namespace)}/${r.resource}`;
  }
  return `${prefix}/${r.resource}`;
}

/**
 * The path of one object, and optionally of one of its subresources (`…/pods/p1/status`). The caller has
 * checked the key against the mapping's scope (`mappingForRequest`).
 */
export function objectPath(mapping: RESTMapping, key: ObjectKey, subResource?: string): string {
  const base = `${collectionPath(mapping, key.namespace)}/${encodeURIComponent(key.name)}`;
  return subResource ? `${base}/${encodeURIComponent(subResource)}` : base;
}

/** `path?query`, or `path` when the query is empty. */
export function withQuery(path: string, q: URLSearchParams): string {
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

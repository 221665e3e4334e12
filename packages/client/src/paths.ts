/**
 * Where a kind's objects live on the API server (apimachinery's REST paths): `/api/v1/…` for the core group,
 * `/apis/<group>/<version>/…` for the others, under `namespaces/<ns>/` for a namespaced kind in a namespace.
 */
import { InvalidRequestError } from './errors.js';
import type { ObjectKey } from './kinds.js';
import type { RESTMapping } from './rest-mapper.js';

/**
 * Why `segment` cannot be one segment of a REST path, or `undefined` when it can (apimachinery
 * `path.IsValidPathSegmentName`): it may not be `.` or `..` (a URL resolves dot segments, so `…/configmaps/..`
 * would address the namespace itself) and may not contain `/` or `%` (another path, or an escape the server
 * decodes into one).
 */
export function pathSegmentProblem(segment: string): string | undefined {
  if (segment === '.' || segment === '..') return `may not be '${segment}'`;
  const problems: string[] = [];
  if (segment.includes('/')) problems.push(`may not contain '/'`);
  if (segment.includes('%')) problems.push(`may not contain '%'`);
  return problems.length > 0 ? problems.join(', ') : undefined;
}

/**
 * Refuses a name, namespace or subresource that is not a valid path segment, before any request is sent —
 * as client-go's `rest.Request.Name`/`Namespace`/`SubResource` do ("invalid resource name \"..\": [may not be
 * '..']"). Every path the client builds goes through here, for every verb.
 * @throws InvalidRequestError naming the segment's role (`what`: `'resource name'`, `'namespace'`,
 * `'subresource'`) and the value.
 */
export function checkPathSegment(what: string, segment: string): void {
  if (typeof segment !== 'string')
    throw new InvalidRequestError(`invalid ${what}: must be a string, got ${typeof segment}`);
  const problem = pathSegmentProblem(segment);
  if (problem) throw new InvalidRequestError(`invalid ${what} ${JSON.stringify(segment)}: [${problem}]`);
}

/**
 * The collection path for a mapping (`/api/v1/namespaces/ns/pods`, `/apis/apps/v1/deployments`). A
 * namespaced kind without a namespace gets the all-namespaces path; a namespace is ignored for a
 * cluster-scoped kind. Path segments are percent-encoded.
 * @throws InvalidRequestError for a namespace that is not a valid path segment (client-go IsValidPathSegmentName).
 */
export function collectionPath(mapping: RESTMapping, namespace: string | undefined): string {
  const r = mapping.resource;
  const prefix = r.group === '' ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
  if (mapping.scope === 'Namespaced' && namespace) {
    checkPathSegment('namespace', namespace);
    return `${prefix}/namespaces/${encodeURIComponent(namespace)}/${r.resource}`;
  }
  return `${prefix}/${r.resource}`;
}

/**
 * The path of one object, and optionally of one of its subresources (`…/pods/p1/status`). The caller has
 * checked the key against the mapping's scope (`mappingForRequest`).
 * @throws InvalidRequestError for an empty name, or a name, namespace or subresource that is not a valid
 * path segment (client-go IsValidPathSegmentName).
 */
export function objectPath(mapping: RESTMapping, key: ObjectKey, subResource?: string): string {
  if (key.name === '') throw new InvalidRequestError('resource name may not be empty');
  checkPathSegment('resource name', key.name);
  if (subResource !== undefined) checkPathSegment('subresource', subResource);
  const base = `${collectionPath(mapping, key.namespace)}/${encodeURIComponent(key.name)}`;
  return subResource ? `${base}/${encodeURIComponent(subResource)}` : base;
}

/** `path?query`, or `path` when the query is empty. */
export function withQuery(path: string, q: URLSearchParams): string {
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

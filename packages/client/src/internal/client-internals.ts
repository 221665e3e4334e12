/**
 * What the client's feature modules (subresources, deleteAllOf, the pager) need from the `ApiClient`
 * without making its internals public. Not exported from the package.
 */
import { InvalidRequestError } from '../errors.js';
import type { HttpRequest } from '../http.js';
import type { Kind, ObjectKey } from '../kinds.js';
import type { WriteOptions } from '../options.js';
import type { RESTMapping } from '../rest-mapper.js';

/** Request access bound to one `ApiClient` (its transport, RESTMapper and field owner). */
export interface ClientInternals {
  /**
   * Resolves the kind's mapping, builds the request from it and sends it; the JSON reply is returned.
   * A 404 for the resource (not for an object) invalidates the kind's group version in the RESTMapper and
   * the request is built and sent once more with a fresh mapping (which may be a NoKindMatchError).
   */
  request<R>(kind: Kind, build: (mapping: RESTMapping) => HttpRequest): Promise<R>;
  /** The `dryRun` / `fieldManager` query of a write (the client's field owner is the default). */
  writeQuery(options: WriteOptions | undefined): URLSearchParams;
}

/** The collection path for a mapping (`/api/v1/namespaces/ns/pods` or `/apis/apps/v1/deployments`). */
export function collectionPathOf(mapping: RESTMapping, namespace: string | undefined): string {
  const r = mapping.resource;
  const prefix = r.group === '' ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
  if (mapping.scope === 'Namespaced' && namespace) {
    return `${prefix}/namespaces/${encodeURIComponent(namespace)}/${r.resource}`;
  }
  return `${prefix}/${r.resource}`;
}

/**
 * The path of one object (and optionally of one of its subresources).
 * @throws InvalidRequestError when the name is empty, or the namespace is missing for a namespaced kind.
 */
export function objectPathOf(mapping: RESTMapping, kind: Kind, key: ObjectKey, subResource?: string): string {
  if (!key.name) throw new InvalidRequestError(`${kind.kind}: a name is required`);
  if (mapping.scope === 'Namespaced' && !key.namespace) {
    throw new InvalidRequestError(
      `${kind.kind} "${key.name}": a namespace is required for a namespaced kind`,
    );
  }
  const base = `${collectionPathOf(mapping, key.namespace)}/${encodeURIComponent(key.name)}`;
  return subResource ? `${base}/${encodeURIComponent(subResource)}` : base;
}

export function withQuery(path: string, q: URLSearchParams): string {
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

/**
 * What the client's feature modules (subresources, deleteAllOf) need from the `ApiClient` without making
 * its internals public. Not exported from the package.
 */
import type { HttpRequest } from '../http.js';
import type { Kind } from '../kinds.js';
import type { WriteOptions } from '../options.js';
import type { RESTMapping } from '../rest-mapper.js';
import type { NamespaceUse } from './request-mapping.js';

/** Request access bound to one `ApiClient` (its transport, RESTMapper and field owner). */
export interface ClientInternals {
  /**
   * Resolves the kind's mapping for a request that uses the namespace as `use` says (`mappingForRequest`:
   * a scope decision is checked against discovery first), builds the request from it and sends it; the
   * JSON reply is returned. A 404 for the resource (not for an object) invalidates the kind's group version
   * in the RESTMapper and the request is built and sent once more with a fresh mapping (which may be a
   * NoKindMatchError).
   */
  request<R>(kind: Kind, use: NamespaceUse, build: (mapping: RESTMapping) => HttpRequest): Promise<R>;
  /** The `dryRun` / `fieldManager` query of a write (the client's field owner is the default). */
  writeQuery(options: WriteOptions | undefined): URLSearchParams;
}

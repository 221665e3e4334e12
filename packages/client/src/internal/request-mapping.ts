/**
 * The RESTMapping a request is built from, with its scope decision checked against discovery when the
 * cached mapping alone would decide it. Not exported from the package.
 */
import { InvalidRequestError } from '../errors.js';
import { gvkOf, type Kind, type ObjectKey } from '../kinds.js';
import type { RESTMapper, RESTMapping } from '../rest-mapper.js';

/** How a request uses a namespace. */
export interface NamespaceUse {
  /** The namespace the caller gave (absent or empty: none). */
  readonly namespace: string | undefined;
  /**
   * The refusal when the kind is namespaced and no namespace was given (object requests, create,
   * deleteAllOf). Absent: a namespaced kind without a namespace spans all namespaces (list, watch).
   */
  readonly required?: string;
}

/** Whether the mapping's scope makes the client refuse the request, or drop the caller's namespace. */
function decidesOnScope(mapping: RESTMapping, use: NamespaceUse): boolean {
  return mapping.scope === 'Namespaced' ? !use.namespace && use.required !== undefined : !!use.namespace;
}

/**
 * The kind's mapping for a request that uses `use`. A cached scope can be stale — a CRD deleted and
 * re-created with the other scope — and a request refused on it never reaches the server, so no 404 would
 * ever correct it. So when the scope decides (a namespaced kind without a namespace is refused; a namespace
 * given for a cluster-scoped kind is dropped, as controller-runtime does), the kind's group version is
 * forgotten (rate-limited: at most once per the mapper's refresh interval) and the kind resolved once more
 * from discovery, as controller-runtime's dynamic RESTMapper re-discovers on a miss.
 * @throws InvalidRequestError (`use.required`) when the kind, as discovery now serves it, is namespaced and
 *   no namespace was given; NoKindMatchError; StatusError from discovery.
 */
export async function mappingForRequest(
  mapper: RESTMapper,
  kind: Kind,
  use: NamespaceUse,
): Promise<RESTMapping> {
  const gvk = gvkOf(kind);
  let mapping = await mapper.restMapping(gvk);
  if (
    decidesOnScope(mapping, use) &&
    mapper.invalidate &&
    mapper.invalidate(gvk, { rateLimited: true }) !== false
  )
    mapping = await mapper.restMapping(gvk);
  if (mapping.scope === 'Namespaced' && !use.namespace && use.required !== undefined)
    throw new InvalidRequestError(use.required);
  return mapping;
}

/**
 * How an object request (get, update, patch, delete, a subresource) uses its key: a namespaced kind needs
 * a namespace. @throws InvalidRequestError when the name is empty.
 */
export function objectNamespaceUse(kind: Kind, key: ObjectKey): NamespaceUse {
  if (!key.name) throw new InvalidRequestError(`${kind.kind}: a name is required`);
  return {
    namespace: key.namespace,
    required: `${kind.kind} "${key.name}": a namespace is required for a namespaced kind`,
  };
}

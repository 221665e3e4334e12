/**
 * Metadata-only reads (client-go `metadata` client, controller-runtime's `PartialObjectMetadata` objects):
 * the Accept headers that ask the API server for `meta.k8s.io/v1` `PartialObjectMetadata(List)` and the
 * reduction of whatever arrives to `{ apiVersion, kind, metadata }`.
 */
import { InvalidRequestError } from './errors.js';
import { isMetadataOnly, type Kind, type KubeObject, type PartialObjectMetadata } from './kinds.js';

/**
 * `Accept` for one object (get, patch, and each watch event). The plain JSON fallback lets a server without
 * the transformation answer with whole objects, which the client then reduces to their metadata.
 */
export const PARTIAL_OBJECT_METADATA_ACCEPT =
  'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';
/** `Accept` for a list. */
export const PARTIAL_OBJECT_METADATA_LIST_ACCEPT =
  'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';

/**
 * Reduces an object (a `PartialObjectMetadata` from the server, or a whole object from a server that
 * ignored the Accept parameters) to its metadata, with `apiVersion`/`kind` of the kind it stands for — as
 * controller-runtime sets the GVK on metadata objects. Never keeps `spec`, `data`, `status` or any other field.
 */
export function toPartialObjectMetadata(kind: Kind, obj: KubeObject): PartialObjectMetadata {
  return { apiVersion: kind.apiVersion, kind: kind.kind, metadata: obj?.metadata ?? {} };
}

/** The Accept header of a metadata-only read (nothing for other kinds). */
export function metadataAccept(kind: Kind, list: boolean): { headers?: Record<string, string> } {
  if (!isMetadataOnly(kind)) return {};
  return { headers: { accept: list ? PARTIAL_OBJECT_METADATA_LIST_ACCEPT : PARTIAL_OBJECT_METADATA_ACCEPT } };
}

/**
 * controller-runtime refuses create/update of metadata-only objects: there is no whole object to send.
 * @throws InvalidRequestError for a metadata-only kind.
 */
export function refuseMetadataOnly(kind: Kind, verb: 'create' | 'update'): void {
  if (isMetadataOnly(kind))
    throw new InvalidRequestError(
      `${kind.kind}: cannot ${verb} a metadata-only object (PartialObjectMetadata); did you mean to patch?`,
    );
}

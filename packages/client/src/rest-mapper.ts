/**
 * The RESTMapper (apimachinery `meta.RESTMapper`): what it answers, the mapping of one kind, and the errors
 * of a kind that is not served. Implementations: `DynamicRESTMapper` (discovery, lazy) and
 * `StaticRESTMapper` (fixed).
 */

import { isNotFound, StatusError } from './errors.js';
import {
  apiVersionOf,
  type GroupVersion,
  type GroupVersionKind,
  type GroupVersionResource,
} from './kinds.js';

/** Whether a resource lives in a namespace (`Namespaced`) or at cluster scope (`Cluster`). */
export type ResourceScope = 'Namespaced' | 'Cluster';

/** How one kind is served: its resource (plural) and scope (apimachinery `meta.RESTMapping`). */
export interface RESTMapping {
  readonly gvk: GroupVersionKind;
  readonly resource: GroupVersionResource;
  readonly scope: ResourceScope;
}

/** RESTMapper knows how to map a kind to the resource that serves it and back (apimachinery `meta.RESTMapper`). */
export interface RESTMapper {
  /**
   * The mapping for a kind. An empty `version` asks for the group's preferred version that serves the kind
   * (apimachinery `RESTMapping(groupKind)` without versions).
   * @throws NoKindMatchError when the server does not serve it; StatusError when discovery fails.
   */
  restMapping(gvk: GroupVersionKind): Promise<RESTMapping>;
  /**
   * The kind a resource serves; `version` may be omitted (then the group's preferred version is used).
   * @throws NoKindMatchError when the server does not serve it.
   */
  kindFor(gvr: {
    readonly group: string;
    readonly version?: string;
    readonly resource: string;
  }): Promise<GroupVersionKind>;
  /** Whether the kind is namespaced. @throws NoKindMatchError */
  isNamespaced(gvk: GroupVersionKind): Promise<boolean>;
  /**
   * Forgets what is known about one group version, so the next lookup asks discovery again. The client calls
   * it when a request for a mapped kind is answered with a 404 for the resource (not for an object): the
   * group version, or the kind in it, has gone (a CRD deleted, a version no longer served). It also calls it,
   * with `{ rateLimited: true }`, before acting on a scope it only has from the cached mapping (refusing a
   * request for want of a namespace, or dropping the caller's namespace for a cluster-scoped kind): the CRD
   * may have been re-created with the other scope. Optional: a static mapper has nothing to forget.
   * @returns whether the group version was forgotten (`false`: a rate-limited call that was held back).
   */
  invalidate?(gv: GroupVersion, options?: InvalidateOptions): boolean | undefined;
}

/** Options of {@link RESTMapper.invalidate}. */
export interface InvalidateOptions {
  /**
   * The caller doubts the mapping rather than knows it is gone: forget the group version at most once per
   * the mapper's refresh interval (`missRefreshIntervalMs` for `DynamicRESTMapper`), so a request that
   * is wrong every time (a namespaced kind without a namespace) costs at most one discovery request per
   * interval. @defaultValue false
   */
  readonly rateLimited?: boolean;
}

/** What {@link NoKindMatchError} knows about the group the kind was looked for in. */
export interface NoKindMatchDetails {
  /** The kind looked for (its `version` is `''` when none was asked for). */
  readonly gvk?: GroupVersionKind;
  /** Versions of the group that serve the kind, preferred first (empty: none does). */
  readonly servedVersions?: readonly string[];
  /** Every version the group serves, preferred first (empty: the group is not served at all). */
  readonly groupVersions?: readonly string[];
}

/** No resource serves the kind (apimachinery `NoKindMatchError`). Code `'ERR_NO_KIND_MATCH'`. */
export class NoKindMatchError extends Error {
  readonly code = 'ERR_NO_KIND_MATCH' as const;
  override readonly name = 'NoKindMatchError';
  /** The kind looked for, when known. */
  readonly gvk: GroupVersionKind | undefined;
  /** Versions of the kind's group that do serve the kind (preferred first); empty when none. */
  readonly servedVersions: readonly string[];
  /** Versions the kind's group serves at all (preferred first); empty when the group is not served. */
  readonly groupVersions: readonly string[];
  constructor(
    readonly what: string,
    details: NoKindMatchDetails = {},
  ) {
    super(`no matches for ${what}${describeServed(details)}`);
    this.gvk = details.gvk;
    this.servedVersions = details.servedVersions ?? [];
    this.groupVersions = details.groupVersions ?? [];
  }
}

function describeServed(d: NoKindMatchDetails): string {
  if (!d.gvk) return '';
  const group = d.gvk.group === '' ? 'the core group' : `group "${d.gvk.group}"`;
  if (d.servedVersions?.length)
    return ` (the kind is served in ${d.servedVersions.map((v) => apiVersionOf({ group: d.gvk!.group, version: v })).join(', ')})`;
  if (d.groupVersions?.length)
    return ` (${group} serves ${d.groupVersions.join(', ')}, none of them has kind "${d.gvk.kind}")`;
  if (d.groupVersions) return ` (${group} is not served)`;
  return '';
}

/** Whether `err` says the kind is not served (e.g. a CRD not installed yet). */
export function isNoMatchError(err: unknown): boolean {
  return (
    err instanceof NoKindMatchError ||
    (err instanceof Error && (err as { code?: unknown }).code === 'ERR_NO_KIND_MATCH')
  );
}

/**
 * Whether `err` is a 404 for the **resource** rather than for an object: the reply is not a Status naming an
 * object (`details.name`), e.g. kube-apiserver's "the server could not find the requested resource" (empty
 * details) or a bare `404 page not found` for a group version that is not served. A missing object, or a
 * create in a missing namespace, names the object and is not a resource 404.
 */
export function isResourceNotFound(err: unknown): boolean {
  if (!(err instanceof StatusError) || !isNotFound(err)) return false;
  return !err.status.details?.name;
}

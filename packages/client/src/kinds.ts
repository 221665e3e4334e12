import type { DeepReadonly } from './deep-readonly.js';
import type { AuthenticationV1TokenRequest, V1Eviction, V1ObjectMeta, V1Scale } from './models/generated.js';

/**
 * The smallest shape every Kubernetes object has: type meta plus object meta. Objects are plain JSON
 * objects; the built-in model types (`@kubeloop/client/models`) are typed as they are on the wire
 * (timestamps are RFC 3339 strings, which kubeloop does not convert).
 */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: V1ObjectMeta;
}

/** List metadata as it is on the wire (`continue`, not client-node's `_continue`). */
export interface ListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

/** A list as the API server returns it (`<Kind>List`). */
export interface ObjectList<T extends KubeObject = KubeObject> {
  apiVersion?: string;
  kind?: string;
  metadata: ListMeta;
  items: T[];
}

/** API group and version (apimachinery `schema.GroupVersion`). Core group is `''`. */
export interface GroupVersion {
  readonly group: string;
  readonly version: string;
}

/** API group, version and kind (apimachinery `schema.GroupVersionKind`). Core group is `''`. */
export interface GroupVersionKind extends GroupVersion {
  readonly kind: string;
}

/** API group, version and resource (plural, lower case), e.g. `{ group: 'apps', version: 'v1', resource: 'deployments' }`. */
export interface GroupVersionResource {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
}

/**
 * A kind descriptor: names a kind by `apiVersion` + `kind` and carries the object's TypeScript type, so
 * `client.get(Pod, …)` returns a `V1Pod`. The `__type` field is a phantom: it never exists at run time.
 */
export interface Kind<T extends KubeObject = KubeObject> {
  readonly apiVersion: string;
  readonly kind: string;
  /** Phantom type marker; never set. */
  readonly __type?: T;
  /**
   * Set (to `true`) on descriptors made by {@link metadataOnly}: reads and watches ask the server for
   * `PartialObjectMetadata` instead of the whole object.
   */
  readonly metadataOnly?: boolean;
}

/**
 * The object type a kind descriptor names: `ObjectOf<typeof Deployment>` is the Deployment object type, the
 * type `client.get(Deployment, …)` resolves to. Use it to name an object type without importing the model
 * (`let d: ObjectOf<typeof Deployment>`); a descriptor made by `kind<T>()` gives `T`.
 */
export type ObjectOf<K extends Kind<KubeObject>> = K extends Kind<infer T> ? T : never;

/** The list type of a kind descriptor's objects (`<Kind>List`, what `client.list(K, …)` resolves to). */
export type ListOf<K extends Kind<KubeObject>> = ObjectList<ObjectOf<K>>;

/**
 * The descriptor of a built-in resource (the generated constants such as `Pod`, `Deployment`, `appsV1.StatefulSet`):
 * a {@link Kind} plus what discovery says of the resource in Kubernetes 1.32 — its plural `resource` name, its scope
 * (`namespaced`), its `subresources` (e.g. `['scale', 'status']`) and `verbs`. The client still resolves kinds
 * through the RESTMapper (the cluster may differ); these fields document the kind and serve tools and tests.
 */
export interface BuiltinKind<T extends KubeObject = KubeObject> extends Kind<T> {
  readonly resource: string;
  readonly namespaced: boolean;
  readonly subresources: readonly string[];
  readonly verbs: readonly string[];
}

/** Builds a {@link BuiltinKind} (used by the generated descriptors). The result and its arrays are frozen. */
export function builtinKind<T extends KubeObject>(
  apiVersion: string,
  kindName: string,
  resource: string,
  namespaced: boolean,
  subresources: readonly string[],
  verbs: readonly string[],
): BuiltinKind<T> {
  return Object.freeze({
    apiVersion,
    kind: kindName,
    resource,
    namespaced,
    subresources: Object.freeze([...subresources]),
    verbs: Object.freeze([...verbs]),
  });
}

/** Builds a kind descriptor, e.g. `kind<MyWidget>('example.com/v1', 'Widget')`. The result is frozen. */
export function kind<T extends KubeObject = KubeObject>(apiVersion: string, kindName: string): Kind<T> {
  return Object.freeze({ apiVersion, kind: kindName });
}

/** Splits `apps/v1` into `{ group: 'apps', version: 'v1' }` and `v1` into `{ group: '', version: 'v1' }`. */
export function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  if (slash < 0) return { group: '', version: apiVersion };
  return { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/** The GVK a kind descriptor names. */
export function gvkOf(k: Kind): GroupVersionKind {
  return { ...parseApiVersion(k.apiVersion), kind: k.kind };
}

/** `group/version` for the core group is just `version` (apimachinery `GroupVersion.String`). */
export function apiVersionOf(gv: { group: string; version: string }): string {
  return gv.group === '' ? gv.version : `${gv.group}/${gv.version}`;
}

/** `Kind.version.group` style string for messages, e.g. `Deployment.v1.apps` or `Pod.v1`. */
export function gvkString(gvk: GroupVersionKind): string {
  return gvk.group === '' ? `${gvk.kind}.${gvk.version}` : `${gvk.kind}.${gvk.version}.${gvk.group}`;
}

/** autoscaling/v1 Scale: the body of the `scale` subresource (`spec.replicas`, `status.replicas`, `status.selector`). */
export const Scale: Kind<V1Scale> = kind('autoscaling/v1', 'Scale');
/** policy/v1 Eviction: the body of a pod's `eviction` subresource (create only). */
export const Eviction: Kind<V1Eviction> = kind('policy/v1', 'Eviction');
/** authentication.k8s.io/v1 TokenRequest: the body of a service account's `token` subresource (create only). */
export const TokenRequest: Kind<AuthenticationV1TokenRequest> = kind(
  'authentication.k8s.io/v1',
  'TokenRequest',
);

/**
 * An object reduced to its metadata (meta.k8s.io/v1 `PartialObjectMetadata`). Objects read through a
 * {@link metadataOnly} descriptor have this shape, with `apiVersion`/`kind` set to the kind they stand for
 * (e.g. `v1`/`Secret`), as controller-runtime sets the GVK on its metadata objects.
 */
export interface PartialObjectMetadata extends KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: V1ObjectMeta;
}

/** A list of {@link PartialObjectMetadata} (meta.k8s.io/v1 `PartialObjectMetadataList`). */
export type PartialObjectMetadataList = ObjectList<PartialObjectMetadata>;

/**
 * A descriptor for the metadata of a kind: `client.get(metadataOnly(Secret), key)` returns the Secret's
 * metadata only (labels, annotations, owners, finalizers, resourceVersion…), never its data. Reads, lists
 * and watches send `Accept: application/json;as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1`, as
 * client-go's metadata client and controller-runtime's `PartialObjectMetadata` objects do. Patch, delete and
 * deleteAllOf work on it; create and update are refused (there is no whole object to send). The result is
 * frozen and has the same `apiVersion`/`kind` as `k`; tell it apart with {@link isMetadataOnly}.
 */
export function metadataOnly(k: Kind): Kind<PartialObjectMetadata> {
  if (k.metadataOnly) return k as Kind<PartialObjectMetadata>;
  return Object.freeze({ apiVersion: k.apiVersion, kind: k.kind, metadataOnly: true });
}

/** Whether a descriptor was made by {@link metadataOnly}. */
export function isMetadataOnly(k: Kind): boolean {
  return k.metadataOnly === true;
}

/** Names one object: `namespace` is absent (or `''`) for cluster-scoped kinds. */
export interface ObjectKey {
  readonly namespace?: string;
  readonly name: string;
}

/** The key of an object (`{ namespace, name }`), controller-runtime's `ObjectKeyFromObject`. */
export function objectKeyFromObject(obj: DeepReadonly<KubeObject>): ObjectKey {
  const name = obj.metadata?.name ?? '';
  const namespace = obj.metadata?.namespace;
  return namespace ? { namespace, name } : { name };
}

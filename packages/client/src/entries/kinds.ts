/**
 * @packageDocumentation
 * `@kubeloop/client/kinds`: a descriptor for every built-in kind of Kubernetes 1.32 (`{ apiVersion, kind }`
 * carrying the object's wire type, its resource, scope, subresources and verbs), flat (`StatefulSet`) and by
 * group version as client-go names its packages (`appsV1.StatefulSet`), plus the subresource kinds `Scale`,
 * `Eviction` and `TokenRequest`. The most used ones (`Pod`, `ConfigMap`, `Secret`, `Service`, `Namespace`,
 * `Deployment`) are also on the package root.
 */
export * from '../builtin-kinds.js';
export { type BuiltinKind, builtinKind, Eviction, Scale, TokenRequest } from '../kinds.js';

/**
 * @packageDocumentation
 * `@kubeloop/envtest`: an in-process Kubernetes API server that speaks the real REST + watch wire protocol
 * over HTTPS on loopback (discovery, CRUD, every patch type, status/scale subresources, paging, label and
 * field selectors, watch with bookmarks and 410, generation, finalizers, CRDs), with fault injection for
 * tests, and `Environment` — controller-runtime's `pkg/envtest` — which starts it (or uses an existing
 * cluster, or real kube-apiserver + etcd binaries) and gives a `RestConfig` and a kubeconfig file.
 */
export {
  ApiServer,
  type ApiServerOptions,
  type RequestLogEntry,
  startApiServer,
} from './api-server.js';
export { Authenticator, type TokenOptions, type UserInfo } from './auth.js';
export type { CertificatePair } from './certs.js';
export { ControlPlane, type ControlPlaneOptions, controlPlaneAssetsFromEnv } from './control-plane.js';
export { Environment, type EnvironmentMode, type EnvironmentOptions } from './environment.js';
export {
  ApiStatusError,
  EnvtestError,
  type Status,
  type StatusCause,
  type StatusDetails,
} from './errors.js';
export { FaultInjector, type RequestContext, type WatchFaults, type WatchWriter } from './faults.js';
export {
  type KubeconfigSpec,
  loadCurrentKubeconfig,
  renderKubeconfig,
  writeKubeconfig,
} from './kubeconfig.js';
export { type LabelSelector, parseLabelSelector } from './label-selector.js';
export type { KObject, ResourceType } from './resource-type.js';
export { type Entry, ExpiredError, type Snapshot, Store, type StoreEvent } from './store.js';

/**
 * @packageDocumentation
 * `@kubeloop/envtest`: an in-process Kubernetes API server that speaks the real REST + watch wire protocol
 * over HTTPS on loopback (discovery, CRUD, every patch type, status/scale subresources, paging, label and
 * field selectors, watch with bookmarks and 410, generation, finalizers, CRDs), with fault injection for
 * tests, and `Environment` — controller-runtime's `pkg/envtest` — which starts it (or uses an existing
 * cluster, or real kube-apiserver + etcd binaries) and gives a `RestConfig` and a kubeconfig file.
 */

export {
  type AdminServer,
  AdminServerError,
  type AdminServerOptions,
  startAdminServer,
} from './admin.js';
export type { ServiceResolver } from './admission/call.js';
export { type WebhookFault, WebhookFaults } from './admission/faults.js';
export {
  type AdmissionAttributes,
  WebhookAdmission,
  type WebhookAdmissionOptions,
} from './admission/webhook-admission.js';
export { ApiServer, type ApiServerOptions, type RequestLogEntry } from './api-server.js';
export {
  createInProcessApiServer,
  type InProcessApiServerOptions,
  startApiServer,
} from './api-server-start.js';
export { Authenticator, type TokenOptions, type UserInfo } from './auth.js';
export type { CertificatePair } from './certs.js';
export {
  ControlPlane,
  type ControlPlaneOptions,
  type ControlPlaneProcess,
  controlPlaneAssetsFromEnv,
} from './control-plane.js';
export { Environment, type EnvironmentMode, type EnvironmentOptions } from './environment.js';
export {
  ApiStatusError,
  EnvtestError,
  type Status,
  type StatusCause,
  type StatusDetails,
} from './errors.js';
export {
  type BlackholeSpec,
  type DelayEventsSpec,
  type DelayRequestsSpec,
  type EndWatchesSpec,
  type ExpireSpec,
  type FailRequestsSpec,
  FaultError,
  type FaultHandle,
  type FaultHost,
  FaultInjector,
  type FaultSpec,
  faultSpecSchema,
  type RequestContext,
  type RequestMatch,
  type RequestQuery,
  type RequestRecord,
  type RequireSelectorSpec,
  type ShapeStep,
  type ShapeWatchSpec,
  type StatusSpec,
  type SuppressInitialEventsEndSpec,
  VERBS,
  type Verb,
  validateFaultSpec,
  type WatchFaults,
  type WatchWriter,
} from './faults/index.js';
export type { InProcessBody, InProcessRequest, InProcessResponse } from './in-process.js';
export {
  type KubeconfigSpec,
  loadCurrentKubeconfig,
  renderKubeconfig,
  writeKubeconfig,
} from './kubeconfig.js';
export type { KObject, ResourceType } from './resource-type.js';

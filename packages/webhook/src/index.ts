/**
 * @packageDocumentation
 * `@kubeloop/webhook`: admission (validating, defaulting) and conversion webhooks for a kubeloop manager,
 * the HTTPS webhook server, certificates without cert-manager (mounted-file hot reload; a self-signed CA
 * with rotation and CA bundle injection), webhook metrics and generated webhook configurations. Mirrors
 * controller-runtime's `pkg/webhook`, `pkg/webhook/admission`, `pkg/webhook/conversion`, `pkg/certwatcher`
 * and `pkg/builder/webhook.go`.
 */
export { AdmissionDeniedError, type AdmissionDeniedOptions, isAdmissionDenied } from './admission/errors.js';
export {
  type AdmissionResult,
  allowed,
  denied,
  errored,
  patchResponseFromObjects,
} from './admission/response.js';
export {
  type AdmissionWarnings,
  type Defaulter,
  defaultingHandler,
  type TypedAdmissionContext,
  type Validator,
  validatingHandler,
} from './admission/typed.js';
export type {
  AdmissionRequest,
  AdmissionResponse,
  AdmissionReview,
  JsonPatchOperation,
  Operation,
  Status,
  StatusCause,
  UserInfo,
} from './admission/types.js';
export {
  type AdmissionContext,
  type AdmissionHandler,
  AdmissionWebhook,
  type AdmissionWebhookOptions,
  decodeAdmissionReview,
} from './admission/webhook.js';
export {
  conversionWebhookFor,
  getWebhookServer,
  newWebhookManagedBy,
  WebhookBuilder,
  webhookRegistrations,
} from './builder.js';
export { CertWatcher, type CertWatcherOptions } from './certs/certwatcher.js';
export { serviceDNSNames } from './certs/pki.js';
export { type CABundleTargets, SelfSignedCertificates, type SelfSignedOptions } from './certs/self-signed.js';
export type { CertificatePair, CertificateSource } from './certs/source.js';
export {
  ConversionError,
  type ConversionRequest,
  type ConversionResponse,
  type ConversionReview,
  ConversionWebhook,
  type ConversionWebhookOptions,
  type ConvertFunc,
  convertHubAndSpoke,
  decodeConversionReview,
  type HubAndSpoke,
  type Spoke,
} from './conversion/conversion.js';
export { defineWebhook, isWebhookDeclaration, type WebhookDeclaration } from './declaration.js';
export {
  type CrdConversionPatch,
  crdConversionPatch,
  type WebhookClientConfig,
  type WebhookClientTarget,
  type WebhookConfiguration,
  type WebhookConfigurationOptions,
  type WebhookEntry,
  type WebhookManifest,
  type WebhookRule,
  webhookConfigurations,
  webhookManifests,
} from './manifests.js';
export { CONVERT_PATH, guessPlural, mutatePath, validatePath } from './names.js';
export {
  type WebhookDeclarationOptions,
  type WebhookRegistration,
  type WebhookSettings,
  webhookRegistration,
} from './registration.js';
export type { WebhookReply } from './review.js';
export { type WebhookMetrics, webhookMetrics } from './server/metrics.js';
export {
  DEFAULT_MAX_BODY_BYTES,
  parseBindAddress,
  type RawWebhookHandler,
  WebhookServer,
  type WebhookServerOptions,
} from './server/server.js';

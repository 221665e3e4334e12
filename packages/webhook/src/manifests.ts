/**
 * `MutatingWebhookConfiguration` / `ValidatingWebhookConfiguration` manifests generated from the builder's
 * registrations (what controller-gen writes from kubebuilder's `+kubebuilder:webhook` markers), and the CRD
 * conversion stanza, so nobody hand-writes them.
 */
import type { KubeObject } from '@kubeloop/client';
import { CONVERT_PATH } from './names.js';
import type { WebhookRegistration } from './registration.js';

/** Where the API server reaches the webhook server: a Service, or a base URL (out-of-cluster, tests). */
export interface WebhookClientTarget {
  /** The Service in front of the manager (controller-gen's `webhook-service` in `system`). */
  readonly service?: { readonly name: string; readonly namespace: string; readonly port?: number };
  /** A base URL such as `https://127.0.0.1:9443`; the webhook path is appended. Wins over `service`. */
  readonly url?: string;
  /** Base64 PEM of the CA that signed the serving certificate. */
  readonly caBundle?: string;
}

/** Options of {@link webhookConfigurations}. */
export interface WebhookConfigurationOptions extends WebhookClientTarget {
  /** Name of both configurations. @defaultValue `kubeloop-webhook-configuration` */
  readonly name?: string;
}

/** Admission webhook client config (`admissionregistration/v1.WebhookClientConfig`). */
export interface WebhookClientConfig {
  url?: string;
  service?: { name: string; namespace: string; path?: string; port?: number };
  /** Base64 PEM. */
  caBundle?: string;
}

/** One rule of a webhook (`admissionregistration/v1.RuleWithOperations`). */
export interface WebhookRule {
  apiGroups: string[];
  apiVersions: string[];
  operations: string[];
  resources: string[];
}

/** One webhook of a generated configuration (`admissionregistration/v1.MutatingWebhook` / `ValidatingWebhook`). */
export interface WebhookEntry {
  name: string;
  clientConfig: WebhookClientConfig;
  rules: WebhookRule[];
  admissionReviewVersions: string[];
  failurePolicy: 'Fail' | 'Ignore';
  matchPolicy: 'Equivalent' | 'Exact';
  sideEffects: 'None' | 'NoneOnDryRun';
  timeoutSeconds: number;
  /** Mutating webhooks only. */
  reinvocationPolicy?: 'Never' | 'IfNeeded';
}

function clientConfig(target: WebhookClientTarget, urlPath: string): WebhookClientConfig {
  const base = target.url
    ? { url: `${target.url.replace(/\/+$/, '')}${urlPath}` }
    : target.service
      ? {
          service: {
            name: target.service.name,
            namespace: target.service.namespace,
            path: urlPath,
            ...(target.service.port !== undefined ? { port: target.service.port } : {}),
          },
        }
      : undefined;
  if (!base) throw new TypeError('webhook client target: give service or url');
  return { ...base, ...(target.caBundle ? { caBundle: target.caBundle } : {}) };
}

/** kube-apiserver wants webhook names with at least three DNS labels. */
function webhookName(prefix: 'm' | 'v', r: WebhookRegistration): string {
  const name = `${prefix}${r.kind.toLowerCase()}-${r.version}.${r.group || 'core'}`;
  return name.split('.').length >= 3 ? name : `${name}.kubeloop.io`;
}

function rule(r: WebhookRegistration, operations: readonly string[]): WebhookRule {
  return {
    apiGroups: [r.group],
    apiVersions: [r.version],
    operations: [...operations],
    resources: [r.plural],
  };
}

function common(
  r: WebhookRegistration,
): Pick<
  WebhookEntry,
  'admissionReviewVersions' | 'failurePolicy' | 'matchPolicy' | 'sideEffects' | 'timeoutSeconds'
> {
  return {
    admissionReviewVersions: ['v1'],
    failurePolicy: r.settings.failurePolicy ?? 'Fail',
    matchPolicy: r.settings.matchPolicy ?? 'Equivalent',
    sideEffects: r.settings.sideEffects ?? 'None',
    timeoutSeconds: r.settings.timeoutSeconds ?? 10,
  };
}

/**
 * A generated `MutatingWebhookConfiguration` or `ValidatingWebhookConfiguration`: `apiVersion`, `kind` and
 * `metadata.name` are always set, so `client.create(kind(c.apiVersion, c.kind), c)` takes it as it is.
 */
export interface WebhookConfiguration extends KubeObject {
  apiVersion: 'admissionregistration.k8s.io/v1';
  kind: 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration';
  metadata: { name: string };
  webhooks: WebhookEntry[];
}

/** The part of a CRD that {@link crdConversionPatch} gives: `metadata.name` and `spec.conversion`. */
export interface CrdConversionPatch extends KubeObject {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string };
  spec: {
    conversion: {
      strategy: 'Webhook';
      webhook: { clientConfig: WebhookClientConfig; conversionReviewVersions: string[] };
    };
  };
}

/** What {@link webhookManifests} gives: the configurations and the CRDs' conversion stanzas. */
export type WebhookManifest = WebhookConfiguration | CrdConversionPatch;

/**
 * The two admission configurations for `registrations` (from `webhookRegistrations(mgr)` or declarations'
 * `registration`), each webhook with its rules (the kind's group, version and plural; CREATE and UPDATE, plus
 * DELETE for validators with `validateDelete`), `failurePolicy`, `sideEffects`, `matchPolicy`,
 * `admissionReviewVersions: [v1]`, `timeoutSeconds` and client config. A configuration without webhooks is left
 * out of the result. @throws TypeError when `options` name neither a service nor a URL.
 */
export function webhookConfigurations(
  registrations: readonly WebhookRegistration[],
  options: WebhookConfigurationOptions,
): WebhookConfiguration[] {
  const name = options.name ?? 'kubeloop-webhook-configuration';
  const mutating = registrations
    .filter((r) => r.mutatePath)
    .map(
      (r): WebhookEntry => ({
        name: webhookName('m', r),
        clientConfig: clientConfig(options, r.mutatePath as string),
        rules: [rule(r, ['CREATE', 'UPDATE'])],
        ...common(r),
        reinvocationPolicy: r.settings.reinvocationPolicy ?? 'Never',
      }),
    );
  const validating = registrations
    .filter((r) => r.validatePath)
    .map(
      (r): WebhookEntry => ({
        name: webhookName('v', r),
        clientConfig: clientConfig(options, r.validatePath as string),
        rules: [rule(r, r.validateOperations)],
        ...common(r),
      }),
    );
  const apiVersion = 'admissionregistration.k8s.io/v1';
  const out: WebhookConfiguration[] = [];
  if (mutating.length)
    out.push({ apiVersion, kind: 'MutatingWebhookConfiguration', metadata: { name }, webhooks: mutating });
  if (validating.length)
    out.push({
      apiVersion,
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name },
      webhooks: validating,
    });
  return out;
}

/**
 * The `spec.conversion` of a CRD converted by this manager (`strategy: Webhook`, the `/convert` path,
 * `conversionReviewVersions: [v1]`), as a partial CRD ready for server-side apply on the CRD named `crdName`
 * (or, as kubebuilder's `config/crd/patches/webhook_in_<plural>.yaml`, a patch onto the generated CRD).
 */
export function crdConversionPatch(crdName: string, target: WebhookClientTarget): CrdConversionPatch {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: crdName },
    spec: {
      conversion: {
        strategy: 'Webhook',
        webhook: { clientConfig: clientConfig(target, CONVERT_PATH), conversionReviewVersions: ['v1'] },
      },
    },
  };
}

/**
 * Every manifest of `registrations`: {@link webhookConfigurations}, then one {@link crdConversionPatch} per CRD
 * (`<plural>.<group>`) with a conversion, in registration order. What `kubeloop webhook generate` writes.
 */
export function webhookManifests(
  registrations: readonly WebhookRegistration[],
  options: WebhookConfigurationOptions,
): WebhookManifest[] {
  const crds = [...new Set(registrations.filter((r) => r.convertible).map((r) => `${r.plural}.${r.group}`))];
  return [
    ...webhookConfigurations(registrations, options),
    ...crds.map((c) => crdConversionPatch(c, options)),
  ];
}

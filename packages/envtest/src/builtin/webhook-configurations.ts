/**
 * Merge keys of the admission webhook configurations: `webhooks` is a list map keyed by `name`
 * (`patchMergeKey:"name"`, `listType=map` in k8s.io/api/admissionregistration/v1), so a strategic-merge
 * patch or a server-side apply that names one webhook (a CA injector setting `clientConfig.caBundle`)
 * merges into it instead of replacing the list.
 */
export const WEBHOOK_CONFIGURATION_MERGE_KEYS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  'admissionregistration.k8s.io/validatingwebhookconfigurations': { webhooks: 'name' },
  'admissionregistration.k8s.io/mutatingwebhookconfigurations': { webhooks: 'name' },
};

/**
 * `spec.conversion` of a CustomResourceDefinition, validated as kube-apiserver 1.32 validates it (apiextensions
 * `validateCustomResourceConversion`): the strategy is None or Webhook; Webhook needs a client config with exactly
 * one of `url` (https) and `service`, and `conversionReviewVersions` naming v1 or v1beta1; None allows neither. The
 * field paths are the server's internal ones (`spec.conversion.webhookClientConfig`), as it reports them for v1.
 */
import { type FieldError, fieldForbidden, fieldNotSupported, fieldRequired } from './errors.js';

function obj(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : undefined;
}

/** The errors of a CRD's `spec.conversion` (none when it is absent). */
export function validateCrdConversion(spec: Record<string, unknown>): FieldError[] {
  const conversion = obj(spec.conversion);
  if (!conversion) return [];
  const errs: FieldError[] = [];
  const strategy = conversion.strategy;
  if (strategy !== 'None' && strategy !== 'Webhook')
    errs.push(fieldNotSupported('spec.conversion.strategy', strategy ?? '', ['None', 'Webhook']));
  const webhook = obj(conversion.webhook);
  const cc = obj(webhook?.clientConfig);
  const versions = Array.isArray(webhook?.conversionReviewVersions)
    ? (webhook.conversionReviewVersions as unknown[])
    : [];
  const ccPath = 'spec.conversion.webhookClientConfig';
  const versionsPath = 'spec.conversion.conversionReviewVersions';
  if (strategy === 'Webhook') {
    if (!cc) errs.push(fieldRequired(ccPath, 'required when strategy is set to Webhook'));
    else if ((cc.url === undefined) === (cc.service === undefined))
      errs.push(fieldRequired(ccPath, 'exactly one of url or service is required'));
    else if (typeof cc.url === 'string' && !cc.url.startsWith('https://')) {
      const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(cc.url)?.[1] ?? '';
      errs.push({
        type: 'FieldValueInvalid',
        field: `${ccPath}.url`,
        detail: `Invalid value: "${scheme}": 'https' is the only allowed URL scheme; desired format: https://host[/path]`,
      });
    }
    if (versions.length === 0) errs.push(fieldRequired(versionsPath));
    else if (!versions.some((v) => v === 'v1' || v === 'v1beta1'))
      errs.push({
        type: 'FieldValueInvalid',
        field: versionsPath,
        detail: `Invalid value: []string{${versions.map((v) => JSON.stringify(String(v))).join(', ')}}: must include at least one of v1, v1beta1`,
      });
  } else {
    if (cc) errs.push(fieldForbidden(ccPath, 'should not be set when strategy is not set to Webhook'));
    if (versions.length > 0)
      errs.push(fieldForbidden(versionsPath, 'should not be set when strategy is not set to Webhook'));
  }
  return errs;
}

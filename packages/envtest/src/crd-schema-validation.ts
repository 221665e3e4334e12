/**
 * CRD schema checks kube-apiserver 1.32 makes before it accepts a CustomResourceDefinition
 * (apiextensions `ValidateCustomResourceDefinitionValidation`): the structural-schema rules
 * (`structuralschema.ValidateStructural`: a `type` everywhere but under `x-kubernetes-int-or-string` /
 * `x-kubernetes-preserve-unknown-fields`, `items` for arrays, `object` at the root), the OpenAPI restrictions
 * (`uniqueItems` forbidden, `additionalProperties` with `properties`, a `pattern` that is not a Go regexp,
 * `x-kubernetes-list-type` consistency, `x-kubernetes-validations` entries: rule present, message without line
 * breaks, supported `reason`) and — only when all of those pass, as upstream — the CEL compilation of every rule
 * and messageExpression. Field paths are the server's: `spec.validation.openAPIV3Schema.properties[spec]…` when
 * every version has the same schema (it is hoisted in the internal version), else
 * `spec.versions[i].schema.openAPIV3Schema…`.
 * Not checked: the estimated CEL cost limits, defaults validity, `metadata` restrictions in nested schemas.
 */

import { goBadValue, goQuote } from '@kubeloop/core/go-format';
import { compileRules, goValidationRule, type ValidationRule } from './cel/rules.js';
import type { FieldError } from './errors.js';
import { compileRe2 } from './schema/json-value.js';

type Node = Record<string, unknown>;

function node(v: unknown): Node | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Node) : undefined;
}

const REASONS = ['FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired'];

function required(field: string, detail: string): FieldError {
  return { type: 'FieldValueRequired', field, detail: `Required value: ${detail}` };
}

function forbidden(field: string, detail: string): FieldError {
  return { type: 'FieldValueForbidden', field, detail: `Forbidden: ${detail}` };
}

function invalid(field: string, value: unknown, detail: string): FieldError {
  return { type: 'FieldValueInvalid', field, detail: `Invalid value: ${goBadValue(value)}: ${detail}` };
}

type Where = 'root' | 'items' | 'property';

function structural(s: Node, path: string, where: Where, errs: FieldError[]): void {
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  if (where === 'root' && s.type !== undefined && s.type !== 'object')
    errs.push(invalid(`${path}.type`, s.type, 'must be object at the root'));
  if ((s.type === undefined || s.type === '') && !intOrString && !preserve)
    errs.push(
      required(
        `${path}.type`,
        where === 'root'
          ? 'must not be empty at the root'
          : where === 'items'
            ? 'must not be empty for specified array items'
            : 'must not be empty for specified object fields',
      ),
    );
  if (s.type === 'array' && s.items === undefined) errs.push(required(`${path}.items`, 'must be specified'));
  if (typeof s.pattern === 'string') {
    const re = compileRe2(s.pattern);
    if (re instanceof Error)
      errs.push(
        invalid(`${path}.pattern`, s.pattern, `must be a valid regular expression, but isn't: ${re.message}`),
      );
  }
  for (const [k, p] of Object.entries(node(s.properties) ?? {})) {
    const n = node(p);
    if (n) structural(n, `${path}.properties[${k}]`, 'property', errs);
  }
  const items = node(s.items);
  if (items) structural(items, `${path}.items`, 'items', errs);
  const addl = node(s.additionalProperties);
  if (addl) structural(addl, `${path}.additionalProperties`, 'property', errs);
}

function openapi(s: Node, path: string, errs: FieldError[]): void {
  if (s.uniqueItems === true)
    errs.push(
      forbidden(
        `${path}.uniqueItems`,
        'uniqueItems cannot be set to true since the runtime complexity becomes quadratic',
      ),
    );
  if (s.additionalProperties !== undefined && s.properties !== undefined && s.additionalProperties !== false)
    errs.push(
      forbidden(`${path}.additionalProperties`, 'additionalProperties and properties are mutual exclusive'),
    );
  const lt = s['x-kubernetes-list-type'];
  if (lt !== undefined) {
    if (s.type !== 'array')
      errs.push(
        s.type === undefined
          ? required(`${path}.type`, 'must be array if x-kubernetes-list-type is specified')
          : invalid(`${path}.type`, s.type, 'must be array if x-kubernetes-list-type is specified'),
      );
    if (lt !== 'atomic' && lt !== 'set' && lt !== 'map')
      errs.push({
        type: 'FieldValueNotSupported',
        field: `${path}.x-kubernetes-list-type`,
        detail: `Unsupported value: ${goQuote(String(lt))}: supported values: "atomic", "set", "map"`,
      });
    const keys = s['x-kubernetes-list-map-keys'];
    if (lt === 'map' && (!Array.isArray(keys) || keys.length === 0))
      errs.push(
        required(`${path}.x-kubernetes-list-map-keys`, 'must not be empty if x-kubernetes-list-type is map'),
      );
  }
  const rules = Array.isArray(s['x-kubernetes-validations'])
    ? (s['x-kubernetes-validations'] as ValidationRule[])
    : [];
  rules.forEach((r, i) => {
    const at = `${path}.x-kubernetes-validations[${i}]`;
    const rule = String(r.rule ?? '').trim();
    const msg = String(r.message ?? '').trim();
    if (!rule) errs.push(required(`${at}.rule`, 'rule is not specified'));
    else if ((r.message ?? '').length > 0 && !msg)
      errs.push(invalid(`${at}.message`, r.message, 'message must be non-empty if specified'));
    else if (/\n/.test(msg))
      errs.push(invalid(`${at}.message`, r.message, 'message must not contain line breaks'));
    else if (/\n/.test(rule) && !msg)
      errs.push(required(`${at}.message`, 'message must be specified if rule contains line breaks'));
    if ((r.messageExpression ?? '').length > 0 && !String(r.messageExpression).trim())
      errs.push(required(`${at}.messageExpression`, 'messageExpression must be non-empty if specified'));
    if (r.reason !== undefined && !REASONS.includes(r.reason))
      errs.push({
        type: 'FieldValueNotSupported',
        field: `${at}.reason`,
        detail: `Unsupported value: ${goQuote(r.reason)}: supported values: ${REASONS.map((x) => goQuote(x)).join(', ')}`,
      });
  });
  for (const [k, p] of Object.entries(node(s.properties) ?? {})) {
    const n = node(p);
    if (n) openapi(n, `${path}.properties[${k}]`, errs);
  }
  const items = node(s.items);
  if (items) openapi(items, `${path}.items`, errs);
  const addl = node(s.additionalProperties);
  if (addl) openapi(addl, `${path}.additionalProperties`, errs);
}

/** The schema errors of every version of a CRD (`spec.versions[i].schema.openAPIV3Schema`). */
export function validateCrdSchemas(crd: Record<string, unknown>): FieldError[] {
  const spec = node(crd.spec) ?? {};
  const versions = Array.isArray(spec.versions) ? spec.versions : [];
  const errs: FieldError[] = [];
  // the server validates the internal version, where per-version schemas that are all identical (one version,
  // typically) are hoisted to spec.validation: its errors then name spec.validation.openAPIV3Schema
  const schemas = versions.map((v) => JSON.stringify(node(node(v)?.schema)?.openAPIV3Schema ?? null));
  const hoisted = versions.length > 0 && schemas.every((x) => x === schemas[0]);
  versions.forEach((v, i) => {
    const schema = node(node(node(v)?.schema)?.openAPIV3Schema);
    if (!schema || (hoisted && i > 0)) return;
    const base = hoisted ? 'spec.validation.openAPIV3Schema' : `spec.versions[${i}].schema.openAPIV3Schema`;
    const own: FieldError[] = [];
    structural(schema, base, 'root', own);
    openapi(schema, base, own);
    // CEL is compiled only when the schema itself is sound; the bad value is the rule, printed as Go prints the
    // internal ValidationRule struct (%#v)
    if (own.length === 0)
      for (const e of compileRules(schema, base).errors)
        own.push(
          e.forbidden
            ? {
                type: 'FieldValueForbidden',
                field:
                  e.index < 0
                    ? e.schemaPath
                    : `${e.schemaPath}.x-kubernetes-validations[${e.index}].${e.field}`,
                detail: `Forbidden: ${e.detail}`,
              }
            : {
                type: 'FieldValueInvalid',
                field: `${e.schemaPath}.x-kubernetes-validations[${e.index}].${e.field}`,
                detail: `Invalid value: ${e.value ?? goValidationRule(e.rule)}: ${e.detail}`,
              },
        );
    for (const e of own) errs.push(e);
  });
  return errs;
}

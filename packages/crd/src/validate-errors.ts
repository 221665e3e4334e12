/** The field errors of custom resource validation, as kube-apiserver reports them in a 422 reply's causes. */
import { goBadValue } from '@kubeloop/core/go-format';
import type { CustomResourceKind } from './kind.js';

/** The `reason` of one cause of a 422 reply (apimachinery `field.ErrorType`). */
export type FieldErrorType =
  | 'FieldValueRequired'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'FieldValueTypeInvalid'
  | 'FieldValueDuplicate'
  | 'FieldValueForbidden';

/**
 * One validation error, shaped as kube-apiserver reports it (apimachinery `field.Error`): `field` is the path the
 * server names (`spec.ports[0].name`, `spec.labels.app`), `message` is the text of the Status cause
 * (`spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1`).
 */
export interface FieldError {
  readonly type: FieldErrorType;
  readonly field: string;
  readonly badValue?: unknown;
  readonly detail: string;
  /** `<field>: <body>`, as `field.Error.Error()` prints it. */
  readonly message: string;
}

/**
 * An object that does not validate against its kind's schema. `message` reads like the server's 422 Status
 * message (`WebApp.example.com "web" is invalid: [spec.replicas: …, …]`); `errors` are the causes.
 */
export class InvalidObjectError extends Error {
  override readonly name = 'InvalidObjectError';
  readonly errors: readonly FieldError[];
  constructor(kind: CustomResourceKind, name: string, errors: readonly FieldError[]) {
    const list =
      errors.length === 1 ? (errors[0]?.message ?? '') : `[${errors.map((e) => e.message).join(', ')}]`;
    super(`${kind.kind}.${kind.group} ${JSON.stringify(name)} is invalid: ${list}`);
    this.errors = errors;
  }
}

const ERROR_NAMES: Record<FieldErrorType, string> = {
  FieldValueRequired: 'Required value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  FieldValueTypeInvalid: 'Invalid value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueForbidden: 'Forbidden',
};

/** One field error: its type, field path, detail and the bad value as Go prints it (`field.Error`). */
export function fieldError(
  type: FieldErrorType,
  field: string,
  detail: string,
  badValue?: unknown,
): FieldError {
  let body = ERROR_NAMES[type];
  if (type !== 'FieldValueRequired' && type !== 'FieldValueForbidden' && type !== 'FieldValueTooLong')
    body += `: ${goBadValue(badValue)}`;
  if (detail) body += `: ${detail}`;
  return {
    type,
    field,
    ...(badValue !== undefined ? { badValue } : {}),
    detail,
    message: `${field}: ${body}`,
  };
}

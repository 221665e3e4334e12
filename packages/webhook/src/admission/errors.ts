import type { Kind } from '@kubeloop/client';
import { parseApiVersion } from '@kubeloop/client/apiutil';
import type { Status, StatusCause } from './types.js';

/** Options of {@link AdmissionDeniedError}. */
export interface AdmissionDeniedOptions {
  /** HTTP code the API server answers the client with. @defaultValue 403 */
  readonly code?: number;
  /** `metav1.StatusReason`, e.g. `Forbidden`, `Invalid`. @defaultValue `Forbidden` (or `Invalid` with causes and code 422) */
  readonly reason?: string;
  /** Field causes (`{ field: 'spec.size', message: '…', reason: 'FieldValueInvalid' }`). */
  readonly causes?: readonly StatusCause[];
  /** Warnings returned along with the denial. */
  readonly warnings?: readonly string[];
  /** The `details` group/kind/name of the Status. */
  readonly details?: { readonly group?: string; readonly kind?: string; readonly name?: string };
}

/**
 * Thrown by a validator (or defaulter) to deny a request with a given `Status`: the API server answers the
 * client with `code`, `reason`, `message` and the field `causes` (controller-runtime: a validator returning an
 * `apierrors.APIStatus` error denies with that status; any other error denies with 403 Forbidden).
 */
export class AdmissionDeniedError extends Error {
  override readonly name = 'AdmissionDeniedError';
  readonly code: number;
  readonly reason: string;
  readonly causes: readonly StatusCause[];
  readonly warnings: readonly string[];
  readonly details: { readonly group?: string; readonly kind?: string; readonly name?: string } | undefined;

  constructor(message: string, options: AdmissionDeniedOptions = {}) {
    super(message);
    this.code = options.code ?? 403;
    this.reason = options.reason ?? (this.code === 422 ? 'Invalid' : 'Forbidden');
    this.causes = options.causes ?? [];
    this.warnings = options.warnings ?? [];
    this.details = options.details;
  }

  /**
   * A 422 `Invalid` denial in the API server's own words (apimachinery `apierrors.NewInvalid`):
   * `Widget.example.com "w1" is invalid: [spec.size: Invalid value: 0: must be positive, …]`, with each cause
   * `{ reason: 'FieldValueInvalid', field, message }`. `name` may be undefined (a create by `generateName`
   * has none yet): the message then quotes an empty name, as the API server's does.
   */
  static invalid(
    kind: Pick<Kind, 'apiVersion' | 'kind'>,
    name: string | undefined,
    causes: readonly { field: string; message: string; reason?: string }[],
  ): AdmissionDeniedError {
    const { group } = parseApiVersion(kind.apiVersion);
    const qualified = group ? `${kind.kind}.${group}` : kind.kind;
    const list = causes.map((c) => `${c.field}: ${c.message}`);
    const msg = `${qualified} "${name ?? ''}" is invalid: ${list.length === 1 ? list[0] : `[${list.join(', ')}]`}`;
    return new AdmissionDeniedError(msg, {
      code: 422,
      reason: 'Invalid',
      causes: causes.map((c) => ({
        reason: c.reason ?? 'FieldValueInvalid',
        field: c.field,
        message: c.message,
      })),
      details: { group, kind: kind.kind, name },
    });
  }

  /** The `metav1.Status` this denial answers with. */
  toStatus(): Status {
    const hasDetails = this.causes.length > 0 || this.details !== undefined;
    return {
      status: 'Failure',
      code: this.code,
      reason: this.reason,
      message: this.message,
      ...(hasDetails
        ? { details: { ...(this.details ?? {}), ...(this.causes.length ? { causes: this.causes } : {}) } }
        : {}),
    };
  }
}

/** Recognises an {@link AdmissionDeniedError}, also one from another copy of this package. */
export function isAdmissionDenied(e: unknown): e is AdmissionDeniedError {
  return (
    e instanceof AdmissionDeniedError ||
    (e instanceof Error &&
      e.name === 'AdmissionDeniedError' &&
      typeof (e as Partial<AdmissionDeniedError>).toStatus === 'function')
  );
}

/**
 * The API `Status` object and the constructors for the errors a kube-apiserver returns
 * (apimachinery `pkg/api/errors/errors.go`). Key order follows a real server: kind, apiVersion, metadata,
 * status, message, reason, details, code.
 */
import { goBadValue } from '@kubeloop/core/go-format';

/** One cause of an error (`details.causes[]`); the JSON key is `reason`, as upstream. */
export interface StatusCause {
  readonly reason?: string;
  readonly message?: string;
  readonly field?: string;
}

/** `details` of a Status. Empty fields are omitted. */
export interface StatusDetails {
  readonly name?: string;
  readonly group?: string;
  readonly kind?: string;
  readonly uid?: string;
  readonly causes?: readonly StatusCause[];
  readonly retryAfterSeconds?: number;
}

/** A `meta.k8s.io/v1` Status, as sent on the wire. */
export interface Status {
  readonly kind: 'Status';
  readonly apiVersion: 'v1';
  readonly metadata: { readonly continue?: string };
  readonly status: 'Failure' | 'Success';
  readonly message?: string;
  readonly reason?: string;
  readonly details?: StatusDetails;
  readonly code?: number;
}

/** Base class of errors thrown by this package's own API (not by the served HTTP API). */
export class EnvtestError extends Error {
  /** Stable machine-readable code, e.g. `ENVTEST_START_FAILED`. */
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EnvtestError';
    this.code = code;
  }
}

/**
 * An API error inside the server: carries the HTTP status code and the Status body to answer with.
 * `code` is always `ENVTEST_API_STATUS`; `httpCode` and `status.reason` say which error it is.
 */
export class ApiStatusError extends Error {
  readonly code = 'ENVTEST_API_STATUS';
  readonly httpCode: number;
  readonly status: Status;
  readonly headers: Readonly<Record<string, string | string[]>>;
  constructor(status: Status, httpCode?: number, headers: Record<string, string | string[]> = {}) {
    super(status.message ?? status.reason ?? 'API error');
    this.name = 'ApiStatusError';
    this.status = status;
    this.httpCode = httpCode ?? status.code ?? 500;
    this.headers = headers;
  }
}

function clean(details: StatusDetails | undefined): StatusDetails | undefined {
  if (!details) return undefined;
  const out: Record<string, unknown> = {};
  if (details.name) out.name = details.name;
  if (details.group) out.group = details.group;
  if (details.kind) out.kind = details.kind;
  if (details.uid) out.uid = details.uid;
  if (details.causes && details.causes.length > 0) out.causes = details.causes;
  if (details.retryAfterSeconds) out.retryAfterSeconds = details.retryAfterSeconds;
  return out as StatusDetails;
}

/** Build a Failure Status. `details` is included (possibly `{}`) only when given. */
export function failureStatus(
  code: number,
  reason: string | undefined,
  message: string,
  details?: StatusDetails,
  metadata: { continue?: string } = {},
): Status {
  const d = clean(details);
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata,
    status: 'Failure',
    message,
    ...(reason ? { reason } : {}),
    ...(d ? { details: d } : {}),
    code,
  };
}

/** `<resource>[.<group>]`, as used in error messages. */
export function qualifiedResource(resource: string, group: string): string {
  return group ? `${resource}.${group}` : resource;
}

export function notFound(resource: string, group: string, name: string): ApiStatusError {
  return new ApiStatusError(
    failureStatus(404, 'NotFound', `${qualifiedResource(resource, group)} "${name}" not found`, {
      name,
      group,
      kind: resource,
    }),
  );
}

/** The generic 404 of an unknown path. */
export function pathNotFound(): ApiStatusError {
  return new ApiStatusError(
    failureStatus(404, 'NotFound', 'the server could not find the requested resource', {}),
  );
}

export function alreadyExists(
  resource: string,
  group: string,
  name: string,
  terminating = false,
): ApiStatusError {
  const prefix = terminating ? 'object is being deleted: ' : '';
  return new ApiStatusError(
    failureStatus(
      409,
      'AlreadyExists',
      `${prefix}${qualifiedResource(resource, group)} "${name}" already exists`,
      {
        name,
        group,
        kind: resource,
      },
    ),
  );
}

export function conflict(resource: string, group: string, name: string, why: string): ApiStatusError {
  return new ApiStatusError(
    failureStatus(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${qualifiedResource(resource, group)} "${name}": ${why}`,
      { name, group, kind: resource },
    ),
  );
}

/** Optimistic-lock failure text of the generic registry store. */
export const OPTIMISTIC_LOCK_MSG =
  'the object has been modified; please apply your changes to the latest version and try again';

/** A field error for a 422 Invalid. */
export interface FieldError {
  readonly type:
    | 'FieldValueRequired'
    | 'FieldValueInvalid'
    | 'FieldValueDuplicate'
    | 'FieldValueNotSupported'
    | 'FieldValueForbidden'
    | 'FieldValueTooLong'
    | 'FieldValueTooMany'
    | 'FieldValueTypeInvalid';
  readonly field: string;
  /** The detail text after the type prefix, e.g. `Invalid value: "x": must be ...`. */
  readonly detail: string;
}

export function fieldRequired(field: string, detail = ''): FieldError {
  return {
    type: 'FieldValueRequired',
    field,
    detail: detail ? `Required value: ${detail}` : 'Required value',
  };
}

/** `field.Invalid`: the bad value printed as `field.Error` prints it (`goBadValue`: `"null"` for nil). */
export function fieldInvalid(field: string, value: unknown, detail: string): FieldError {
  return { type: 'FieldValueInvalid', field, detail: `Invalid value: ${goBadValue(value)}: ${detail}` };
}

export function fieldForbidden(field: string, detail: string): FieldError {
  return { type: 'FieldValueForbidden', field, detail: `Forbidden: ${detail}` };
}

export function fieldNotSupported(field: string, value: unknown, supported: readonly string[]): FieldError {
  return {
    type: 'FieldValueNotSupported',
    field,
    detail: `Unsupported value: ${goBadValue(value)}: supported values: ${supported.map((s) => `"${s}"`).join(', ')}`,
  };
}

export function fieldTooLong(field: string, max: number, unit = 'bytes'): FieldError {
  return { type: 'FieldValueTooLong', field, detail: `Too long: must have at most ${max} ${unit}` };
}

/**
 * 422 Invalid. `kind` is the Kind for most objects (`Pod`), `group` its API group.
 * Message: `<Kind>[.<group>] "<name>" is invalid: <field>: <detail>` (several joined as `[a, b]`).
 */
export function invalid(
  kind: string,
  group: string,
  name: string,
  errors: readonly FieldError[],
  detailsKind = kind,
): ApiStatusError {
  const parts = errors.map((e) => `${e.field}: ${e.detail}`);
  const joined = parts.length === 1 ? parts[0] : `[${parts.join(', ')}]`;
  return new ApiStatusError(
    failureStatus(422, 'Invalid', `${qualifiedResource(kind, group)} "${name}" is invalid: ${joined}`, {
      name,
      group,
      kind: detailsKind,
      causes: errors.map((e) => ({ reason: e.type, message: e.detail, field: e.field })),
    }),
  );
}

export function badRequest(message: string): ApiStatusError {
  return new ApiStatusError(failureStatus(400, 'BadRequest', message, undefined));
}

/** 405 as apimachinery `NewMethodNotSupported(resource, verb)`: details name the group and resource. */
export function methodNotSupported(resource: string, group: string, verb: string): ApiStatusError {
  return new ApiStatusError(
    failureStatus(
      405,
      'MethodNotAllowed',
      `${verb} is not supported on resources of kind "${qualifiedResource(resource, group)}"`,
      { group, kind: resource },
    ),
  );
}

export function unauthorized(): ApiStatusError {
  return new ApiStatusError(failureStatus(401, 'Unauthorized', 'Unauthorized', undefined));
}

/** 403, as the RBAC authorizer words it. */
export function forbidden(
  user: string,
  verb: string,
  resource: string,
  group: string,
  namespace: string | undefined,
  name: string | undefined,
  subresource?: string,
  reason?: string,
): ApiStatusError {
  const what = name
    ? `${qualifiedResource(resource, group)} "${name}" is forbidden`
    : `${qualifiedResource(resource, group)} is forbidden`;
  const res = subresource ? `${resource}/${subresource}` : resource;
  const scope = namespace ? `in the namespace "${namespace}"` : 'at the cluster scope';
  const msg = `${what}: User "${user}" cannot ${verb} resource "${res}" in API group "${group}" ${scope}${reason ? `: ${reason}` : ''}`;
  return new ApiStatusError(failureStatus(403, 'Forbidden', msg, { name, group, kind: resource }));
}

/**
 * 403 Forbidden as apimachinery `NewForbidden(resource, name, err)` words it, the error admission plugins
 * (NamespaceLifecycle) return: `<resource> "<name>" is forbidden: <why>` (no name: `<resource> is forbidden: <why>`),
 * details `{name, group, kind: <resource>}` plus any `causes`.
 */
export function forbiddenBy(
  resource: string,
  group: string,
  name: string | undefined,
  why: string,
  causes?: StatusCause[],
): ApiStatusError {
  const what = name
    ? `${qualifiedResource(resource, group)} "${name}" is forbidden`
    : `${qualifiedResource(resource, group)} is forbidden`;
  return new ApiStatusError(
    failureStatus(403, 'Forbidden', `${what}: ${why}`, { name, group, kind: resource, causes }),
  );
}

export function expired(message: string, continueToken?: string): ApiStatusError {
  return new ApiStatusError(
    failureStatus(410, 'Expired', message, undefined, continueToken ? { continue: continueToken } : {}),
  );
}

export function unsupportedMediaType(accepted: readonly string[]): ApiStatusError {
  return new ApiStatusError(
    failureStatus(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
      undefined,
    ),
  );
}

export function notAcceptable(): ApiStatusError {
  return new ApiStatusError(
    failureStatus(
      406,
      'NotAcceptable',
      'only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf',
      undefined,
    ),
  );
}

export function internalError(message: string): ApiStatusError {
  return new ApiStatusError(
    failureStatus(500, 'InternalError', `Internal error occurred: ${message}`, {
      causes: [{ message }],
    }),
  );
}

export function timeoutError(
  message: string,
  retryAfterSeconds: number,
  causes?: StatusCause[],
): ApiStatusError {
  return new ApiStatusError(failureStatus(504, 'Timeout', message, { causes, retryAfterSeconds }), 504);
}

/**
 * Typed handlers on a kind: {@link Validator} and {@link Defaulter} (controller-runtime
 * `admission.CustomValidator`, `admission.CustomDefaulter` and their `WithCustomValidator` / `WithCustomDefaulter`).
 */
import type { Kind, KubeObject } from '@kubeloop/client';
import { isAdmissionDenied } from './errors.js';
import { type AdmissionResult, allowed, errored, patchResponseFromObjects } from './response.js';
import type { AdmissionRequest, Operation, UserInfo } from './types.js';
import type { AdmissionContext, AdmissionHandler } from './webhook.js';

/** What a typed handler gets beside the object(s): the request's attributes, a signal and a logger. */
export interface TypedAdmissionContext<T extends KubeObject> extends AdmissionContext {
  /** The whole request, frozen (for `options`, `requestKind`, …). */
  readonly request: AdmissionRequest<T>;
  readonly operation: Operation;
  readonly userInfo: UserInfo;
  /** `true` when nothing will be persisted: do not cause side effects then (`sideEffects: NoneOnDryRun`). */
  readonly dryRun: boolean;
  readonly namespace: string | undefined;
  /** e.g. `status`; `undefined` for the main resource. */
  readonly subResource: string | undefined;
}

/** Warnings a validator returns; they reach the client as `Warning` headers. */
// biome-ignore lint/suspicious/noConfusingVoidType: a validator method may simply return nothing
export type AdmissionWarnings = readonly string[] | undefined | void;

/**
 * Validates one kind (controller-runtime `CustomValidator`). Each method returns warnings, or throws an
 * `AdmissionDeniedError` to deny with its code, reason, message and causes. Any other throw answers
 * `allowed: false` with code 500 naming the webhook. A missing method allows. Objects are frozen.
 */
export interface Validator<T extends KubeObject> {
  validateCreate?(obj: T, ctx: TypedAdmissionContext<T>): AdmissionWarnings | Promise<AdmissionWarnings>;
  validateUpdate?(
    oldObj: T,
    newObj: T,
    ctx: TypedAdmissionContext<T>,
  ): AdmissionWarnings | Promise<AdmissionWarnings>;
  /** Gets the object being deleted (the request's `oldObject`). */
  validateDelete?(obj: T, ctx: TypedAdmissionContext<T>): AdmissionWarnings | Promise<AdmissionWarnings>;
}

/**
 * Defaults one kind (controller-runtime `CustomDefaulter`): `default` changes `obj`, a private deep copy of
 * the request's object, in place; the webhook answers with the JSON Patch from the request's object to it.
 * Not called on DELETE (as upstream). May throw an `AdmissionDeniedError` to deny.
 */
export interface Defaulter<T extends KubeObject> {
  default(obj: T, ctx: TypedAdmissionContext<T>): void | Promise<void>;
}

function typedContext<T extends KubeObject>(
  request: AdmissionRequest,
  ctx: AdmissionContext,
): TypedAdmissionContext<T> {
  // not `...ctx`: spreading would read (and so make) the lazily made `signal`
  return {
    get signal() {
      return ctx.signal;
    },
    logger: ctx.logger,
    webhook: ctx.webhook,
    request: request as AdmissionRequest<T>,
    operation: request.operation,
    userInfo: request.userInfo ?? {},
    dryRun: request.dryRun === true,
    namespace: request.namespace || undefined,
    subResource: request.subResource || undefined,
  };
}

function deniedResult(e: unknown): AdmissionResult | undefined {
  if (!isAdmissionDenied(e)) return undefined;
  return { allowed: false, result: e.toStatus(), ...(e.warnings.length ? { warnings: e.warnings } : {}) };
}

function checkKind(kind: Kind | undefined, obj: KubeObject): string | undefined {
  if (kind === undefined) return undefined;
  if (obj.kind !== undefined && obj.kind !== kind.kind)
    return `expected a ${kind.kind}, got kind ${JSON.stringify(obj.kind)}`;
  return undefined;
}

/**
 * The raw handler of a {@link Validator}. `kind` (optional) checks that the objects are of that kind (400 otherwise).
 * Errors: UPDATE without `oldObject`, DELETE without `oldObject`, CREATE/UPDATE without `object` answer 400.
 */
export function validatingHandler<T extends KubeObject>(
  validator: Validator<T>,
  kind?: Kind<T>,
): AdmissionHandler {
  return async (request, ctx) => {
    const tctx = typedContext<T>(request, ctx);
    const obj = request.object as T | null | undefined;
    const old = request.oldObject as T | null | undefined;
    try {
      let warnings: AdmissionWarnings;
      switch (request.operation) {
        case 'CREATE':
          if (!obj) return errored('request.object: required on CREATE', 400);
          if (checkKind(kind, obj)) return errored(checkKind(kind, obj) as string, 400);
          warnings = await validator.validateCreate?.(obj, tctx);
          break;
        case 'UPDATE':
          if (!obj) return errored('request.object: required on UPDATE', 400);
          if (!old) return errored('request.oldObject: required on UPDATE', 400);
          if (checkKind(kind, obj)) return errored(checkKind(kind, obj) as string, 400);
          warnings = await validator.validateUpdate?.(old, obj, tctx);
          break;
        case 'DELETE':
          if (!old) return errored('request.oldObject: required on DELETE', 400);
          warnings = await validator.validateDelete?.(old, tctx);
          break;
        default:
          return allowed();
      }
      return allowed('', warnings ?? []);
    } catch (e) {
      const d = deniedResult(e);
      if (d) return d;
      throw e;
    }
  };
}

/**
 * The raw handler of a {@link Defaulter}: deep-copies the request's object, calls `default` on the copy and
 * answers with the JSON Patch between them (none when nothing changed). DELETE and CONNECT are allowed unseen.
 */
export function defaultingHandler<T extends KubeObject>(
  defaulter: Defaulter<T>,
  kind?: Kind<T>,
): AdmissionHandler {
  return async (request, ctx) => {
    if (request.operation === 'DELETE' || request.operation === 'CONNECT') return allowed();
    const obj = request.object as T | null | undefined;
    if (!obj) return errored(`request.object: required on ${request.operation}`, 400);
    if (checkKind(kind, obj)) return errored(checkKind(kind, obj) as string, 400);
    const copy = structuredClone(obj) as T;
    try {
      await defaulter.default(copy, typedContext<T>(request, ctx));
    } catch (e) {
      const d = deniedResult(e);
      if (d) return d;
      throw e;
    }
    return patchResponseFromObjects(obj, copy);
  };
}

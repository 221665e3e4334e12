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

const NO_USER: UserInfo = Object.freeze({});

/**
 * The typed context: the request's attributes are read from the (frozen) request when the handler reads them,
 * not copied into a new object per review; `signal` is still made only when read.
 */
class TypedContext<T extends KubeObject> implements TypedAdmissionContext<T> {
  readonly request: AdmissionRequest<T>;
  readonly #ctx: AdmissionContext;

  constructor(request: AdmissionRequest, ctx: AdmissionContext) {
    this.request = request as AdmissionRequest<T>;
    this.#ctx = ctx;
  }
  get signal(): AbortSignal {
    return this.#ctx.signal;
  }
  get logger(): AdmissionContext['logger'] {
    return this.#ctx.logger;
  }
  get webhook(): string {
    return this.#ctx.webhook;
  }
  get operation(): Operation {
    return this.request.operation;
  }
  get userInfo(): UserInfo {
    return this.request.userInfo ?? NO_USER;
  }
  get dryRun(): boolean {
    return this.request.dryRun === true;
  }
  get namespace(): string | undefined {
    return this.request.namespace || undefined;
  }
  get subResource(): string | undefined {
    return this.request.subResource || undefined;
  }
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
  // not async: a validator that answers synchronously is answered without a promise
  return (request, ctx) => {
    const obj = request.object as T | null | undefined;
    const old = request.oldObject as T | null | undefined;
    let warnings: AdmissionWarnings | Promise<AdmissionWarnings>;
    try {
      switch (request.operation) {
        case 'CREATE': {
          if (!obj) return errored('request.object: required on CREATE', 400);
          const wrongKind = checkKind(kind, obj);
          if (wrongKind) return errored(wrongKind, 400);
          warnings = validator.validateCreate?.(obj, new TypedContext<T>(request, ctx));
          break;
        }
        case 'UPDATE': {
          if (!obj) return errored('request.object: required on UPDATE', 400);
          if (!old) return errored('request.oldObject: required on UPDATE', 400);
          const wrongKind = checkKind(kind, obj);
          if (wrongKind) return errored(wrongKind, 400);
          warnings = validator.validateUpdate?.(old, obj, new TypedContext<T>(request, ctx));
          break;
        }
        case 'DELETE':
          if (!old) return errored('request.oldObject: required on DELETE', 400);
          warnings = validator.validateDelete?.(old, new TypedContext<T>(request, ctx));
          break;
        default:
          return allowed();
      }
    } catch (e) {
      return deniedOrThrow(e);
    }
    if (isPromiseLike(warnings)) return Promise.resolve(warnings).then(allowedWith, deniedOrThrow);
    return allowedWith(warnings);
  };
}

/** The answer of a validator that returned `warnings`: a shared frozen result when there are none. */
function allowedWith(warnings: AdmissionWarnings): AdmissionResult {
  return warnings && warnings.length > 0 ? allowed('', warnings) : ALLOWED;
}

const ALLOWED: AdmissionResult = Object.freeze({ allowed: true, result: Object.freeze({ code: 200 }) });

/** A typed denial's result; any other error is thrown on (the webhook answers it 500). */
function deniedOrThrow(e: unknown): AdmissionResult {
  const d = deniedResult(e);
  if (d) return d;
  throw e;
}

function isPromiseLike<T>(v: T | Promise<T>): v is Promise<T> {
  return v !== null && typeof v === 'object' && typeof (v as { then?: unknown }).then === 'function';
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
      await defaulter.default(copy, new TypedContext<T>(request, ctx));
    } catch (e) {
      const d = deniedResult(e);
      if (d) return d;
      throw e;
    }
    return patchResponseFromObjects(obj, copy);
  };
}

/**
 * An admission webhook: decodes an `AdmissionReview`, runs a handler under a deadline, and encodes the answer
 * (controller-runtime `admission.Webhook` and its `ServeHTTP`).
 */
import type { KubeObject } from '@kubeloop/client';
import type { Logger } from '@kubeloop/core';
import { discardLogger, onAbort } from '@kubeloop/core';
import { decodeReview, isObj, statusBody, type WebhookReply } from '../review.js';
import { deepFreeze } from './freeze.js';
import { type AdmissionResult, errored } from './response.js';
import type { AdmissionRequest, AdmissionResponse, AdmissionReview } from './types.js';

/** What a handler gets beside the request. */
export interface AdmissionContext {
  /** Aborts when the per-request deadline passes or the server stops; pass it to your own I/O. */
  readonly signal: AbortSignal;
  readonly logger: Logger;
  /** The webhook's name (its path without the leading `/`). */
  readonly webhook: string;
}

/**
 * A raw admission handler (controller-runtime `admission.Handler`): it sees the whole request (with
 * `object` and `oldObject` deeply frozen) and answers with an {@link AdmissionResult}. Throwing answers
 * `allowed: false` with code 500 naming the webhook.
 */
export type AdmissionHandler = (
  request: AdmissionRequest<KubeObject>,
  context: AdmissionContext,
) => AdmissionResult | Promise<AdmissionResult>;

/** Options of {@link AdmissionWebhook}. */
export interface AdmissionWebhookOptions {
  readonly logger?: Logger;
  /**
   * Longest a handler may take, in ms; past it the request is answered `allowed: false` (code 500) and the
   * handler's signal aborts. A `?timeout=` the API server sends (it sends the webhook's `timeoutSeconds`)
   * lowers it to that timeout minus 100 ms. @defaultValue 9000 (below the API server's default 10 s)
   */
  readonly timeoutMs?: number;
}

const API_VERSIONS = ['admission.k8s.io/v1', 'admission.k8s.io/v1beta1'];
const OPERATIONS = new Set(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']);

/**
 * Checks an `AdmissionReview` body. Returns the review or an error message for a 400 answer: the JSON must
 * parse, `apiVersion` be `admission.k8s.io/v1` (or `v1beta1`), `kind` `AdmissionReview`, and `request` carry a
 * non-empty `uid` and a known `operation`.
 */
export function decodeAdmissionReview(body: string | Uint8Array): AdmissionReview | string {
  const decoded = decodeReview(body, 'AdmissionReview', API_VERSIONS);
  if (typeof decoded === 'string') return decoded;
  const req = decoded.request;
  if (typeof req.operation !== 'string' || !OPERATIONS.has(req.operation))
    return `request.operation: must be one of CREATE, UPDATE, DELETE, CONNECT, got ${JSON.stringify(req.operation)}`;
  if (req.object !== undefined && req.object !== null && !isObj(req.object))
    return 'request.object: must be an object';
  if (req.oldObject !== undefined && req.oldObject !== null && !isObj(req.oldObject))
    return 'request.oldObject: must be an object';
  return decoded.review as unknown as AdmissionReview;
}

/** Parses the API server's `?timeout=` (a Go duration such as `10s`, `500ms`, `1m30s`) into ms. */
export function parseGoDuration(s: string): number | undefined {
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/gy;
  const unit: Record<string, number> = {
    ns: 1e-6,
    us: 1e-3,
    µs: 1e-3,
    ms: 1,
    s: 1000,
    m: 60_000,
    h: 3_600_000,
  };
  let total = 0;
  let m: RegExpExecArray | null;
  let end = 0;
  // biome-ignore lint/suspicious/noAssignInExpressions: a sticky regex walk
  while ((m = re.exec(s)) !== null) {
    total += Number(m[1]) * (unit[m[2] as string] as number);
    end = re.lastIndex;
  }
  return end === s.length && end > 0 ? total : undefined;
}

/**
 * One admission webhook at one path: decodes the review, calls the handler with frozen objects under a
 * deadline and encodes the response (HTTP 200 with the review, as controller-runtime; HTTP 400 with a
 * `Status` for a review it cannot read).
 */
export class AdmissionWebhook {
  readonly name: string;
  readonly #handler: AdmissionHandler;
  readonly #logger: Logger;
  readonly #timeoutMs: number;

  constructor(name: string, handler: AdmissionHandler, options: AdmissionWebhookOptions = {}) {
    this.name = name;
    this.#handler = handler;
    this.#logger = (options.logger ?? discardLogger).child({ webhook: name });
    this.#timeoutMs = options.timeoutMs ?? 9000;
    if (!(this.#timeoutMs > 0)) throw new TypeError(`timeoutMs: must be > 0, got ${options.timeoutMs}`);
  }

  /**
   * Answers one HTTP body. `serverTimeout` is the request's `?timeout=` query value, if any; `signal` aborts
   * the handler (server stopping). Never throws.
   */
  serve(
    body: string | Uint8Array,
    serverTimeout?: string | null,
    signal?: AbortSignal,
  ): Promise<WebhookReply> {
    const review = decodeAdmissionReview(body);
    if (typeof review === 'string') {
      this.#logger.debug({ reason: review }, 'bad AdmissionReview');
      return Promise.resolve({ status: 400, body: statusBody(400, review) });
    }
    const apiVersion = review.apiVersion;
    const response = this.#respond(review.request as AdmissionRequest, serverTimeout, signal);
    // one promise for a handler that answered at once; one more hop only for an asynchronous one
    return isThenable(response)
      ? response.then((r) => reviewReply(apiVersion, r))
      : Promise.resolve(reviewReply(apiVersion, response));
  }

  /** Runs the handler for a decoded request; never throws (a throw answers 500 naming the webhook). */
  handle(
    request: AdmissionRequest,
    serverTimeout?: string | null,
    signal?: AbortSignal,
  ): Promise<AdmissionResponse> {
    return Promise.resolve(this.#respond(request, serverTimeout, signal));
  }

  /**
   * The handler's answer, synchronously when the handler answered synchronously: no deadline timer, promise or
   * closure is made for it then (a sync handler cannot be interrupted anyway). Only an asynchronous answer
   * runs under the deadline.
   */
  #respond(
    request: AdmissionRequest,
    serverTimeout: string | null | undefined,
    signal: AbortSignal | undefined,
  ): AdmissionResponse | Promise<AdmissionResponse> {
    deepFreeze(request);
    const context = new HandlerContext(this.#logger, this.name, signal);
    let result: AdmissionResult | Promise<AdmissionResult>;
    try {
      result = this.#handler(request, context);
    } catch (e) {
      context.dispose();
      return encodeResponse(request.uid, this.#failed(request, e));
    }
    if (!isThenable(result)) {
      context.dispose();
      return encodeResponse(request.uid, this.#checked(request, result));
    }
    let timeoutMs = this.#timeoutMs;
    const fromServer = serverTimeout ? parseGoDuration(serverTimeout) : undefined;
    if (fromServer !== undefined) timeoutMs = Math.max(1, Math.min(timeoutMs, fromServer - 100));
    return new Promise<AdmissionResponse>((resolve) => {
      let answered = false;
      const answer = (r: AdmissionResult): void => {
        if (answered) return;
        answered = true;
        clearTimeout(timer);
        context.dispose();
        resolve(encodeResponse(request.uid, r));
      };
      // The per-request deadline is a plain timer: the handler's signal (an AbortController and its listeners)
      // is only made if the handler reads it.
      const timer = setTimeout(() => {
        context.expire(timeoutMs);
        answer(errored(`webhook "${this.name}" did not answer within ${timeoutMs} ms`, 500));
      }, timeoutMs);
      timer.unref();
      // a handler abandoned at the deadline may still settle later: `answer` ignores it
      Promise.resolve(result).then(
        (r) => answer(this.#checked(request, r)),
        (e: unknown) => answer(this.#failed(request, e)),
      );
    });
  }

  #failed(request: AdmissionRequest, e: unknown): AdmissionResult {
    this.#logger.error({ err: e, uid: request.uid }, 'admission handler threw');
    return errored(`webhook "${this.name}" failed: ${e instanceof Error ? e.message : String(e)}`, 500);
  }

  /** A raw handler that answers something other than a result object answers 500, never a crash or a hang. */
  #checked(request: AdmissionRequest, r: AdmissionResult): AdmissionResult {
    if (r !== null && typeof r === 'object' && typeof r.allowed === 'boolean') return r;
    return this.#failed(request, new TypeError(`handler answered ${describe(r)}, not an AdmissionResult`));
  }
}

function describe(v: unknown): string {
  if (v === null || typeof v !== 'object') return String(v);
  return 'an object without a boolean "allowed"';
}

function isThenable<T>(v: T | Promise<T>): v is Promise<T> {
  return v !== null && typeof v === 'object' && typeof (v as { then?: unknown }).then === 'function';
}

function reviewReply(apiVersion: string, response: AdmissionResponse): WebhookReply {
  return { status: 200, body: { apiVersion, kind: 'AdmissionReview', response } };
}

/**
 * The context a handler gets (controller-runtime passes the request's `context.Context`). Its `signal`
 * aborts when the deadline passes or `parent` (the server's stop) aborts, and exists only once read: the
 * AbortController and its listeners are most of a trivial review's cost otherwise.
 */
class HandlerContext implements AdmissionContext {
  readonly logger: Logger;
  readonly webhook: string;
  readonly #parent: AbortSignal | undefined;
  #controller: AbortController | undefined;
  #off: (() => void) | undefined;
  #expired: DOMException | undefined;
  #disposed = false;

  constructor(logger: Logger, webhook: string, parent: AbortSignal | undefined) {
    this.logger = logger;
    this.webhook = webhook;
    this.#parent = parent;
  }

  get signal(): AbortSignal {
    if (this.#controller) return this.#controller.signal;
    const ac = new AbortController();
    this.#controller = ac;
    if (this.#expired) ac.abort(this.#expired);
    // once answered, a handler still reading its signal must not subscribe to the long-lived server signal
    else if (this.#parent && !this.#disposed) {
      const parent = this.#parent;
      this.#off = onAbort(parent, () => ac.abort(parent.reason));
    }
    return ac.signal;
  }

  expire(timeoutMs: number): void {
    this.#expired = new DOMException(`timed out after ${timeoutMs} ms`, 'TimeoutError');
    this.#off?.();
    this.#controller?.abort(this.#expired);
  }

  dispose(): void {
    this.#disposed = true;
    this.#off?.();
    this.#off = undefined;
  }
}

/** The wire response: fields set one by one in the wire order, no spread of temporary objects. */
function encodeResponse(uid: string, r: AdmissionResult): AdmissionResponse {
  const out: { -readonly [K in keyof AdmissionResponse]: AdmissionResponse[K] } = { uid, allowed: r.allowed };
  if (r.result) out.status = r.result;
  if (r.patch && r.patch.length > 0) {
    out.patch = Buffer.from(JSON.stringify(r.patch)).toString('base64');
    out.patchType = 'JSONPatch';
  }
  if (r.warnings?.length) out.warnings = r.warnings;
  if (r.auditAnnotations) out.auditAnnotations = r.auditAnnotations;
  return out;
}

/**
 * The rules that answer a request before the server routes it (`fail`, `expire`, `blackhole`,
 * `requireSelector`) and the one that holds it first (`delayRequests`).
 */
import type { ServerResponse } from 'node:http';
import { matchesRequest } from './match.js';
import type { Rule } from './rule.js';
import type { RequestContext } from './seam.js';
import type { DelayRequestsSpec, FaultSpec, RequestMatch } from './spec.js';
import {
  baseHeaders,
  CONTINUE_EXPIRED_MESSAGE,
  LIST_EXPIRED_MESSAGE,
  pickStatus,
  sendJson,
  statusFor,
} from './status.js';

/** What a request rule may need from the injector. */
export interface AnswerContext {
  readonly ctx: RequestContext;
  readonly token: string | undefined;
  readonly res: ServerResponse;
  /** The store's current resourceVersion, when the server reports it. */
  currentRv(): number | undefined;
  /** Keep `res` open and silent until released. */
  blackhole(res: ServerResponse): void;
}

/** Let `rule` answer the request if it applies; true when it did (the response is then written). */
export function tryAnswer(rule: Rule<FaultSpec>, a: AnswerContext): boolean {
  const { ctx, token, res } = a;
  const spec = rule.spec;
  switch (spec.type) {
    case 'fail': {
      if (!matchesRequest(spec.match, ctx, ctx.query, token)) return false;
      if (rule.random !== undefined && rule.random() >= (spec.probability ?? 1)) return false;
      if (!rule.take()) return false;
      const retryAfter =
        spec.retryAfterSeconds === undefined ? (spec.status === 429 ? 1 : undefined) : spec.retryAfterSeconds;
      const headers: Record<string, string> = { ...baseHeaders(), ...(spec.headers ?? {}) };
      if (retryAfter !== undefined && retryAfter !== null) headers['Retry-After'] = String(retryAfter);
      if (spec.body === 'empty') {
        // For a 200 on a watch, this is what a proxy that gave up mid-way looks like: headers, no body.
        res.writeHead(spec.status, headers);
        res.end();
        return true;
      }
      if (typeof spec.body === 'object') {
        const text =
          'raw' in spec.body
            ? Buffer.from(spec.body.raw, 'utf8')
            : Buffer.from(spec.body.rawBase64, 'base64');
        res.writeHead(spec.status, { ...headers, 'Content-Length': String(text.length) });
        res.end(text);
        return true;
      }
      const details: Record<string, unknown> = { ...(spec.details ?? {}) };
      if (retryAfter !== undefined && retryAfter !== null) details.retryAfterSeconds = retryAfter;
      sendJson(res, spec.status, statusFor(spec.status, { ...pickStatus(spec), details }), headers);
      return true;
    }
    case 'expire': {
      if (spec.match?.verb === undefined && ctx.verb !== 'list' && ctx.verb !== 'watch') return false;
      if (!matchesRequest(spec.match, ctx, ctx.query, token)) return false;
      if (!rule.take()) return false;
      if (ctx.verb === 'watch') {
        // What a real server sends for a watch from a compacted RV: 200, one ERROR event, a clean end.
        const rv = ctx.query.get('resourceVersion') ?? '0';
        const n = Number(rv);
        const current = a.currentRv();
        const oldest = current !== undefined ? current : Number.isFinite(n) ? n + 1 : 0;
        const message = `too old resource version: ${rv} (${oldest})`;
        res.writeHead(200, { ...baseHeaders(), 'Transfer-Encoding': 'chunked' });
        res.write(
          `${JSON.stringify({ type: 'ERROR', object: statusFor(410, { message, reason: 'Expired' }) })}\n`,
        );
        res.end();
        return true;
      }
      const message = ctx.query.get('continue') ? CONTINUE_EXPIRED_MESSAGE : LIST_EXPIRED_MESSAGE;
      sendJson(res, 410, statusFor(410, { message, reason: 'Expired' }), baseHeaders());
      return true;
    }
    case 'blackhole': {
      if (!matchesRequest(spec.match, ctx, ctx.query, token)) return false;
      if (!rule.take()) return false;
      if (spec.sendHeaders ?? true) {
        res.writeHead(200, { ...baseHeaders(), 'Transfer-Encoding': 'chunked' });
        res.flushHeaders();
      }
      a.blackhole(res);
      return true;
    }
    case 'requireSelector': {
      const m: RequestMatch =
        spec.match?.verb === undefined ? { ...spec.match, verb: ['list', 'watch'] } : spec.match;
      if (!matchesRequest(m, ctx, ctx.query, token)) return false;
      if (spec.token !== undefined && token !== spec.token) return false;
      const fieldOk =
        spec.fieldSelector === undefined || ctx.query.get('fieldSelector') === spec.fieldSelector;
      const labelOk =
        spec.labelSelector === undefined || ctx.query.get('labelSelector') === spec.labelSelector;
      if (fieldOk && labelOk) return false;
      if (!rule.take()) return false;
      const what = [
        spec.fieldSelector !== undefined ? `field selector "${spec.fieldSelector}"` : undefined,
        spec.labelSelector !== undefined ? `label selector "${spec.labelSelector}"` : undefined,
      ]
        .filter(Boolean)
        .join(' and ');
      const resource = ctx.resource ?? 'resource';
      const group = ctx.group ? `.${ctx.group}` : '';
      const message = `${resource}${group} is forbidden: this client may ${ctx.verb} ${resource} only with ${what}`;
      const details = { kind: resource, ...(ctx.group ? { group: ctx.group } : {}) };
      sendJson(res, 403, statusFor(403, { message, details }), baseHeaders());
      return true;
    }
    default:
      return false;
  }
}

/**
 * Hold a request under a `delayRequests` rule: `delayMs`, or until `barrier` requests wait (then all go
 * together; `delayMs`, default 10 s, caps the wait).
 */
export function holdRequest(rule: Rule<DelayRequestsSpec>): Promise<void> {
  const { delayMs, barrier } = rule.spec;
  return new Promise<void>((resolve) => {
    if (barrier === undefined) {
      setTimeout(resolve, delayMs ?? 0);
      return;
    }
    const release = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      const i = rule.waiting.indexOf(release);
      if (i >= 0) rule.waiting.splice(i, 1);
      resolve();
    }, delayMs ?? 10_000);
    rule.waiting.push(release);
    if (rule.waiting.length >= barrier) for (const r of rule.waiting.splice(0)) r();
  });
}

/** Whether a request (as the server classified it, or as the request log holds it) matches a rule. */
import type { IncomingMessage } from 'node:http';
import type { RequestMatch } from './spec.js';

/** The request fields a {@link RequestMatch} looks at. */
export interface Matchable {
  method: string;
  path: string;
  verb: string;
  group?: string | undefined;
  version?: string | undefined;
  resource?: string | undefined;
  subresource?: string | undefined;
  namespace?: string | undefined;
  name?: string | undefined;
}

function oneOf<T>(want: T | T[] | undefined, got: T | undefined): boolean {
  if (want === undefined) return true;
  if (Array.isArray(want)) return got !== undefined && want.includes(got);
  return want === got;
}

const patternCache = new Map<string, RegExp>();
function pattern(source: string): RegExp {
  let re = patternCache.get(source);
  if (re === undefined) {
    re = new RegExp(source);
    patternCache.set(source, re);
  }
  return re;
}

function asUpper(m: string | string[]): string | string[] {
  return Array.isArray(m) ? m.map((s) => s.toUpperCase()) : m.toUpperCase();
}

/**
 * Whether a request (context or log record) satisfies a {@link RequestMatch}: every given field must match.
 * `query` is the request's query (parsed or raw). `token` is the request's bearer token; `null` means the
 * caller holds no tokens (the request log), and then `match.token` is ignored.
 */
export function matchesRequest(
  m: RequestMatch | undefined,
  r: Matchable,
  query: URLSearchParams | string,
  token?: string | null,
): boolean {
  if (m === undefined) return true;
  if (m.token !== undefined && token !== null && m.token !== token) return false;
  if (m.method !== undefined && !oneOf(asUpper(m.method), r.method.toUpperCase())) return false;
  if (!oneOf<string>(m.verb, r.verb)) return false;
  if (m.path !== undefined && m.path !== r.path) return false;
  if (m.pathPrefix !== undefined && !r.path.startsWith(m.pathPrefix)) return false;
  if (m.pathPattern !== undefined && !pattern(m.pathPattern).test(r.path)) return false;
  if (m.group !== undefined && m.group !== (r.group ?? '')) return false;
  if (m.version !== undefined && m.version !== r.version) return false;
  if (!oneOf(m.resource, r.resource)) return false;
  if (m.subresource !== undefined && m.subresource !== (r.subresource ?? '')) return false;
  if (m.namespace !== undefined && m.namespace !== (r.namespace ?? '')) return false;
  if (m.name !== undefined && m.name !== r.name) return false;
  if (m.hasContinue !== undefined || m.query !== undefined || m.initialList !== undefined) {
    const q = typeof query === 'string' ? new URLSearchParams(query) : query;
    if (m.hasContinue !== undefined && m.hasContinue !== Boolean(q.get('continue'))) return false;
    if (m.initialList !== undefined && m.initialList !== isInitialList(r.verb, q)) return false;
    if (m.query !== undefined) {
      for (const [k, v] of Object.entries(m.query)) if (q.get(k) !== v) return false;
    }
  }
  return true;
}

/**
 * Whether a request reads a collection's state from the start: a list, or a watch with `sendInitialEvents=true`
 * (kube-apiserver's streaming list, which starts with the current objects as ADDED events).
 */
function isInitialList(verb: string, q: URLSearchParams): boolean {
  if (verb === 'list') return true;
  if (verb !== 'watch') return false;
  const v = q.get('sendInitialEvents');
  return v === 'true' || v === '1';
}

/** The request's bearer token, if it carries one (only for matching; never stored in the log). */
export function bearerToken(req: IncomingMessage | undefined): string | undefined {
  const h = req?.headers?.authorization;
  if (typeof h !== 'string') return undefined;
  const m = /^Bearer\s+(.+)$/i.exec(h.trim());
  return m?.[1];
}

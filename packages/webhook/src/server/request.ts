/** How the webhook server reads a request: its target, its media type, its route and the route's metric labels. */
import type { IncomingMessage } from 'node:http';
import type { WebhookReply } from '../review.js';

/** A raw handler for a path: gets the body and the `?timeout=` value, answers status + JSON. Must not throw. */
export interface RawWebhookHandler {
  serve(
    body: Uint8Array,
    serverTimeout: string | null,
    signal: AbortSignal,
  ): WebhookReply | Promise<WebhookReply>;
}

/**
 * The path and `?timeout=` of a request target. The API server sends the configured path as it is, so a plain
 * split serves it; anything else (percent-encoding, dot segments) goes through WHATWG URL parsing as before.
 */
export function target(raw: string): { pathname: string; timeout: string | null } {
  const q = raw.indexOf('?');
  const path = q < 0 ? raw : raw.slice(0, q);
  if (path.startsWith('/') && !/[%\\]|\/\.|\/\//.test(path)) {
    if (q < 0) return { pathname: path, timeout: null };
    return { pathname: path, timeout: new URLSearchParams(raw.slice(q + 1)).get('timeout') };
  }
  const url = new URL(raw, 'https://webhook');
  return { pathname: url.pathname, timeout: url.searchParams.get('timeout') };
}

/** One registered path: its handler and the metric labels made once for it. */
export interface Route {
  readonly handler: RawWebhookHandler;
  readonly labels: { readonly webhook: string };
  readonly byCode: Map<number, { readonly webhook: string; readonly code: string }>;
}

export function codeLabels(
  route: Route,
  status: number,
): { readonly webhook: string; readonly code: string } {
  let l = route.byCode.get(status);
  if (!l) {
    l = { webhook: route.labels.webhook, code: String(status) };
    route.byCode.set(status, l);
  }
  return l;
}

/**
 * The media type of the first `Content-Type` header (what `req.headers['content-type']` holds, without the
 * parameters), read from the raw header list so the request's header object is never built.
 */
export function mediaType(raw: readonly string[]): string {
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    if (name.length === 12 && name.toLowerCase() === 'content-type') {
      const v = raw[i + 1] as string;
      const semi = v.indexOf(';');
      return (semi < 0 ? v : v.slice(0, semi)).trim();
    }
  }
  return '';
}

export function drain(req: IncomingMessage, then: () => void): void {
  req.resume();
  req.on('end', then);
  req.on('error', then);
}

/** HTTP plumbing: content negotiation, body decoding, and writing JSON/YAML/Status responses. */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as yamlParse, stringify as yamlStringify } from 'yaml';
import { ApiStatusError, badRequest, notAcceptable, type Status } from './errors.js';

/** What the client asked to receive. */
export type OutputFormat =
  | { readonly kind: 'json' }
  | { readonly kind: 'yaml' }
  | { readonly kind: 'table' }
  | { readonly kind: 'partial' }
  | { readonly kind: 'aggregated'; readonly version: 'v2' | 'v2beta1' };

interface MediaRange {
  type: string;
  params: Record<string, string>;
}

function parseAccept(accept: string | undefined): MediaRange[] {
  if (!accept) return [{ type: '*/*', params: {} }];
  return accept.split(',').map((part) => {
    const [type, ...ps] = part.split(';').map((s) => s.trim());
    const params: Record<string, string> = {};
    for (const p of ps) {
      const i = p.indexOf('=');
      if (i > 0) params[p.slice(0, i).trim().toLowerCase()] = p.slice(i + 1).trim();
    }
    return { type: (type ?? '').toLowerCase(), params };
  });
}

/**
 * Pick the first media range we can serve (protocol §11.2). `allow` lists the transforms valid for the
 * endpoint. @throws ApiStatusError 406 when nothing is acceptable.
 */
export function negotiate(
  accept: string | undefined,
  allow: { table?: boolean; partial?: boolean; aggregated?: boolean } = {},
): OutputFormat {
  for (const r of parseAccept(accept)) {
    const isJson = r.type === 'application/json';
    if (isJson && r.params.as) {
      const { as, g, v } = r.params;
      if (allow.table && as === 'Table' && g === 'meta.k8s.io' && (v === 'v1' || v === 'v1beta1'))
        return { kind: 'table' };
      if (
        allow.partial &&
        (as === 'PartialObjectMetadata' || as === 'PartialObjectMetadataList') &&
        g === 'meta.k8s.io' &&
        v === 'v1'
      )
        return { kind: 'partial' };
      if (
        allow.aggregated &&
        as === 'APIGroupDiscoveryList' &&
        g === 'apidiscovery.k8s.io' &&
        (v === 'v2' || v === 'v2beta1')
      )
        return { kind: 'aggregated', version: v };
      continue;
    }
    if (isJson || r.type === '*/*' || r.type === 'application/*') return { kind: 'json' };
    if (r.type === 'application/yaml') return { kind: 'yaml' };
  }
  throw notAcceptable();
}

/** Common response headers of a real API server. */
export function baseHeaders(): Record<string, string> {
  return {
    'Audit-Id': randomUUID(),
    'Cache-Control': 'no-cache, private',
    'X-Kubernetes-Pf-Flowschema-Uid': '6d0b3bd0-7a5e-4b5d-9c0e-1b0a4b9a1c01',
    'X-Kubernetes-Pf-Prioritylevel-Uid': '1e2f3a4b-5c6d-4e7f-8a9b-0c1d2e3f4a5b',
  };
}

/** Send a JSON (or YAML) body. `json` may be a pre-encoded string. */
export function sendBody(
  res: ServerResponse,
  code: number,
  body: unknown,
  format: OutputFormat = { kind: 'json' },
  extraHeaders: Record<string, string | string[]> = {},
  contentType?: string,
): void {
  if (res.headersSent || res.destroyed) return;
  let text: string;
  let ct = contentType ?? 'application/json';
  if (format.kind === 'yaml') {
    text = yamlStringify(typeof body === 'string' ? JSON.parse(body) : body);
    ct = 'application/yaml';
  } else text = typeof body === 'string' ? body : JSON.stringify(body);
  const headers: Record<string, string | string[] | number> = {
    ...baseHeaders(),
    ...extraHeaders,
    'Content-Type': ct,
    'Content-Length': Buffer.byteLength(text),
  };
  res.writeHead(code, headers);
  res.end(text);
}

export function sendStatus(res: ServerResponse, err: ApiStatusError): void {
  sendBody(res, err.httpCode, err.status, { kind: 'json' }, { ...err.headers });
}

export function sendText(res: ServerResponse, code: number, text: string): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(code, {
    ...baseHeaders(),
    'Content-Type': 'text/plain; charset=utf-8',
    'X-Content-Type-Options': 'nosniff',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** Read the whole request body (bounded at 32 MiB). */
export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    const b = c as Buffer;
    size += b.length;
    if (size > 32 * 1024 * 1024) throw badRequest('request entity too large');
    chunks.push(b);
  }
  return Buffer.concat(chunks);
}

/** Media type of the request body, lower-cased and without parameters. */
export function contentTypeOf(req: IncomingMessage): string {
  return String(req.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
}

/** Decode a JSON or YAML body into a value. @throws 400 on undecodable input. */
export function decodeBody(buf: Buffer, mediaType: string, what: string): unknown {
  const text = buf.toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    if (
      mediaType === 'application/yaml' ||
      mediaType === 'application/apply-patch+yaml' ||
      mediaType === 'text/yaml'
    )
      return yamlParse(text);
    return JSON.parse(text);
  } catch (e) {
    const msg = e instanceof Error ? e.message.split('\n')[0] : String(e);
    throw badRequest(`${what}: couldn't get version/kind; json parse error: ${msg}`);
  }
}

export function statusFromUnknown(e: unknown): ApiStatusError {
  if (e instanceof ApiStatusError) return e;
  const msg = e instanceof Error ? e.message : String(e);
  const status: Status = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `Internal error occurred: ${msg}`,
    reason: 'InternalError',
    details: { causes: [{ message: msg }] },
    code: 500,
  };
  return new ApiStatusError(status, 500);
}

/**
 * HTTP/2 forbids connection-specific header fields (RFC 9113 §8.2.2); Node's compatibility response throws on
 * `Transfer-Encoding` and friends. The handlers are written for HTTP/1.1 (a watch says `Transfer-Encoding:
 * chunked`), so on an HTTP/2 stream those fields are dropped: framing there is the stream's DATA frames.
 */
const CONNECTION_HEADERS = new Set([
  'transfer-encoding',
  'connection',
  'keep-alive',
  'proxy-connection',
  'upgrade',
]);
export function dropConnectionHeaders(res: ServerResponse): void {
  const writeHead = res.writeHead;
  const setHeader = res.setHeader;
  res.setHeader = function (this: ServerResponse, name: string, value: number | string | readonly string[]) {
    if (CONNECTION_HEADERS.has(name.toLowerCase())) return this;
    return setHeader.call(this, name, value);
  };
  res.writeHead = function (this: ServerResponse, code: number, ...rest: unknown[]) {
    const args = rest.map((a) => {
      if (a === null || typeof a !== 'object' || Array.isArray(a)) return a;
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(a)) if (!CONNECTION_HEADERS.has(k.toLowerCase())) out[k] = v;
      return out;
    });
    return (writeHead as (...a: unknown[]) => ServerResponse).call(this, code, ...args);
  } as typeof res.writeHead;
}

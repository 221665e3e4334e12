import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FaultError, type FaultInjector, type RequestQuery, type Verb } from './faults/index.js';

/** Options of {@link startAdminServer}. */
export interface AdminServerOptions {
  /** TCP port; 0 (default) picks a free one. */
  port?: number;
  /** Loopback address to bind: `127.0.0.1` (default) or `::1`. Anything else is refused. */
  host?: '127.0.0.1' | '::1';
}

/** A running admin endpoint. */
export interface AdminServer {
  /** Base URL, e.g. `http://127.0.0.1:41234` (no trailing slash). */
  readonly url: string;
  /** Stop listening and close every admin connection. */
  close(): Promise<void>;
}

/** Errors from {@link startAdminServer}. `code` is stable. */
export class AdminServerError extends Error {
  readonly code: 'ENONLOOPBACK';
  constructor(code: 'ENONLOOPBACK', message: string) {
    super(message);
    this.name = 'AdminServerError';
    this.code = code;
  }
}

const MAX_BODY_BYTES = 1 << 20;

/**
 * Start the out-of-process fault-injection endpoint for an envtest API server: plain HTTP, loopback only,
 * JSON in and out. Requests from a non-loopback peer, or with a `Host` header that is not a loopback name,
 * get 403 (so a web page cannot reach it by DNS rebinding).
 *
 * Routes (bodies and answers are JSON; rule shapes are those of the typed API, see `FaultSpec`):
 * - `GET /faults` — every rule: `[{id, spec, hits, active}]`
 * - `POST /faults` — add a rule (body: a `FaultSpec`) → 201 `{id, spec, hits, active}`; 400 if invalid
 * - `GET /faults/{id}`, `DELETE /faults/{id}` — one rule (404 if unknown)
 * - `DELETE /faults` — remove every rule → `{cleared: n}`
 * - `POST /compact` (body `{}`) — compact the store now (older RVs then get 410 Expired) →
 *   `{compacted: true, resourceVersion}`
 * - `POST /watch-history` (body `{"limit": n}`) — shrink the watch history window to `n` events
 * - `POST /restart` (body `{"keepState": true|false}`, default true) — drop every connection, maybe lose state
 * - `GET /connections` — `{open, blackholed}`
 * - `GET /requests` — the request log, filtered by query parameters named as `RequestQuery` fields
 *   (`verb`, `resource` and `method` may repeat; `since`/`until` in ms since the epoch) → `[RequestRecord]`
 * - `DELETE /requests` — empty the request log
 * - `DELETE /blackholes` — end every black-holed response
 * - `GET /healthz` — `ok`
 *
 * @param server anything with the API server's `faults` injector (`ApiServer`).
 * @throws AdminServerError `ENONLOOPBACK` when `host` is not a loopback address.
 */
export async function startAdminServer(
  server: { readonly faults: FaultInjector },
  options: AdminServerOptions = {},
): Promise<AdminServer> {
  const host = options.host ?? '127.0.0.1';
  if (host !== '127.0.0.1' && host !== '::1') {
    throw new AdminServerError(
      'ENONLOOPBACK',
      `the admin endpoint binds only to loopback, not ${String(host)}`,
    );
  }
  const http: Server = createServer((req, res) => {
    handle(server.faults, req, res).catch((err: unknown) => {
      if (!res.headersSent) reply(res, 500, errorBody('EINTERNAL', errMessage(err)));
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const addr = http.address() as AddressInfo;
  const url = `http://${host === '::1' ? '[::1]' : host}:${addr.port}`;
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      }),
  };
}

function isLoopbackAddress(addr: string | undefined): boolean {
  if (addr === undefined) return false;
  if (addr === '::1') return true;
  const v4 = addr.startsWith('::ffff:') ? addr.slice('::ffff:'.length) : addr;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

function isLoopbackHost(hostHeader: string | undefined): boolean {
  if (hostHeader === undefined) return true; // HTTP/1.0 without Host: the peer check already passed
  const m = /^(\[[^\]]+\]|[^:]+)(?::\d+)?$/.exec(hostHeader);
  const name = m?.[1]?.toLowerCase();
  return name === 'localhost' || name === '[::1]' || (name !== undefined && isLoopbackAddress(name));
}

async function handle(faults: FaultInjector, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (!isLoopbackAddress(req.socket.remoteAddress) || !isLoopbackHost(req.headers.host)) {
    reply(res, 403, errorBody('EFORBIDDEN', 'the admin endpoint answers loopback clients only'));
    return;
  }
  const url = new URL(req.url ?? '/', 'http://admin.invalid');
  const parts = url.pathname.split('/').filter((p) => p !== '');
  const method = req.method ?? 'GET';
  const route = `${method} /${parts[0] ?? ''}${parts.length > 1 ? '/:id' : ''}`;
  try {
    switch (route) {
      case 'GET /healthz':
        res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok');
        return;
      case 'GET /faults':
        reply(res, 200, faults.list());
        return;
      case 'POST /faults': {
        const rule = faults.add((await readJson(req)) as never);
        reply(res, 201, rule);
        return;
      }
      case 'DELETE /faults': {
        const n = faults.list().length;
        faults.reset();
        reply(res, 200, { cleared: n });
        return;
      }
      case 'GET /faults/:id':
      case 'DELETE /faults/:id': {
        const rule = faults.get(decodeURIComponent(parts[1] ?? ''));
        if (rule === undefined) {
          reply(res, 404, errorBody('ENOTFOUND', `no fault rule ${JSON.stringify(parts[1])}`));
          return;
        }
        if (method === 'DELETE') rule.clear();
        reply(res, 200, rule);
        return;
      }
      case 'POST /compact': {
        await readJson(req);
        reply(res, 200, { compacted: true, ...faults.compact() });
        return;
      }
      case 'POST /watch-history': {
        const body = await readJson(req);
        const limit = isRecord(body) ? body.limit : undefined;
        if (typeof limit !== 'number') {
          reply(res, 400, errorBody('EINVALID', 'body must be {"limit": <non-negative integer>}'));
          return;
        }
        faults.setWatchHistoryLimit(limit);
        reply(res, 200, { limit });
        return;
      }
      case 'POST /restart': {
        const body = await readJson(req);
        const keepState = isRecord(body) && body.keepState !== undefined ? body.keepState : true;
        if (typeof keepState !== 'boolean') {
          reply(res, 400, errorBody('EINVALID', 'keepState must be a boolean'));
          return;
        }
        await faults.restart({ keepState });
        reply(res, 200, { restarted: true, keepState });
        return;
      }
      case 'GET /connections':
        reply(res, 200, { open: faults.openConnections(), blackholed: faults.blackholedCount() });
        return;
      case 'GET /requests':
        reply(res, 200, faults.requests(parseRequestQuery(url.searchParams)));
        return;
      case 'DELETE /requests':
        faults.clearRequests();
        reply(res, 200, { cleared: true });
        return;
      case 'DELETE /blackholes': {
        const n = faults.blackholedCount();
        faults.releaseBlackholes();
        reply(res, 200, { released: n });
        return;
      }
      default:
        reply(res, 404, errorBody('ENOTFOUND', `no admin route ${method} ${url.pathname}`));
    }
  } catch (err) {
    if (err instanceof FaultError) {
      reply(res, err.code === 'ENOTSUPPORTED' ? 501 : 400, errorBody(err.code, err.message));
      return;
    }
    if (err instanceof BodyError) {
      reply(res, err.status, errorBody('EBODY', err.message));
      return;
    }
    throw err;
  }
}

class BodyError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new BodyError(413, 'request body larger than 1 MiB');
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (text === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new BodyError(400, 'request body is not valid JSON');
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function parseRequestQuery(p: URLSearchParams): RequestQuery {
  const q: RequestQuery = {};
  const many = (k: string): string[] | string | undefined => {
    const all = p.getAll(k);
    return all.length === 0 ? undefined : all.length === 1 ? all[0] : all;
  };
  const method = many('method');
  if (method !== undefined) q.method = method;
  const verb = many('verb');
  if (verb !== undefined) q.verb = verb as Verb | Verb[];
  const resource = many('resource');
  if (resource !== undefined) q.resource = resource;
  for (const k of [
    'path',
    'pathPrefix',
    'group',
    'version',
    'subresource',
    'namespace',
    'name',
    'faultId',
  ] as const) {
    const v = p.get(k);
    if (v !== null) q[k] = v;
  }
  for (const k of ['since', 'until', 'status'] as const) {
    const v = p.get(k);
    if (v !== null && Number.isFinite(Number(v))) q[k] = Number(v);
  }
  const hc = p.get('hasContinue');
  if (hc === 'true' || hc === 'false') q.hasContinue = hc === 'true';
  const il = p.get('initialList');
  if (il === 'true' || il === 'false') q.initialList = il === 'true';
  return q;
}

function errorBody(code: string, message: string): { error: { code: string; message: string } } {
  return { error: { code, message } };
}

function errMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(text)),
  });
  res.end(text);
}

/**
 * The fake client's transport: the client's `HttpTransport` contract answered by an in-process envtest API
 * server (`ApiServer.serveInProcess`), so no socket, TLS or port is involved and the requests still go through
 * the server's whole request path (authentication, fault rules, request log, handlers).
 */
import type { HttpRequest, HttpResponse, HttpTransport } from '@kubeloop/client/apiutil';
import { defaultUserAgent } from '@kubeloop/config';
import type { ApiServer } from '@kubeloop/envtest';

/** Options of {@link InProcessTransport}. */
export interface InProcessTransportOptions {
  /** Bearer token sent with every request. @defaultValue the server's admin token */
  readonly token?: string;
  /**
   * `User-Agent` of the requests: the server names the default field manager after it, as kube-apiserver
   * does. @defaultValue `@kubeloop/config`'s `defaultUserAgent()`, what a client from a loaded config sends
   */
  readonly userAgent?: string;
}

/**
 * An `HttpTransport` (the public contract of `@kubeloop/client`) that hands each request to
 * `server.serveInProcess`. It adds what the client's own `Transport` adds on the wire — `User-Agent` and the
 * bearer token — and nothing else: no throttling and no retries, so an injected 429 or 500 reaches the caller
 * on the first try (as controller-runtime's fake client has none either). `close()` ends nothing it does
 * not own: the server is stopped by its owner.
 */
export class InProcessTransport implements HttpTransport {
  readonly #server: ApiServer;
  readonly #headers: Record<string, string>;
  #closed = false;

  constructor(server: ApiServer, options: InProcessTransportOptions = {}) {
    this.#server = server;
    this.#headers = {
      'user-agent': options.userAgent ?? defaultUserAgent(),
      authorization: `Bearer ${options.token ?? server.token}`,
    };
  }

  /** @throws Error `ERR_TRANSPORT_CLOSED` after `close()`; an `ECONNRESET` Error when a fault drops the request. */
  async request(req: HttpRequest): Promise<HttpResponse> {
    if (this.#closed)
      throw Object.assign(new Error('the in-process transport is closed'), { code: 'ERR_TRANSPORT_CLOSED' });
    const headers: Record<string, string> = { ...this.#headers };
    for (const [k, v] of Object.entries(req.headers ?? {})) headers[k.toLowerCase()] = v;
    return this.#server.serveInProcess({
      method: req.method,
      path: req.path,
      headers,
      ...(req.body !== undefined ? { body: req.body } : {}),
      ...(req.signal !== undefined ? { signal: req.signal } : {}),
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
  }
}

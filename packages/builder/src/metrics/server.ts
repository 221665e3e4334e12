import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import { HttpServerRunnable, parseBindAddress, type RequestHandler } from '../healthz/http-server.js';
import { discardLogger, type Logger } from '../logger.js';

/** Options of {@link MetricsServer} (controller-runtime `metricsserver.Options`, plain HTTP). */
export interface MetricsServerOptions {
  /** `host:port`; `"0"` or `""` disables (controller-runtime `BindAddress`). */
  readonly bindAddress: string;
  readonly registry: Registry;
  /** Extra handlers by path (controller-runtime `ExtraHandlers`), e.g. a debug endpoint. */
  readonly extraHandlers?: Readonly<Record<string, RequestHandler>>;
  readonly logger?: Logger;
}

/**
 * Serves `registry` in the Prometheus text format on `/metrics` (controller-runtime's metrics server),
 * on every replica (not only the leader). Run it as an HTTP-server runnable (`start`/`ready`).
 * Not done: HTTPS serving and the TokenReview/SubjectAccessReview filter.
 */
export class MetricsServer {
  readonly #server: HttpServerRunnable | undefined;
  readonly #registry: Registry;
  readonly #extra: Readonly<Record<string, RequestHandler>>;
  readonly #log: Logger;

  /** @throws BindAddressError for a malformed bind address, or an extra handler on `/metrics`. */
  constructor(options: MetricsServerOptions) {
    this.#registry = options.registry;
    this.#extra = options.extraHandlers ?? {};
    this.#log = options.logger ?? discardLogger;
    const bind = parseBindAddress(options.bindAddress, 'metricsBindAddress');
    this.#server = bind
      ? new HttpServerRunnable('metrics', bind, (req, res) => this.handle(req, res), this.#log)
      : undefined;
  }

  get enabled(): boolean {
    return this.#server !== undefined;
  }

  /** `host:port` bound, once listening. */
  address(): string | undefined {
    return this.#server?.address();
  }

  async start(signal: AbortSignal): Promise<void> {
    await this.#server?.start(signal);
  }

  async ready(signal: AbortSignal): Promise<void> {
    await this.#server?.ready(signal);
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://metrics').pathname;
    if (path === '/metrics') {
      let body: string;
      try {
        body = await this.#registry.metrics();
      } catch (err) {
        this.#log.error({ err }, 'collecting metrics failed');
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        res.end('collecting metrics failed\n');
        return;
      }
      res.writeHead(200, { 'content-type': this.#registry.contentType });
      res.end(body);
      return;
    }
    const extra = this.#extra[path];
    if (extra) return extra(req, res);
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
    res.end('not found\n');
  }
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import { OptionalHttpServer, type RequestHandler } from '../healthz/http-server.js';
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
export class MetricsServer extends OptionalHttpServer {
  readonly #registry: Registry;
  readonly #extra: Readonly<Record<string, RequestHandler>>;
  readonly #log: Logger;

  /** @throws BindAddressError for a malformed bind address. */
  constructor(options: MetricsServerOptions) {
    const log = options.logger ?? discardLogger;
    super('metrics', options.bindAddress, 'metrics.bindAddress', log);
    this.#registry = options.registry;
    this.#extra = options.extraHandlers ?? {};
    this.#log = log;
  }

  /** The request handler (usable on another server). */
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

import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { Registry } from 'prom-client';
import { OptionalHttpServer, type RequestHandler } from '../healthz/http-server.js';
import { discardLogger, type Logger } from '../logger.js';
import type { RequestFilter } from './filters.js';

/** A PEM certificate chain and its private key. */
export interface ServingCertificate {
  readonly cert: string;
  readonly key: string;
}

/**
 * Reads `certDir/certName` and `certDir/keyName` (controller-runtime's metrics server with `CertDir`).
 * @throws Error naming the file when one cannot be read.
 */
export async function readServingCertificate(
  certDir: string,
  certName: string,
  keyName: string,
): Promise<ServingCertificate> {
  const read = async (name: string) => {
    const file = join(certDir, name);
    try {
      return await readFile(file, 'utf8');
    } catch (err) {
      throw new Error(
        `metrics server: cannot read ${file} (metrics.secureServing needs a certificate and key)`,
        {
          cause: err,
        },
      );
    }
  };
  return { cert: await read(certName), key: await read(keyName) };
}

/** Options of {@link MetricsServer} (controller-runtime `metricsserver.Options`, plain HTTP). */
export interface MetricsServerOptions {
  /** `host:port`; `"0"` or `""` disables (controller-runtime `BindAddress`). */
  readonly bindAddress: string;
  readonly registry: Registry;
  /** Extra handlers by path (controller-runtime `ExtraHandlers`), e.g. a debug endpoint. */
  readonly extraHandlers?: Readonly<Record<string, RequestHandler>>;
  /** Serve HTTPS with the pair this resolves to (read when the server starts). Absent: plain HTTP. */
  readonly tls?: () => Promise<ServingCertificate>;
  /** Runs before every handler (e.g. {@link withAuthenticationAndAuthorization}). */
  readonly filter?: RequestFilter;
  readonly logger?: Logger;
}

/**
 * Serves `registry` in the Prometheus text format on `/metrics` (controller-runtime's metrics server),
 * on every replica (not only the leader). Run it as an HTTP-server runnable (`start`/`ready`).
 * With `tls` it serves HTTPS; with `filter` (controller-runtime's `FilterProvider`) every request passes it first.
 */
export class MetricsServer extends OptionalHttpServer {
  readonly #registry: Registry;
  readonly #extra: Readonly<Record<string, RequestHandler>>;
  readonly #log: Logger;
  readonly #filter: RequestFilter | undefined;

  /** @throws BindAddressError for a malformed bind address. */
  constructor(options: MetricsServerOptions) {
    const log = options.logger ?? discardLogger;
    super('metrics', options.bindAddress, 'metrics.bindAddress', log, options.tls);
    this.#filter = options.filter;
    this.#registry = options.registry;
    this.#extra = options.extraHandlers ?? {};
    this.#log = log;
  }

  /** The request handler (usable on another server). */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.#filter && !(await this.#filter(req, res))) return;
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

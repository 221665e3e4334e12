/**
 * The webhook server (controller-runtime `webhook.Server`): HTTPS on `bindAddress`, one handler per path,
 * a bounded body, per-path metrics, and a graceful stop that lets in-flight reviews finish.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';
import { connect } from 'node:tls';
import type { Logger } from '@kubeloop/core';
import { discardLogger } from '@kubeloop/core';
import type { Registry } from 'prom-client';
import type { AdmissionWebhook } from '../admission/webhook.js';
import { CertWatcher } from '../certs/certwatcher.js';
import type { CertificateSource } from '../certs/source.js';
import type { ConversionWebhook } from '../conversion/conversion.js';
import { statusBody, type WebhookReply } from '../review.js';
import { type WebhookMetrics, webhookMetrics } from './metrics.js';
import { codeLabels, drain, mediaType, type RawWebhookHandler, type Route, target } from './request.js';

/** kube-apiserver's bound on a request body (3 MiB), which the webhook server applies to reviews too. */
export const DEFAULT_MAX_BODY_BYTES = 3 * 1024 * 1024;

export type { RawWebhookHandler } from './request.js';

/** Options of {@link WebhookServer}. */
export interface WebhookServerOptions {
  /**
   * Where to listen: `":9443"`, `"127.0.0.1:0"`, `"[::1]:9443"`; `"0"` disables the server (controller-runtime's
   * `Port`/`Host`). @defaultValue `":9443"`
   */
  readonly bindAddress?: string;
  /** The serving certificate. @defaultValue a {@link CertWatcher} over `certDir`/`certName` and `certDir`/`keyName` */
  readonly certificateSource?: CertificateSource;
  /** @defaultValue `/tmp/k8s-webhook-server/serving-certs` (controller-runtime's `CertDir`) */
  readonly certDir?: string;
  /** @defaultValue `tls.crt` */
  readonly certName?: string;
  /** @defaultValue `tls.key` */
  readonly keyName?: string;
  /** Largest body accepted, in bytes; a larger one is answered 400. @defaultValue 3 MiB */
  readonly maxBodyBytes?: number;
  /** Registry of the `controller_runtime_webhook_*` metrics; absent: no metrics. */
  readonly metricsRegistry?: Registry;
  readonly logger?: Logger;
  /** How long stopping waits for in-flight reviews, in ms, before it closes their connections. @defaultValue 30000 */
  readonly gracefulShutdownTimeoutMs?: number;
}

/** Parses `":9443"`, `"host:port"`, `"[v6]:port"`. @throws TypeError naming the option. */
export function parseBindAddress(addr: string): { host: string | undefined; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(addr);
  if (!m)
    throw new TypeError(`bindAddress: expected "host:port", ":port" or "0", got ${JSON.stringify(addr)}`);
  const port = Number(m[3]);
  if (port > 65535) throw new TypeError(`bindAddress: port ${port} is out of range`);
  const host = m[1] ?? m[2];
  return { host: host === '' ? undefined : host, port };
}

/**
 * HTTPS webhook server; add it to a manager with `mgr.addHTTPServer(server)` (it then starts before the
 * caches and stops after the controllers) or use {@link getWebhookServer}. Register handlers before or while
 * it runs; each path answers only POST with `Content-Type: application/json`.
 */
export class WebhookServer {
  readonly #handlers = new Map<string, Route>();
  readonly #options: WebhookServerOptions;
  readonly #logger: Logger;
  readonly #maxBody: number;
  readonly #disabled: boolean;
  #server: Server | undefined;
  #address: AddressInfo | undefined;
  #listening: Promise<void>;
  #resolveListening!: () => void;
  #rejectListening!: (e: Error) => void;
  #inFlight = 0;
  #idle: (() => void) | undefined;
  readonly #sockets = new Set<Socket>();
  readonly #stop = new AbortController();
  readonly #metrics: WebhookMetrics | undefined;

  constructor(options: WebhookServerOptions = {}) {
    this.#options = options;
    this.#logger = (options.logger ?? discardLogger).child({ component: 'webhook-server' });
    this.#maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.#metrics = options.metricsRegistry ? webhookMetrics(options.metricsRegistry) : undefined;
    const bind = options.bindAddress ?? ':9443';
    this.#disabled = bind === '0';
    if (!this.#disabled) parseBindAddress(bind);
    this.#listening = new Promise((resolve, reject) => {
      this.#resolveListening = resolve;
      this.#rejectListening = reject;
    });
    this.#listening.catch(() => {});
  }

  /**
   * Serves `handler` at `path` (e.g. `/validate-example-com-v1-widget`). Admission and conversion webhooks are
   * handlers. @throws TypeError when the path does not start with `/` or is taken (controller-runtime panics).
   */
  register(urlPath: string, handler: AdmissionWebhook | ConversionWebhook | RawWebhookHandler): void {
    if (!urlPath.startsWith('/'))
      throw new TypeError(`webhook path must start with "/", got ${JSON.stringify(urlPath)}`);
    if (this.#handlers.has(urlPath)) throw new TypeError(`webhook path ${urlPath} is registered already`);
    this.#handlers.set(urlPath, {
      handler: handler as RawWebhookHandler,
      labels: { webhook: urlPath },
      byCode: new Map(),
    });
    this.#logger.info({ path: urlPath }, 'registering webhook');
  }

  /** The registered paths. */
  paths(): string[] {
    return [...this.#handlers.keys()];
  }

  /** `host:port` once listening (useful with port 0); `undefined` before or when disabled. */
  address(): string | undefined {
    if (!this.#address) return undefined;
    const a = this.#address;
    return a.family === 'IPv6' ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`;
  }

  /** The port once listening. */
  port(): number | undefined {
    return this.#address?.port;
  }

  /** Requests being served now. */
  inFlight(): number {
    return this.#inFlight;
  }

  /** Resolves once the server accepts TLS connections (at once when disabled); rejects if it cannot listen. */
  ready(signal?: AbortSignal): Promise<void> {
    if (this.#disabled) return Promise.resolve();
    if (!signal) return this.#listening;
    return Promise.race([
      this.#listening,
      new Promise<void>((_, reject) => {
        if (signal.aborted) reject(signal.reason);
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      }),
    ]);
  }

  /**
   * A readiness check (`mgr.addReadyzCheck('webhookServerReady', server.startedChecker())`): passes once a
   * TLS handshake with the server succeeds (controller-runtime `StartedChecker`). A disabled server passes.
   */
  startedChecker(): (signal: AbortSignal) => Promise<void> {
    return async () => {
      if (this.#disabled) return;
      const a = this.#address;
      if (!a) throw new Error('webhook server is not serving yet');
      const host = a.address === '::' || a.address === '0.0.0.0' ? '127.0.0.1' : a.address;
      await new Promise<void>((resolve, reject) => {
        const s = connect({ host, port: a.port, rejectUnauthorized: false, timeout: 5000 }, () => {
          s.end();
          resolve();
        });
        s.on('error', (e) =>
          reject(new Error(`webhook server not reachable at ${host}:${a.port}: ${e.message}`)),
        );
        s.on('timeout', () => {
          s.destroy();
          reject(new Error('webhook server TLS handshake timed out'));
        });
      });
    };
  }

  /** Listens until `signal` aborts, then stops accepting, lets in-flight reviews finish and closes. */
  async start(signal: AbortSignal): Promise<void> {
    if (this.#disabled) return;
    if (this.#server) throw new Error('webhook server started twice');
    try {
      await this.#listen(signal);
    } catch (e) {
      this.#rejectListening(e as Error);
      throw e;
    }
    this.#resolveListening();
    if (!signal.aborted)
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    await this.#shutdown();
  }

  async #listen(signal: AbortSignal): Promise<void> {
    const o = this.#options;
    const dir = o.certDir ?? '/tmp/k8s-webhook-server/serving-certs';
    const source =
      o.certificateSource ??
      new CertWatcher({
        certPath: path.join(dir, o.certName ?? 'tls.crt'),
        keyPath: path.join(dir, o.keyName ?? 'tls.key'),
        logger: this.#logger,
      });
    await source.start(this.#stop.signal);
    const pair = source.current();
    const server = createServer({ cert: pair.cert, key: pair.key, minVersion: 'TLSv1.2' }, (req, res) => {
      this.#onRequest(req, res);
    });
    this.#server = server;
    source.onChange((p) => {
      try {
        server.setSecureContext({ cert: p.cert, key: p.key, minVersion: 'TLSv1.2' });
      } catch (e) {
        this.#logger.error(
          { err: (e as Error).message },
          'new serving certificate rejected; keeping the old one',
        );
      }
    });
    server.on('connection', (s: Socket) => {
      this.#sockets.add(s);
      s.on('close', () => this.#sockets.delete(s));
    });
    server.on('tlsClientError', () => {});
    const { host, port } = parseBindAddress(o.bindAddress ?? ':9443');
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host, port, signal }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.#address = server.address() as AddressInfo;
    this.#logger.info({ address: this.address() }, 'webhook server serving');
  }

  async #shutdown(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    if (this.#inFlight > 0) {
      const timeout = this.#options.gracefulShutdownTimeoutMs ?? 30_000;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        new Promise<void>((resolve) => {
          this.#idle = resolve;
        }),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, timeout);
        }),
      ]);
      clearTimeout(timer);
    }
    this.#stop.abort();
    server.closeAllConnections();
    for (const s of this.#sockets) s.destroy();
    await closed;
  }

  #onRequest(req: IncomingMessage, res: ServerResponse): void {
    const { pathname, timeout } = target(req.url ?? '/');
    const route = this.#handlers.get(pathname);
    if (!route) {
      this.#send(res, { status: 404, body: statusBody(404, `no webhook is registered at ${pathname}`) });
      return;
    }
    const label = pathname;
    const metrics = this.#metrics;
    const started = performance.now();
    this.#inFlight++;
    metrics?.requestsInFlight.inc(route.labels);
    let finished = false;
    const finish = (answer: WebhookReply): void => {
      if (finished) return;
      finished = true;
      // a raw handler that answers something other than a reply gets a 500, never a crash
      const reply = isReply(answer) ? answer : badReply(this.#logger, label);
      this.#send(res, reply);
      if (metrics) {
        metrics.requestsTotal.inc(codeLabels(route, reply.status));
        metrics.latencySeconds.observe(route.labels, (performance.now() - started) / 1000);
        metrics.requestsInFlight.dec(route.labels);
      }
      this.#inFlight--;
      if (this.#inFlight === 0 && this.#idle) this.#idle();
    };
    if (req.method !== 'POST') {
      drain(req, () =>
        finish({ status: 405, body: statusBody(405, `method ${req.method} is not allowed: use POST`) }),
      );
      return;
    }
    const ct = mediaType(req.rawHeaders);
    if (ct !== 'application/json') {
      drain(req, () =>
        finish({
          status: 400,
          body: statusBody(400, `contentType=${ct || '(none)'}, expected application/json`),
        }),
      );
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > this.#maxBody) {
        tooLarge = true;
        chunks.length = 0;
        // a peer that keeps sending far past the bound is cut off instead of read to the end
        if (size > 16 * this.#maxBody) req.destroy();
        return;
      }
      chunks.push(c);
    });
    const broken = (): void =>
      finish({ status: 400, body: statusBody(400, 'error reading the request body') });
    req.on('error', broken);
    req.on('close', () => {
      if (!req.complete) broken();
    });
    const failed = (e: unknown): void => {
      this.#logger.error({ err: (e as Error)?.message, path: label }, 'webhook handler threw');
      finish({ status: 500, body: statusBody(500, `webhook ${label} failed`) });
    };
    req.on('end', () => {
      if (tooLarge) {
        finish({
          status: 400,
          body: statusBody(400, `request entity is too large: limit is ${this.#maxBody} bytes`),
        });
        return;
      }
      const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      // one hop from the body's end to the write: the handler is called here, and only a promise it returns is
      // waited for
      let reply: WebhookReply | Promise<WebhookReply>;
      try {
        reply = route.handler.serve(body, timeout, this.#stop.signal);
      } catch (e) {
        failed(e);
        return;
      }
      if (
        reply !== null &&
        typeof reply === 'object' &&
        typeof (reply as Promise<WebhookReply>).then === 'function'
      )
        (reply as Promise<WebhookReply>).then(finish, failed);
      else finish(reply as WebhookReply);
    });
  }

  #send(res: ServerResponse, reply: WebhookReply): void {
    if (res.headersSent || res.destroyed) return;
    const text = JSON.stringify(reply.body);
    // a flat [name, value, …] array: no header object for Node to walk
    res.writeHead(reply.status, [
      'content-type',
      'application/json',
      'content-length',
      String(Buffer.byteLength(text)),
    ]);
    res.end(text);
  }
}

function isReply(r: unknown): r is WebhookReply {
  return r !== null && typeof r === 'object' && typeof (r as WebhookReply).status === 'number';
}

function badReply(logger: Logger, label: string): WebhookReply {
  logger.error({ path: label }, 'webhook handler answered no reply');
  return { status: 500, body: statusBody(500, `webhook ${label} failed`) };
}

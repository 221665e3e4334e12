import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { SecureContextOptions } from 'node:tls';
import { whenAborted } from '../internal-signals.js';
import { discardLogger, type Logger } from '../logger.js';

/** A bind address is malformed. Code `'ERR_BIND_ADDRESS'`. */
export class BindAddressError extends Error {
  readonly code = 'ERR_BIND_ADDRESS' as const;
  override readonly name = 'BindAddressError';
}

/**
 * Parses a Go-style bind address: `":8080"` (all interfaces), `"127.0.0.1:0"` (a free port),
 * `"[::1]:9090"`. `"0"` and `""` mean disabled and give `undefined`.
 * @throws BindAddressError naming the option when the address has no valid port.
 */
export function parseBindAddress(
  address: string,
  option: string,
): { host: string | undefined; port: number } | undefined {
  if (address === '0' || address === '') return undefined;
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(address);
  const port = m ? Number(m[3]) : Number.NaN;
  if (!m || port > 65535) {
    throw new BindAddressError(
      `${option} ${JSON.stringify(address)} is not a bind address: use "host:port", ":port" or "0" to disable`,
    );
  }
  const host = m[1] ?? m[2];
  return { host: host ? host : undefined, port };
}

/** A request handler; it may answer asynchronously. */
export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/**
 * A small HTTP server run by the manager as an HTTP-server runnable: `start` listens and serves until the
 * signal aborts, then closes (idle keep-alive connections at once, busy ones after their response);
 * `ready` resolves once it listens. A failure to listen (port taken) rejects `start`.
 * @internal
 */
export class HttpServerRunnable {
  readonly #server: Server;
  readonly #tls: (() => Promise<SecureContextOptions>) | undefined;
  readonly #sockets = new Set<Socket>();
  readonly #log: Logger;
  #listening: Promise<void> | undefined;
  #resolveListening!: () => void;
  #rejectListening!: (e: unknown) => void;

  constructor(
    readonly name: string,
    private readonly bind: { host: string | undefined; port: number },
    handler: RequestHandler,
    logger: Logger = discardLogger,
    tls?: () => Promise<SecureContextOptions>,
  ) {
    this.#log = logger;
    this.#tls = tls;
    const serve = (req: IncomingMessage, res: ServerResponse) => {
      Promise.resolve()
        .then(() => handler(req, res))
        .catch((err: unknown) => {
          this.#log.error({ err, server: name }, 'HTTP handler failed');
          if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
          res.end('internal error\n');
        });
    };
    // HTTPS gets its certificate when it starts (setSecureContext), so files mounted later are read then.
    this.#server = tls ? createHttpsServer(serve) : createServer(serve);
    this.#server.keepAliveTimeout = 5000;
    this.#server.on('connection', (s: Socket) => {
      this.#sockets.add(s);
      s.once('close', () => this.#sockets.delete(s));
    });
    this.#listening = new Promise<void>((resolve, reject) => {
      this.#resolveListening = resolve;
      this.#rejectListening = reject;
    });
    this.#listening.catch(() => undefined);
  }

  /** `host:port` actually bound (useful with port 0), once listening. */
  address(): string | undefined {
    const a = this.#server.address() as AddressInfo | null;
    if (!a) return undefined;
    return a.family === 'IPv6' ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`;
  }

  async start(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    if (this.#tls) {
      try {
        (this.#server as HttpsServer).setSecureContext(await this.#tls());
      } catch (err) {
        this.#rejectListening(err);
        throw err;
      }
    }
    await new Promise<void>((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      this.#server.once('error', onError);
      this.#server.listen(this.bind.port, this.bind.host, () => {
        this.#server.off('error', onError);
        resolve();
      });
    }).catch((err: unknown) => {
      this.#rejectListening(err);
      throw err;
    });
    this.#log.info({ server: this.name, address: this.address() }, 'serving');
    this.#resolveListening();
    await whenAborted(signal).promise;
    await new Promise<void>((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeIdleConnections();
      for (const s of this.#sockets)
        if (!(s as Socket & { _httpMessage?: unknown })._httpMessage) s.destroy();
    });
  }

  /** Resolves once listening; rejects when listening failed. */
  async ready(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    const abort = whenAborted(signal);
    try {
      await Promise.race([this.#listening, abort.promise]);
    } finally {
      abort.off();
    }
  }
}

/**
 * A server that runs only when its bind address is given (`"0"` or `""` disable it): what the probe and
 * metrics servers share. `start`/`ready` make it an HTTP-server runnable; subclasses answer in `handle`.
 * @internal
 */
export abstract class OptionalHttpServer {
  readonly #server: HttpServerRunnable | undefined;

  /** @throws BindAddressError naming `option` for a malformed bind address. */
  protected constructor(
    name: string,
    bindAddress: string,
    option: string,
    log: Logger,
    tls?: () => Promise<SecureContextOptions>,
  ) {
    const bind = parseBindAddress(bindAddress, option);
    this.#server = bind
      ? new HttpServerRunnable(name, bind, (req, res) => this.handle(req, res), log, tls)
      : undefined;
  }

  /** Whether a bind address was given (else `start` returns at once). */
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

  /** The request handler (usable on another server). */
  abstract handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

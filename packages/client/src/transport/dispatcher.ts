import type { Socket } from 'node:net';
import type { RestConfig } from '@kubeloop/config';
import { onAbort } from '@kubeloop/core';
import {
  Agent,
  buildConnector,
  Client,
  type Dispatcher,
  EnvHttpProxyAgent,
  ProxyAgent,
  Socks5ProxyAgent,
} from 'undici';
import { TransportError } from './errors.js';
import { gunzipInterceptor } from './gunzip-interceptor.js';
import { streamErrorInterceptor } from './stream-errors.js';

/** PEM material of one pool (it changes when TLS files are re-read or an exec certificate rotates). */
export interface PemSet {
  readonly caData?: string;
  readonly certData?: string;
  readonly keyData?: string;
}

/** One connection pool to the API server. */
export interface Pool {
  /** Sends one request through the pool (interceptors included). */
  request(opts: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData>;
  /** Closes (in-flight requests finish) or, with `force`, destroys every connection. */
  close(force?: boolean): Promise<void>;
  /** The negotiated protocol: `'h2'` multiplexes requests and watches over as few connections as possible. */
  readonly protocol: 'h2' | 'http/1.1';
  /** Connections (h2) or agents (HTTP/1.1) opened so far. */
  readonly size: () => number;
}

/** Streams per h2 connection we use at most, even when the server's SETTINGS allow more. */
export const H2_STREAMS_PER_CONNECTION = 250;

/**
 * Streams per h2 connection assumed until the server's SETTINGS arrive, and when they cannot be read: 100, Go's
 * `initialMaxConcurrentStreams` and what kube-apiserver advertises unless `--http2-max-streams-per-connection`
 * is set (k8s.io/apiserver `server/secure_serving.go`).
 */
export const H2_ASSUMED_PEER_STREAMS = 100;

/** undici keeps the peer's SETTINGS_MAX_CONCURRENT_STREAMS on the `Client` under this symbol (no public getter). */
let peerStreamsSymbol: symbol | null | undefined;

/**
 * The streams one h2 connection may carry at once: the server's advertised SETTINGS_MAX_CONCURRENT_STREAMS as
 * undici last saw it ({@link H2_ASSUMED_PEER_STREAMS} before the SETTINGS frame or when undici does not expose
 * it), capped at {@link H2_STREAMS_PER_CONNECTION}. More streams than the server allows are held by the h2
 * session until others close, which for watches is minutes. @internal
 */
export function h2StreamLimit(client: Client): number {
  if (peerStreamsSymbol === undefined) {
    peerStreamsSymbol =
      Object.getOwnPropertySymbols(client).find((s) => s.description === 'max concurrent streams') ?? null;
  }
  const advertised = peerStreamsSymbol
    ? (client as unknown as Record<symbol, unknown>)[peerStreamsSymbol]
    : undefined;
  const peer =
    typeof advertised === 'number' && Number.isInteger(advertised) && advertised >= 0
      ? advertised
      : H2_ASSUMED_PEER_STREAMS;
  return Math.min(peer, H2_STREAMS_PER_CONNECTION);
}

/** Settings of {@link createPool}. */
export interface PoolSpec {
  readonly config: RestConfig;
  readonly pem: PemSet;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Offer h2 by ALPN (direct https only; proxies and plain http stay on HTTP/1.1). */
  readonly http2: boolean;
  /** h2 PING interval in ms (connection liveness); 0 disables. */
  readonly pingIntervalMs: number;
}

function proxyEnv(env: Readonly<Record<string, string | undefined>>) {
  return {
    httpsProxy: env.https_proxy ?? env.HTTPS_PROXY,
    httpProxy: env.http_proxy ?? env.HTTP_PROXY,
    noProxy: env.no_proxy ?? env.NO_PROXY,
  };
}

function tlsOptions(config: RestConfig, pem: PemSet) {
  const t = config.tlsClientConfig;
  return {
    ...(pem.caData ? { ca: pem.caData } : {}),
    ...(pem.certData && pem.keyData ? { cert: pem.certData, key: pem.keyData } : {}),
    ...(t.serverName ? { servername: t.serverName } : {}),
    rejectUnauthorized: !t.insecure,
  };
}

/** Whether the pool for this spec could speak h2 (direct https, no proxy, not switched off). @internal */
export function mayUseHttp2(spec: PoolSpec): boolean {
  if (!spec.http2 || spec.env.DISABLE_HTTP2) return false;
  if (new URL(spec.config.host).protocol !== 'https:' || spec.config.proxyUrl) return false;
  const { httpsProxy, httpProxy } = proxyEnv(spec.env);
  return !httpsProxy && !httpProxy;
}

function composed(root: Dispatcher, config: RestConfig): Dispatcher {
  const withErrors = root.compose(streamErrorInterceptor());
  return config.disableCompression ? withErrors : withErrors.compose(gunzipInterceptor());
}

/**
 * Makes `close(true)` destroy every request still in flight through `pool`, whatever the dispatcher did
 * before: undici's `Agent` (and the proxy agents) forget their connections once a graceful `close()` has
 * started, so a later `destroy()` found nothing and a held request outlived a forced shutdown. Each request
 * runs under a signal of the pool's (linked to the caller's), kept until its body closes; a forced close
 * aborts them all with a `ConnectionFailed` {@link TransportError}, then destroys the dispatcher.
 */
function forceable(pool: Pool): Pool {
  const inFlight = new Set<() => void>();
  return {
    protocol: pool.protocol,
    size: pool.size,
    async request(opts) {
      const parent = (opts.signal ?? undefined) as AbortSignal | undefined;
      const ac = new AbortController();
      // Through the per-signal fan-out: many requests on one long-lived caller signal add one listener to it.
      const unsubscribe = parent ? onAbort(parent, () => ac.abort(parent.reason)) : undefined;
      const kill = () =>
        ac.abort(
          new TransportError(
            'ConnectionFailed',
            `${opts.method} ${String(opts.path).split('?')[0]}: the transport was closed with force`,
          ),
        );
      inFlight.add(kill);
      const done = () => {
        inFlight.delete(kill);
        unsubscribe?.();
      };
      return whileBodyOpen(pool.request({ ...opts, signal: ac.signal }), done);
    },
    async close(force) {
      if (force) for (const kill of [...inFlight]) kill();
      await pool.close(force);
    },
  };
}

function singleRootPool(root: Dispatcher, config: RestConfig): Pool {
  const dispatcher = composed(root, config);
  return forceable({
    protocol: 'http/1.1',
    request: (opts) => dispatcher.request(opts),
    close: (force) => (force ? root.destroy() : root.close()),
    size: () => 1,
  });
}

/**
 * h2 connections, each an undici `Client` carrying at most what the server's SETTINGS_MAX_CONCURRENT_STREAMS
 * allows (capped at {@link H2_STREAMS_PER_CONNECTION}; see {@link h2StreamLimit}); a request finds the first
 * connection with a free stream, and a new connection is opened only when all are full (Go's HTTP/2 transport
 * does the same when `StrictMaxConcurrentStreams` is off, its default), so a process with more watches than
 * one connection allows never queues a request behind them. A stream is counted until its body closes.
 * A DELETE with a body (DeleteOptions: propagationPolicy, preconditions, ...) goes through `http1()`, an
 * HTTP/1.1 pool made on first use: undici's h2 client cannot send a body on a DELETE (it drops the length of a
 * method it deems body-less, then fails its own "buffer body must have content length" check).
 */
function h2Pool(
  origin: string,
  config: RestConfig,
  connect: buildConnector.connector,
  pingIntervalMs: number,
  http1: () => Pool,
): Pool {
  const conns: Array<{ root: Client; dispatcher: Dispatcher; active: number }> = [];
  let fallback: Pool | undefined;
  const open = () => {
    // The peer's limit assumed until this connection's SETTINGS arrive (undici then keeps the advertised
    // value): what the server told an earlier connection, else Go's initial 100.
    const known = conns.find((c) => !c.root.destroyed);
    const root = new Client(origin, {
      connect,
      allowH2: true,
      maxConcurrentStreams: Math.max(1, known ? h2StreamLimit(known.root) : H2_ASSUMED_PEER_STREAMS),
      // undici runs one request at a time per client unless told otherwise, h2 included.
      pipelining: H2_STREAMS_PER_CONNECTION,
      keepAliveTimeout: 30_000,
      pingInterval: Math.max(0, pingIntervalMs),
    });
    const conn = { root, dispatcher: composed(root, config), active: 0 };
    conns.push(conn);
    return conn;
  };
  return forceable({
    protocol: 'h2',
    size: () => conns.length,
    async request(opts) {
      if (opts.method === 'DELETE' && opts.body !== undefined && opts.body !== null) {
        fallback ??= http1();
        return fallback.request(opts);
      }
      const conn =
        conns.find((c) => c.active < h2StreamLimit(c.root) && !c.root.closed && !c.root.destroyed) ?? open();
      conn.active++;
      let released = false;
      const release = () => {
        if (!released) {
          released = true;
          conn.active--;
        }
      };
      // undici's h2 client holds a request it deems non-idempotent (its default for everything but GET/HEAD)
      // until no other stream of the connection is running, and every request queued behind it too: with a
      // watch open that is forever, so no write was ever sent. h2 streams are independent and undici never
      // re-sends a request, so the flag only decides that wait.
      return whileBodyOpen(conn.dispatcher.request({ ...opts, idempotent: true }), release);
    },
    async close(force) {
      await Promise.all([
        ...conns.map((c) => (force ? c.root.destroy() : c.root.close()).catch(() => undefined)),
        fallback?.close(force).catch(() => undefined),
      ]);
    },
  });
}

/**
 * An HTTP/1.1 pool (client-go's `http.Transport` when h2 is off): keep-alive 30 s, no cap on connections;
 * `proxyUrl` (http, https or socks5) wins over `HTTPS_PROXY`/`HTTP_PROXY`/`NO_PROXY`.
 * @internal
 */
export function createHttp1Pool(spec: PoolSpec): Pool {
  const { config } = spec;
  const tls = tlsOptions(config, spec.pem);
  // No cap on connections: on HTTP/1.1 every open watch holds one, and a cap (it was 25) made the 26th watch,
  // and every request after it, wait forever. Go's http.Transport has no per-host cap either (client-go).
  const common = { keepAliveTimeout: 30_000 };
  let root: Dispatcher;
  if (config.proxyUrl) {
    const proxy = new URL(config.proxyUrl);
    if (proxy.protocol === 'socks5:') {
      root = new Socks5ProxyAgent(config.proxyUrl, { requestTls: tls } as ConstructorParameters<
        typeof Socks5ProxyAgent
      >[1]);
    } else {
      root = new ProxyAgent({ ...common, uri: config.proxyUrl, requestTls: tls });
    }
  } else {
    const { httpsProxy, httpProxy, noProxy } = proxyEnv(spec.env);
    if (httpsProxy || httpProxy) {
      root = new EnvHttpProxyAgent({
        ...common,
        connect: tls,
        requestTls: tls,
        ...(httpProxy ? { httpProxy } : {}),
        ...(httpsProxy ? { httpsProxy } : {}),
        noProxy: noProxy ?? '',
      });
    } else {
      root = new Agent({ ...common, connect: tls });
    }
  }
  return singleRootPool(root, config);
}

/**
 * The pool for `spec`. When h2 may be used, one TLS connection is opened offering `h2, http/1.1` (ALPN);
 * if the server picks h2, that very connection becomes a single undici `Client` that multiplexes every
 * request and watch (client-go shares one HTTP/2 connection per config), with PINGs every
 * `pingIntervalMs` as liveness check. Otherwise (or for a proxy, plain http, `http2: false`,
 * `DISABLE_HTTP2` set as in client-go) an HTTP/1.1 pool.
 * @throws the connection error of the ALPN probe (the caller maps it to a TransportError).
 */
export async function createPool(spec: PoolSpec): Promise<Pool> {
  if (!mayUseHttp2(spec)) return createHttp1Pool(spec);
  const url = new URL(spec.config.host);
  const tls = tlsOptions(spec.config, spec.pem);
  const connector = buildConnector({ ...tls, allowH2: true, keepAlive: true });
  const socket = await new Promise<Socket>((resolve, reject) => {
    connector(
      {
        hostname: url.hostname,
        host: url.host,
        protocol: url.protocol,
        port: url.port || '443',
        ...(tls.servername ? { servername: tls.servername } : {}),
      },
      (err, s) => (err ? reject(err) : resolve(s as Socket)),
    );
  });
  if ((socket as Socket & { alpnProtocol?: string | false }).alpnProtocol !== 'h2') {
    // undici's HTTP/1.1 client does not take over a probed socket: one short extra handshake per pool.
    socket.destroy();
    return createHttp1Pool(spec);
  }
  // The probed connection serves the first request; later (re)connections use the same connector.
  let first: Socket | undefined = socket;
  const connect: buildConnector.connector = (opts, cb) => {
    const s = first;
    first = undefined;
    if (s && !s.destroyed) cb(null, s);
    else connector(opts, cb);
  };
  return h2Pool(url.origin, spec.config, connect, spec.pingIntervalMs, () => createHttp1Pool(spec));
}

/**
 * The answer of `request`, with `release` called once its body has closed (at once when it already has), or
 * when the request fails: what a pool holds for a request (a stream slot, an abort hook) lives exactly as long.
 */
async function whileBodyOpen(
  request: Promise<Dispatcher.ResponseData>,
  release: () => void,
): Promise<Dispatcher.ResponseData> {
  try {
    const res = await request;
    if (res.body.closed || res.body.destroyed) release();
    else res.body.once('close', release);
    return res;
  } catch (e) {
    release();
    throw e;
  }
}

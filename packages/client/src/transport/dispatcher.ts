import type { Socket } from 'node:net';
import type { RestConfig } from '@kubeloop/config';
import {
  Agent,
  buildConnector,
  Client,
  type Dispatcher,
  EnvHttpProxyAgent,
  ProxyAgent,
  Socks5ProxyAgent,
} from 'undici';
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
  /** What requests are sent through (the root with the interceptors). */
  readonly dispatcher: Dispatcher;
  /** What is closed or destroyed. */
  readonly root: Dispatcher;
  /** The negotiated protocol: `'h2'` multiplexes every request and watch over one connection. */
  readonly protocol: 'h2' | 'http/1.1';
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

function finish(root: Dispatcher, config: RestConfig, protocol: Pool['protocol']): Pool {
  const withErrors = root.compose(streamErrorInterceptor());
  return {
    root,
    protocol,
    dispatcher: config.disableCompression ? withErrors : withErrors.compose(gunzipInterceptor()),
  };
}

/**
 * An HTTP/1.1 pool (client-go's `http.Transport` when h2 is off): keep-alive 30 s, up to 25 connections;
 * `proxyUrl` (http, https or socks5) wins over `HTTPS_PROXY`/`HTTP_PROXY`/`NO_PROXY`.
 * @internal
 */
export function createHttp1Pool(spec: PoolSpec): Pool {
  const { config } = spec;
  const tls = tlsOptions(config, spec.pem);
  const common = { keepAliveTimeout: 30_000, connections: 25 };
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
  return finish(root, config, 'http/1.1');
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
  const root = new Client(url.origin, {
    connect,
    allowH2: true,
    maxConcurrentStreams: 1000,
    keepAliveTimeout: 30_000,
    ...(spec.pingIntervalMs > 0 ? { pingInterval: spec.pingIntervalMs } : { pingInterval: 0 }),
  });
  return finish(root, spec.config, 'h2');
}

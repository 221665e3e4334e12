/** The API server's socket: one HTTPS port serving HTTP/2 and HTTP/1.1, with its open connections counted. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createSecureServer, type Http2SecureServer } from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import { dropConnectionHeaders } from './http.js';

/** What {@link listenHttps} needs. */
export interface HttpsListenerOptions {
  readonly host: string;
  /** 0: any free port. */
  readonly port: number;
  readonly keyPem: string;
  readonly certPem: string;
  /** CA bundle client certificates are checked against (they are optional: `rejectUnauthorized: false`). */
  readonly caPem: string;
  /** Gets every accepted TCP connection; a connection leaves it when it closes. */
  readonly sockets: Set<Socket>;
  /** Called for every request, with the HTTP/1 API also on HTTP/2 requests (the compatibility objects). */
  readonly onRequest: (req: IncomingMessage, res: ServerResponse) => void;
}

/**
 * Serves HTTP/2 (ALPN `h2`, as kube-apiserver does, so kubectl and Go clients multiplex streams on one
 * connection) and HTTP/1.1 on the same port (`allowHTTP1`), for clients that do not offer h2. Resolves once
 * listening, with the bound port. @throws the listen error (port in use, bad host).
 */
export async function listenHttps(
  options: HttpsListenerOptions,
): Promise<{ server: Http2SecureServer; port: number }> {
  const server = createSecureServer(
    {
      key: options.keyPem,
      cert: options.certPem,
      ca: [options.caPem],
      requestCert: true,
      rejectUnauthorized: false,
      allowHTTP1: true,
      // kube-apiserver advertises 100 concurrent streams per HTTP/2 connection unless
      // --http2-max-streams-per-connection is set (k8s.io/apiserver server/secure_serving.go)
      settings: { maxConcurrentStreams: 100 },
    },
    (req, res) => {
      // The HTTP/2 compatibility objects offer the IncomingMessage/ServerResponse API the handlers use.
      const response = res as unknown as ServerResponse;
      if (req.httpVersionMajor === 2) dropConnectionHeaders(response);
      options.onRequest(req as unknown as IncomingMessage, response);
    },
  );
  // HTTP/1.1 connections of an allowHTTP1 server take these from the server; watches are long requests.
  const h1 = server as unknown as {
    keepAliveTimeout: number;
    headersTimeout: number;
    requestTimeout: number;
  };
  h1.keepAliveTimeout = 65_000;
  h1.headersTimeout = 70_000;
  h1.requestTimeout = 0;
  server.on('connection', (s: Socket) => {
    options.sockets.add(s);
    s.on('close', () => options.sockets.delete(s));
  });
  server.on('session', (session) => session.on('error', () => session.destroy()));
  server.on('clientError', (_err, socket) => socket.destroy());
  server.on('sessionError', () => undefined);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return { server, port: (server.address() as AddressInfo).port };
}

/** Stops accepting, destroys every open connection (`sockets`) and resolves once the server has closed. */
export async function closeHttps(server: Http2SecureServer, sockets: ReadonlySet<Socket>): Promise<void> {
  const closed = new Promise<void>((r) => server.close(() => r()));
  for (const s of sockets) s.destroy();
  await closed;
}

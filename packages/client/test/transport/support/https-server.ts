// A small node:https (or http) server on 127.0.0.1:0 for transport tests, with a scripted handler.
import type { IncomingMessage, ServerResponse } from 'node:http';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, seen: SeenRequest, index: number) => void;

export interface TestServer {
  readonly url: string;
  readonly seen: SeenRequest[];
  handler: Handler;
  close(): Promise<void>;
}

export async function startTestServer(
  tls: { certPem: string; keyPem: string; caPem?: string; requestCert?: boolean } | undefined,
  handler: Handler,
): Promise<TestServer> {
  const seen: SeenRequest[] = [];
  const state = { handler };
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const s = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      seen.push(s);
      state.handler(req, res, s, seen.length - 1);
    });
  };
  const server = tls
    ? https.createServer(
        {
          cert: tls.certPem,
          key: tls.keyPem,
          ...(tls.caPem ? { ca: tls.caPem } : {}),
          ...(tls.requestCert ? { requestCert: true, rejectUnauthorized: false } : {}),
        },
        listener,
      )
    : http.createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    seen,
    get handler() {
      return state.handler;
    },
    set handler(h: Handler) {
      state.handler = h;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// On HTTP/2 the pool must respect the server's SETTINGS_MAX_CONCURRENT_STREAMS. kube-apiserver
// advertises 100 unless --http2-max-streams-per-connection is set (k8s.io/apiserver server/secure_serving.go,
// since the CVE-2023-44487 fix); the pool filled each connection up to 250 streams, so with more than 100 open
// watches the next watch and every request behind it were held by the h2 session and never answered. Go's
// HTTP/2 transport opens another connection once the server's limit is reached.
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { Transport } from '../../src/transport/index.js';
import { createTestCa, type Issued, type TestCa } from './support/pki.js';

let ca: TestCa;
let leaf: Issued;

beforeAll(async () => {
  ca = await createTestCa();
  leaf = await ca.issue({ ips: ['127.0.0.1'] });
});

interface H2Server {
  readonly url: string;
  connections(): number;
  /** Most streams open at once on one session. */
  peakStreamsPerSession(): number;
  close(): Promise<void>;
}

/** An h2 server advertising `maxConcurrentStreams`; watches stay open after one bookmark line. */
async function startH2(maxConcurrentStreams: number, http1Requests?: string[]): Promise<H2Server> {
  let connections = 0;
  let peak = 0;
  const sessions: http2.ServerHttp2Session[] = [];
  const open = new Map<http2.ServerHttp2Session, number>();
  const srv = http2.createSecureServer({
    cert: leaf.certPem,
    key: leaf.keyPem,
    settings: { maxConcurrentStreams },
    allowHTTP1: http1Requests !== undefined,
  });
  // HTTP/1.1 requests (allowHTTP1) arrive here only: recorded as "METHOD body".
  srv.on('request', (req, res) => {
    if (req.httpVersionMajor === 2) return;
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      http1Requests?.push(`${req.method} ${body}`);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  srv.on('connection', () => connections++);
  srv.on('session', (s) => sessions.push(s));
  srv.on('stream', (stream, headers) => {
    const session = stream.session as http2.ServerHttp2Session;
    const n = (open.get(session) ?? 0) + 1;
    open.set(session, n);
    peak = Math.max(peak, n);
    stream.on('close', () => open.set(session, (open.get(session) ?? 1) - 1));
    stream.respond({ ':status': 200, 'content-type': 'application/json' });
    if (String(headers[':path']).includes('watch=true')) {
      stream.write('{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"1"}}}\n');
      return; // held open
    }
    stream.end('{}');
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    connections: () => connections,
    peakStreamsPerSession: () => peak,
    close: () =>
      new Promise<void>((resolve) => {
        srv.close(() => resolve());
        for (const s of sessions) s.destroy();
      }),
  };
}

function h2Transport(host: string): Transport {
  return new Transport(
    {
      host,
      tlsClientConfig: { caData: ca.certPem },
      qps: -1,
      burst: 0,
      timeoutMs: 0,
      userAgent: 'h2-peer-streams-test',
    },
    { http2: true },
  );
}

/** `count` open watches (namespaces n0, n1, ...), ended by `signal`. */
function openWatches(t: Transport, count: number, signal: AbortSignal) {
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      t.request({ method: 'GET', path: `/api/v1/namespaces/n${i}/pods?watch=true`, stream: true, signal }),
    ),
  );
}

/** Runs `test` against a fresh h2 server and a transport to it; after it, ends the watches and closes both. */
async function withH2(
  maxConcurrentStreams: number,
  test: (t: Transport, h2: H2Server, signal: AbortSignal) => Promise<void>,
  http1Requests?: string[],
): Promise<void> {
  const h2 = await startH2(maxConcurrentStreams, http1Requests);
  const t = h2Transport(h2.url);
  const ac = new AbortController();
  try {
    await test(t, h2, ac.signal);
  } finally {
    ac.abort();
    await t.close({ force: true });
    await h2.close();
  }
}

describe('HTTP/2 pool and the server SETTINGS_MAX_CONCURRENT_STREAMS', () => {
  it.each([
    [100, 130],
    [10, 25],
  ])(
    'a server allowing %i streams per connection: %i open watches and a GET are all answered',
    (max, watches) =>
      withH2(max, async (t, h2, signal) => {
        // A first request settles the connection (and the server's SETTINGS) before the burst.
        await (await t.request({ method: 'GET', path: '/api' })).body.dump();
        const opened = await openWatches(t, watches, signal);
        expect(opened.every((w) => w.status === 200)).toBe(true);
        const res = await t.request({ method: 'GET', path: '/api' });
        expect(await res.body.text()).toBe('{}');
        expect(h2.peakStreamsPerSession()).toBeLessThanOrEqual(max);
        expect(h2.connections()).toBe(Math.ceil((watches + 1) / max));
      }),
  );
  it('a cold burst past a small server limit before its SETTINGS arrive: refused streams are retried, all answered', () =>
    withH2(10, async (t, h2, signal) => {
      // No first request: the first connection assumes 100 streams until the server's SETTINGS (10) arrive, so
      // the server refuses (REFUSED_STREAM) what came past its limit; refused means unprocessed, so retried.
      const opened = await openWatches(t, 25, signal);
      expect(opened.every((w) => w.status === 200)).toBe(true);
      const res = await t.request({ method: 'POST', path: '/api/v1/namespaces/n0/configmaps', body: '{}' });
      expect(await res.body.text()).toBe('{}');
      expect(h2.peakStreamsPerSession()).toBeLessThanOrEqual(10);
    }));
  it('writes (POST, PUT, PATCH, DELETE) are sent while watches hold streams of the same connection', () =>
    withH2(100, async (t, h2, signal) => {
      await (await t.request({ method: 'GET', path: '/api' })).body.dump();
      const watches = await openWatches(t, 3, signal);
      expect(watches.every((w) => w.status === 200)).toBe(true);
      // undici held a non-idempotent request (its default for all but GET/HEAD) until no stream was running.
      for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'GET'] as const) {
        const body = method === 'GET' || method === 'DELETE' ? {} : { body: '{}' };
        const res = await t.request({ method, path: '/api/v1/namespaces/n0/configmaps/x', ...body });
        expect(await res.body.text()).toBe('{}');
      }
      expect(h2.connections()).toBe(1);
    }));
  it('a DELETE with DeleteOptions in its body is sent (over HTTP/1.1: undici h2 cannot send a DELETE body)', async () => {
    const http1: string[] = [];
    await withH2(
      100,
      async (t, _h2, signal) => {
        await (await t.request({ method: 'GET', path: '/api' })).body.dump();
        const [w] = await openWatches(t, 1, signal);
        expect(w?.status).toBe(200);
        const body = '{"propagationPolicy":"Foreground"}';
        const res = await t.request({
          method: 'DELETE',
          path: '/api/v1/namespaces/n/configmaps/x',
          body,
          headers: { 'content-type': 'application/json' },
        });
        expect(await res.body.text()).toBe('{}');
        expect(http1).toEqual([`DELETE ${body}`]);
        // Without a body a DELETE stays on h2.
        await (await t.request({ method: 'DELETE', path: '/api/v1/namespaces/n/configmaps/y' })).body.dump();
        expect(http1).toHaveLength(1);
      },
      http1,
    );
  });
});

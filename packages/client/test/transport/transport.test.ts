import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { constants, createGzip, gzipSync } from 'node:zlib';
import type { RestConfig } from '@kubeloop/config';
import type { Clock } from '@kubeloop/core';
import { FakeClock } from '@kubeloop/core/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  parseWarningHeaders,
  type RateLimiter,
  Transport,
  TransportError,
} from '../../src/transport/index.js';
import { startTestServer, type TestServer } from './support/https-server.js';
import { createTestCa, type TestCa } from './support/pki.js';

/** Records every timer and fires it on the next microtask, so retry waits are asserted, not waited. */
class RecordingClock implements Clock {
  sleeps: number[] = [];
  now(): number {
    return performance.now();
  }
  setTimer(fn: () => void, ms: number) {
    this.sleeps.push(ms);
    queueMicrotask(fn);
    return { cancel: () => {} };
  }
}

/** A limiter that counts how many tokens were taken. */
class CountingLimiter implements RateLimiter {
  taken = 0;
  async wait(): Promise<void> {
    this.taken++;
  }
  tryAccept(): boolean {
    this.taken++;
    return true;
  }
}

let ca: TestCa;
let server: TestServer;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kubeloop-transport-'));

function config(over: Partial<RestConfig> = {}): RestConfig {
  return {
    host: server.url,
    tlsClientConfig: { caData: ca.certPem },
    qps: -1,
    burst: 0,
    timeoutMs: 0,
    userAgent: 'transport-test/v1 (linux/x64) kubeloop/0.1.0',
    ...over,
  };
}

beforeAll(async () => {
  ca = await createTestCa();
  const leaf = await ca.issue({ ips: ['127.0.0.1'] });
  server = await startTestServer(leaf, (_req, res) => res.end('{}'));
});
afterAll(async () => {
  await server.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('Transport', () => {
  it('sends the bearer token, User-Agent and Accept-Encoding, keeps the host path prefix and decodes gzip', async () => {
    server.handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(gzipSync(JSON.stringify({ kind: 'Status', ok: true })));
    };
    const t = new Transport(config({ bearerToken: 'tok-1', host: `${server.url}/prefix` }));
    try {
      const res = await t.request({ method: 'GET', path: '/api/v1/pods?limit=1' });
      expect(res.status).toBe(200);
      expect(await res.body.json()).toEqual({ kind: 'Status', ok: true });
      const seen = server.seen.at(-1);
      expect(seen?.url).toBe('/prefix/api/v1/pods?limit=1');
      expect(seen?.headers.authorization).toBe('Bearer tok-1');
      expect(seen?.headers['user-agent']).toBe('transport-test/v1 (linux/x64) kubeloop/0.1.0');
      expect(seen?.headers['accept-encoding']).toBe('gzip');
    } finally {
      await t.close();
    }
  });

  it('sends a User-Agent and impersonation headers beyond Latin-1 as UTF-8 bytes (a script named 控制器.mjs, a user Юля), as Go does', async () => {
    server.handler = (_req, res) => res.end('{}');
    const t = new Transport(
      config({
        bearerToken: 'tok-1',
        userAgent: '控制器/v0.0.0 (linux/x64) kubeloop/0.1.0',
        impersonate: { userName: 'Юля', groups: ['команда'], extra: { 'scopes.example.com/ü': ['знач'] } },
      }),
    );
    try {
      const res = await t.request({ method: 'GET', path: '/api' });
      expect(res.status).toBe(200);
      await res.body.text();
      // node:http hands header bytes over as Latin-1: read them back as UTF-8.
      const utf8 = (v: string | string[] | undefined) =>
        [v ?? []].flat().map((s) => Buffer.from(s, 'latin1').toString('utf8'));
      const h = server.seen.at(-1)?.headers ?? {};
      expect(utf8(h['user-agent'])).toEqual(['控制器/v0.0.0 (linux/x64) kubeloop/0.1.0']);
      expect(utf8(h['impersonate-user'])).toEqual(['Юля']);
      expect(utf8(h['impersonate-group'])).toEqual(['команда']);
      expect(utf8(h['impersonate-extra-scopes.example.com%2f%c3%bc'])).toEqual(['знач']);
    } finally {
      await t.close();
    }
  });

  it("a hand-built config: no tlsClientConfig is no TLS options, and qps/burst 0 (or absent) take client-go's defaults 5/10; negative qps disables throttling", async () => {
    server.handler = (_req, res) => res.end('{}');
    const clock = new FakeClock();
    // client-go rest.RESTClientFor: QPS 0 -> DefaultQPS 5, Burst 0 -> DefaultBurst 10; only a negative QPS
    // means no limiter. A config without tlsClientConfig (plain JavaScript) failed with a TypeError.
    for (const over of [
      { qps: 0, burst: 0 },
      { qps: undefined, burst: undefined },
    ]) {
      const t = new Transport({ ...config(), ...over } as never, { clock });
      const bare = new Transport({ host: server.url, userAgent: 'x' } as never, { clock });
      try {
        const before = server.seen.length;
        const all = Array.from({ length: 11 }, () =>
          t.request({ method: 'GET', path: '/api' }).then((r) => r.body.text()),
        );
        await vi.waitFor(() => expect(server.seen.length - before).toBe(10));
        await Promise.resolve();
        expect(server.seen.length - before).toBe(10); // the 11th waits for a token: 1 per 200 ms
        clock.step(200);
        await Promise.all(all);
        expect(server.seen.length - before).toBe(11);
        // no tlsClientConfig: a typed TLS failure (self-signed server), not a TypeError
        const err = await bare.request({ method: 'GET', path: '/api' }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(TransportError);
      } finally {
        await t.close();
        await bare.close();
      }
    }
  });

  it('decodes a gzip stream incrementally: the first watch event arrives before the stream ends', async () => {
    let finish: (() => void) | undefined;
    server.handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      const gz = createGzip();
      gz.pipe(res);
      gz.write('{"type":"ADDED"}\n');
      gz.flush(constants.Z_SYNC_FLUSH);
      finish = () => gz.end('{"type":"DELETED"}\n');
    };
    const t = new Transport(config());
    try {
      const res = await t.request({ method: 'GET', path: '/api/v1/pods?watch=true', stream: true });
      expect(res.headers['content-encoding']).toBeUndefined();
      const it = res.body[Symbol.asyncIterator]();
      const first = await it.next();
      expect(Buffer.from(first.value as Buffer).toString()).toBe('{"type":"ADDED"}\n');
      finish?.();
      let rest = '';
      for (let r = await it.next(); !r.done; r = await it.next())
        rest += Buffer.from(r.value as Buffer).toString();
      expect(rest).toBe('{"type":"DELETED"}\n');
    } finally {
      await t.close();
    }
  });

  it('fails a corrupt gzip body instead of returning garbage', async () => {
    server.handler = (_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip' });
      res.end(Buffer.from('this is not gzip at all'));
    };
    const t = new Transport(config());
    try {
      const res = await t.request({ method: 'GET', path: '/bad-gzip' });
      await expect(res.body.text()).rejects.toThrow();
    } finally {
      await t.close();
    }
  });

  it('does not ask for gzip with disableCompression', async () => {
    server.handler = (_req, res) => res.end('plain');
    const t = new Transport(config({ disableCompression: true }));
    try {
      const res = await t.request({ method: 'GET', path: '/version' });
      expect(await res.body.text()).toBe('plain');
      expect(server.seen.at(-1)?.headers['accept-encoding']).toBeUndefined();
    } finally {
      await t.close();
    }
  });

  it('sends impersonation headers, one Impersonate-Group per group', async () => {
    server.handler = (_req, res) => res.end('{}');
    const t = new Transport(
      config({
        bearerToken: 'x',
        impersonate: { userName: 'alice', uid: 'u1', groups: ['g1', 'g2'], extra: { scopes: ['a', 'b'] } },
      }),
    );
    try {
      await (await t.request({ method: 'GET', path: '/api' })).body.dump();
      const h = server.seen.at(-1)?.headers ?? {};
      expect(h['impersonate-user']).toBe('alice');
      expect(h['impersonate-uid']).toBe('u1');
      expect(h['impersonate-group']).toBe('g1, g2'); // node joins repeated headers with ", "
      expect(h['impersonate-extra-scopes']).toBe('a, b');
    } finally {
      await t.close();
    }
  });

  it('retries 429 with an integer Retry-After, waiting at least Retry-After and taking a token each time', async () => {
    let n = 0;
    server.handler = (_req, res) => {
      n++;
      if (n <= 3) {
        res.writeHead(429, { 'retry-after': '2' });
        res.end('{"kind":"Status","code":429}');
      } else res.end('{"ok":true}');
    };
    const clock = new RecordingClock();
    const limiter = new CountingLimiter();
    const t = new Transport(config(), { clock, rateLimiter: limiter });
    try {
      const res = await t.request({ method: 'POST', path: '/api/v1/namespaces/a/pods', body: '{}' });
      expect(res.status).toBe(200);
      await res.body.dump();
      expect(n).toBe(4);
      expect(clock.sleeps).toEqual([2000, 2000, 2000]);
      expect(limiter.taken).toBe(4);
    } finally {
      await t.close();
    }
  });

  it('does not retry 5xx without Retry-After, nor an HTTP-date Retry-After', async () => {
    let n = 0;
    server.handler = (_req, res) => {
      n++;
      res.writeHead(503, n === 1 ? {} : { 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' });
      res.end('{}');
    };
    const t = new Transport(config(), { clock: new RecordingClock() });
    try {
      const a = await t.request({ method: 'GET', path: '/a' });
      await a.body.dump();
      const b = await t.request({ method: 'GET', path: '/b' });
      await b.body.dump();
      expect([a.status, b.status, n]).toEqual([503, 503, 2]);
    } finally {
      await t.close();
    }
  });

  it('gives up after maxRetries and returns the last answer', async () => {
    let n = 0;
    server.handler = (_req, res) => {
      n++;
      res.writeHead(500, { 'retry-after': '1' });
      res.end('{}');
    };
    const clock = new RecordingClock();
    const t = new Transport(config(), { clock, maxRetries: 3 });
    try {
      const res = await t.request({ method: 'GET', path: '/x' });
      await res.body.dump();
      expect(res.status).toBe(500);
      expect(n).toBe(4);
      expect(clock.sleeps).toEqual([1000, 1000, 1000]);
    } finally {
      await t.close();
    }
  });

  it('retries a GET after a connection reset (as a 500 with Retry-After 1) but never a POST', async () => {
    let n = 0;
    server.handler = (req, res) => {
      n++;
      if (n === 1 || req.method === 'POST') {
        req.socket.destroy();
        return;
      }
      res.end('ok');
    };
    const clock = new RecordingClock();
    const t = new Transport(config(), { clock });
    try {
      const res = await t.request({ method: 'GET', path: '/r' });
      expect(await res.body.text()).toBe('ok');
      expect(clock.sleeps).toEqual([1000]);
      const before = n;
      await expect(t.request({ method: 'POST', path: '/w', body: '{}' })).rejects.toBeInstanceOf(
        TransportError,
      );
      expect(n).toBe(before + 1);
    } finally {
      await t.close();
    }
  });

  it('does not throttle, time out or retry a stream', async () => {
    server.handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"type":"ADDED"}\n');
      setTimeout(() => res.end('{"type":"DELETED"}\n'), 150);
    };
    const limiter = new CountingLimiter();
    const t = new Transport(config({ timeoutMs: 50 }), { rateLimiter: limiter });
    try {
      const res = await t.request({ method: 'GET', path: '/api/v1/pods?watch=true', stream: true });
      expect(await res.body.text()).toBe('{"type":"ADDED"}\n{"type":"DELETED"}\n');
      expect(limiter.taken).toBe(0);
    } finally {
      await t.close();
    }
  });

  it('times out a slow non-stream request with a typed error', async () => {
    server.handler = (_req, res) => {
      setTimeout(() => res.end('late'), 500);
    };
    const t = new Transport(config({ timeoutMs: 50 }));
    try {
      const e = await t.request({ method: 'GET', path: '/slow?limit=1' }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(TransportError);
      expect((e as TransportError).code).toBe('Timeout');
    } finally {
      await t.close();
    }
  });

  it('tells the server the timeout as client-go does (?timeout=<Go duration>), never on streams', async () => {
    server.handler = (_req, res) => res.end('{}');
    const t = new Transport(config({ timeoutMs: 5000 }), { clock: new FakeClock() });
    try {
      await (await t.request({ method: 'GET', path: '/api/v1/pods?limit=1' })).body.dump();
      expect(server.seen.at(-1)?.url).toBe('/api/v1/pods?limit=1&timeout=5s');
      await (await t.request({ method: 'GET', path: '/api/v1/pods?watch=true', stream: true })).body.dump();
      expect(server.seen.at(-1)?.url).toBe('/api/v1/pods?watch=true');
    } finally {
      await t.close();
    }
    // A fake clock that never moves: the 1.5 s is only written into the URL, and a real one could run out
    // before a loaded machine's local server answered.
    const t2 = new Transport(config({ timeoutMs: 1500 }), { clock: new FakeClock() });
    try {
      await (await t2.request({ method: 'DELETE', path: '/x' })).body.dump();
      expect(server.seen.at(-1)?.url).toBe('/x?timeout=1500ms');
    } finally {
      await t2.close();
    }
  });

  it('bounds retries and their Retry-After waits by the one request timeout (client-go)', async () => {
    let n = 0;
    server.handler = (_req, res) => {
      n++;
      res.writeHead(503, { 'retry-after': '1' });
      res.end('{}');
    };
    const t = new Transport(config({ timeoutMs: 600 }));
    try {
      const e = await t.request({ method: 'GET', path: '/busy' }).catch((x: unknown) => x);
      expect((e as TransportError).code).toBe('Timeout');
      // At most one attempt: the 1 s Retry-After wait outlives the 600 ms budget.
      expect(n).toBeLessThanOrEqual(1);
    } finally {
      await t.close();
    }
  });

  it('a caller abort is Aborted, not Timeout', async () => {
    server.handler = (_req, res) => {
      setTimeout(() => res.end('late'), 500);
    };
    const t = new Transport(config({ timeoutMs: 5000 }));
    try {
      const ac = new AbortController();
      const p = t.request({ method: 'GET', path: '/slow', signal: ac.signal }).catch((x: unknown) => x);
      setTimeout(() => ac.abort(), 20);
      expect(((await p) as TransportError).code).toBe('Aborted');
    } finally {
      await t.close();
    }
  });

  it('re-reads a token file after a 401 and retries once with the new token', async () => {
    const file = path.join(tmp, 'token');
    fs.writeFileSync(file, 'old-token\n');
    server.handler = (req, res) => {
      res.writeHead(req.headers.authorization === 'Bearer new-token' ? 200 : 401);
      res.end('{}');
    };
    const t = new Transport(config({ bearerTokenFile: file }));
    try {
      const first = await t.request({ method: 'GET', path: '/t' });
      await first.body.dump();
      expect(first.status).toBe(401); // the file did not change: no retry worth making
      fs.writeFileSync(file, 'new-token\n');
      const before = server.seen.length;
      const res = await t.request({ method: 'GET', path: '/t' });
      await res.body.dump();
      expect(res.status).toBe(200);
      expect(server.seen.slice(before).map((s) => s.headers.authorization)).toEqual([
        'Bearer old-token',
        'Bearer new-token',
      ]);
    } finally {
      await t.close();
    }
  });

  it('retries a watch once after a 401 that refreshed the token file, and never after a 503', async () => {
    const file = path.join(tmp, 'watch-token');
    fs.writeFileSync(file, 'stale\n');
    server.handler = (req, res) => {
      if (req.url?.includes('busy')) {
        res.writeHead(503, { 'retry-after': '1' });
        res.end('{}');
        return;
      }
      res.writeHead(req.headers.authorization === 'Bearer fresh' ? 200 : 401);
      res.end(req.headers.authorization === 'Bearer fresh' ? '{"type":"ADDED"}\n' : '{}');
    };
    const t = new Transport(config({ bearerTokenFile: file }));
    try {
      // The kubelet rotates the projected token before the next minute's re-read.
      const first = await t.request({ method: 'GET', path: '/api/v1/pods?watch=true', stream: true });
      await first.body.dump();
      expect(first.status).toBe(401);
      fs.writeFileSync(file, 'fresh\n');
      const before = server.seen.length;
      const res = await t.request({ method: 'GET', path: '/api/v1/pods?watch=true', stream: true });
      expect(await res.body.text()).toBe('{"type":"ADDED"}\n');
      expect(server.seen.length - before).toBe(2);
      const busy = await t.request({ method: 'GET', path: '/api/v1/pods?watch=true&busy=1', stream: true });
      await busy.body.dump();
      expect(busy.status).toBe(503);
    } finally {
      await t.close();
    }
  });

  it('fails TLS with a wrong CA, with a typed error that carries no secret', async () => {
    const other = await createTestCa('other');
    const t = new Transport(config({ tlsClientConfig: { caData: other.certPem }, bearerToken: 'sekrit' }));
    try {
      const e = await t.request({ method: 'GET', path: '/x' }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(TransportError);
      expect((e as TransportError).code).toBe('TLSFailed');
      expect((e as Error).message).not.toContain('sekrit');
    } finally {
      await t.close();
    }
  });

  it('reuses pooled connections for sequential requests (keep-alive)', async () => {
    server.handler = (req, res) => res.end(String(req.socket.remotePort));
    const t = new Transport(config());
    try {
      const ports = new Set<string>();
      for (let i = 0; i < 20; i++)
        ports.add(await (await t.request({ method: 'GET', path: '/p' })).body.text());
      // Not a new connection per request (client-node's agent-per-request bug): the pool reuses sockets.
      expect(ports.size).toBeLessThanOrEqual(2);
    } finally {
      await t.close();
    }
  });

  it('hands server Warning headers (code 299) to the warningHandler', async () => {
    server.handler = (_req, res) => {
      res.setHeader('warning', ['299 - "unknown field \\"spec.foo\\""', '299 - "v1beta1 is deprecated"']);
      res.end('{}');
    };
    const warnings: string[] = [];
    const t = new Transport(config(), { warningHandler: { handleWarning: (m) => warnings.push(m) } });
    try {
      await (await t.request({ method: 'POST', path: '/apis/x', body: '{}' })).body.dump();
      expect(warnings).toEqual(['unknown field "spec.foo"', 'v1beta1 is deprecated']);
    } finally {
      await t.close();
    }
  });
});

describe('parseWarningHeaders', () => {
  it('keeps only 299 warnings, unescaping quotes, from one or several headers', () => {
    expect(
      parseWarningHeaders('299 - "a", 199 - "misc", 299 kube "b \\"c\\"" "Wed, 21 Oct 2015 07:28:00 GMT"'),
    ).toEqual(['a', 'b "c"']);
    expect(parseWarningHeaders(undefined)).toEqual([]);
  });
});

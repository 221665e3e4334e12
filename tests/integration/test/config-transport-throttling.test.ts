// C13 at the transport level, against envtest's fault injection: 429 + Retry-After through the client-side
// token bucket. Each retry waits at least Retry-After and takes a limiter token again; the rate seen at the
// server never exceeds what the bucket allows. The limiter and the retry waits run on an injected FakeClock
// (the transport's `clock` option), so the waits are exact in fake time and cost no real time; one real-time
// canary keeps the real timer path exercised.
import { Transport } from '@kubeloop/client/transport';
import { loadRestConfig } from '@kubeloop/config';
import { FakeClock } from '@kubeloop/core/testing';
import { type ApiServer, startApiServer } from '@kubeloop/envtest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, writeKubeconfig } from './support/config-support.js';
import { mostInWindow, recordingLimiter, recordTransport, settleOnClock } from './support/fake-time.js';

const tmp = tempDir('kubeloop-c13t-');
let server: ApiServer;

beforeAll(async () => {
  server = await startApiServer();
});
afterAll(async () => {
  await server.stop();
  tmp.cleanup();
});

function config(qps: number, burst: number) {
  const file = writeKubeconfig(
    `${tmp.dir}/kubeconfig`,
    { server: server.url, 'certificate-authority-data': Buffer.from(server.caPem).toString('base64') },
    { token: server.token },
  );
  return loadRestConfig({ kubeconfig: file, env: {}, qps, burst });
}

describe('C13 transport: 429 with Retry-After through the limiter', () => {
  it('retries after Retry-After on the injected clock, taking a limiter token for every attempt', async () => {
    const path = '/api/v1/namespaces/kube-system';
    const fault = server.faults.failRequests({
      status: 429,
      retryAfterSeconds: 1,
      times: 3,
      match: { path },
    });
    const clock = new FakeClock();
    const limiter = recordingLimiter(5, 10, clock);
    const t = new Transport(config(5, 10), { rateLimiter: limiter, clock });
    const diag = recordTransport(clock, path);
    try {
      const before = server.requestLog.length;
      const res = await settleOnClock(
        clock,
        t.request({ method: 'GET', path }),
        'the GET through three 429s',
      );
      await res.body.dump();
      expect(res.status).toBe(200);
      const seen = server.requestLog.slice(before).filter((e) => e.path === path);
      expect(seen.map((e) => e.status)).toEqual([429, 429, 429, 200]);
      // Every attempt took a token; each retry came at least Retry-After (1 s of clock time) after the 429.
      expect(limiter.granted).toHaveLength(4);
      const attempts = diag.seen.filter((d) => d.kind === 'request');
      expect(attempts.map((d) => [d.attempt, d.status])).toEqual([
        [1, 429],
        [2, 429],
        [3, 429],
        [4, 200],
      ]);
      for (let i = 1; i < 4; i++)
        expect(limiter.granted[i]! - attempts[i - 1]!.at, `retry ${i}`).toBeGreaterThanOrEqual(1000);
      const retries = diag.seen.filter((d) => d.kind === 'retry');
      expect(retries.map((r) => [r.status, r.retry, r.waitMs])).toEqual([
        [429, 1, 1000],
        [429, 2, 1000],
        [429, 3, 1000],
      ]);
    } finally {
      diag.stop();
      fault.clear();
      await t.close();
    }
  });

  it('retries after Retry-After on the real clock (real-time canary: one 429, Retry-After 1)', async () => {
    const path = '/api/v1/namespaces/kube-public';
    const fault = server.faults.failRequests({
      status: 429,
      retryAfterSeconds: 1,
      times: 1,
      match: { path },
    });
    const t = new Transport(config(5, 10));
    try {
      const before = server.requestLog.length;
      const started = performance.now();
      const res = await t.request({ method: 'GET', path });
      await res.body.dump();
      expect(res.status).toBe(200);
      // A lower bound only: the retry cannot come before Retry-After, however loaded the machine.
      expect(performance.now() - started).toBeGreaterThanOrEqual(990);
      const seen = server.requestLog.slice(before).filter((e) => e.path === path);
      expect(seen.map((e) => e.status)).toEqual([429, 200]);
    } finally {
      fault.clear();
      await t.close();
    }
  });

  it('keeps the rate within burst + qps·t (on the injected clock) while 20% of GETs get 429', async () => {
    const qps = 10;
    const burst = 5;
    const path = '/api/v1/namespaces/default';
    const fault = server.faults.failRequests({
      status: 429,
      retryAfterSeconds: 1,
      probability: 0.2,
      seed: 13,
      match: { resource: 'namespaces', verb: 'get' },
    });
    const clock = new FakeClock();
    const limiter = recordingLimiter(qps, burst, clock);
    const t = new Transport(config(qps, burst), { rateLimiter: limiter, clock });
    try {
      const before = server.requestLog.length;
      const statuses = await settleOnClock(
        clock,
        Promise.all(
          Array.from({ length: 30 }, async () => {
            const res = await t.request({ method: 'GET', path });
            await res.body.dump();
            return res.status;
          }),
        ),
        '30 GETs',
      );
      expect(statuses).toEqual(Array(30).fill(200));
      const seen = server.requestLog.slice(before).filter((e) => e.path === path);
      const throttled = seen.filter((e) => e.status === 429).length;
      expect(throttled).toBeGreaterThan(0);
      expect(seen.filter((e) => e.status === 200)).toHaveLength(30);
      // One token per attempt, retries included, and the bucket's bound holds exactly in clock time: no
      // window of 1 s holds more than burst + qps tokens, and the 30 + retries attempts took at least
      // (attempts - burst) / qps seconds.
      expect(limiter.granted).toHaveLength(30 + throttled);
      expect(mostInWindow(limiter.granted, 1000)).toBeLessThanOrEqual(burst + qps);
      expect(Math.max(...limiter.granted)).toBeGreaterThanOrEqual(((30 + throttled - burst) / qps) * 1000);
    } finally {
      fault.clear();
      await t.close();
    }
  });
});

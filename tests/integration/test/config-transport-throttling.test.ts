// C13 at the transport level, against envtest's fault injection: 429 + Retry-After through the client-side
// token bucket. Each retry waits at least Retry-After and takes a limiter token again; the rate seen at the
// server never exceeds what the bucket allows.
import diagnosticsChannel from 'node:diagnostics_channel';
import { Transport } from '@kubeloop/client';
import { type RateLimiter, type RetryDiagnostic, TokenBucketRateLimiter } from '@kubeloop/client/transport';
import { loadRestConfig } from '@kubeloop/config';
import { type ApiServer, startApiServer } from '@kubeloop/envtest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, writeKubeconfig } from './support/config-support.js';

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

/** The real token bucket, counting the tokens taken. */
function counted(qps: number, burst: number): RateLimiter & { taken: number } {
  const real = new TokenBucketRateLimiter(qps, burst);
  const l = {
    taken: 0,
    wait(signal?: AbortSignal) {
      l.taken++;
      return real.wait(signal);
    },
    tryAccept() {
      l.taken++;
      return real.tryAccept();
    },
  };
  return l;
}

describe('C13 transport: 429 with Retry-After through the limiter', () => {
  it('retries after Retry-After, taking a limiter token for every attempt', async () => {
    const path = '/api/v1/namespaces/kube-system';
    const fault = server.faults.failRequests({
      status: 429,
      retryAfterSeconds: 1,
      times: 3,
      match: { path },
    });
    const limiter = counted(5, 10);
    const t = new Transport(config(5, 10), { rateLimiter: limiter });
    const retries: RetryDiagnostic[] = [];
    const onRetry = (m: unknown) => retries.push(m as RetryDiagnostic);
    diagnosticsChannel.subscribe('kubeloop:client:retry', onRetry);
    try {
      const before = server.requestLog.length;
      const res = await t.request({ method: 'GET', path });
      await res.body.dump();
      expect(res.status).toBe(200);
      const seen = server.requestLog.slice(before).filter((e) => e.path === path);
      expect(seen.map((e) => e.status)).toEqual([429, 429, 429, 200]);
      for (let i = 1; i < seen.length; i++) {
        // Retry-After is 1 s; allow 10 ms for timer and clock granularity.
        expect(seen[i]!.time - seen[i - 1]!.time).toBeGreaterThanOrEqual(990);
      }
      expect(limiter.taken).toBe(4);
      expect(retries.map((r) => [r.status, r.retry, r.waitMs])).toEqual([
        [429, 1, 1000],
        [429, 2, 1000],
        [429, 3, 1000],
      ]);
    } finally {
      diagnosticsChannel.unsubscribe('kubeloop:client:retry', onRetry);
      fault.clear();
      await t.close();
    }
  });

  it('keeps the rate at the server within burst + qps·t while 20% of GETs get 429', async () => {
    const qps = 10;
    const burst = 5;
    const fault = server.faults.failRequests({
      status: 429,
      retryAfterSeconds: 1,
      probability: 0.2,
      seed: 13,
      match: { resource: 'namespaces', verb: 'get' },
    });
    const t = new Transport(config(qps, burst));
    try {
      const before = server.requestLog.length;
      const statuses = await Promise.all(
        Array.from({ length: 30 }, async () => {
          const res = await t.request({ method: 'GET', path: '/api/v1/namespaces/default' });
          await res.body.dump();
          return res.status;
        }),
      );
      expect(statuses).toEqual(Array(30).fill(200));
      const seen = server.requestLog.slice(before).filter((e) => e.path === '/api/v1/namespaces/default');
      expect(seen.filter((e) => e.status === 429).length).toBeGreaterThan(0);
      expect(seen.filter((e) => e.status === 200)).toHaveLength(30);
      const times = seen.map((e) => e.time).sort((a, b) => a - b);
      // Token bucket bound for any 1 s window, with a little slack for network jitter between client and server.
      for (const start of times) {
        const inWindow = times.filter((x) => x >= start && x < start + 1000).length;
        expect(inWindow).toBeLessThanOrEqual(burst + qps + 2);
      }
    } finally {
      fault.clear();
      await t.close();
    }
  });
});

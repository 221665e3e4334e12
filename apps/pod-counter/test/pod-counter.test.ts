import type { Logger } from '@kubeloop/builder';
import { newClient, Pod } from '@kubeloop/client';
import type { RestConfig } from '@kubeloop/config';
import { type ApiServer, startApiServer } from '@kubeloop/envtest';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runPodCounter, startChurn } from '../src/index.js';

/** vi.waitFor bounds: checks every 20 ms, 20 s before giving up (real HTTP on a loaded CI box). */
const WAIT = { timeout: 20_000, interval: 20 };

type Rec = Record<string, unknown> & { msg: string };
function capture(records: Rec[], bound: Record<string, unknown> = {}): Logger {
  const at = (level: string) => (fields: Record<string, unknown>, msg: string) => {
    records.push({ ...bound, ...fields, level, msg });
  };
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (b) => capture(records, { ...bound, ...b }),
  };
}

/** A small deterministic PRNG, so the churn is the same every run. */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('pod-counter with the demo churn (the --embedded path) on an in-process API server', () => {
  let server: ApiServer;
  let config: RestConfig;
  beforeAll(async () => {
    server = await startApiServer();
    config = {
      host: server.url,
      tlsClientConfig: { caData: server.caPem },
      bearerToken: server.token,
      qps: -1,
      burst: 0,
      timeoutMs: 0,
      userAgent: 'pod-counter-test',
    };
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('follows the churn: the last reported count equals the number of pods on the server', async () => {
    const records: Rec[] = [];
    const ac = new AbortController();
    const run = runPodCounter(config, { signal: ac.signal, logger: capture(records) });
    const churnClient = newClient(config);
    const stopChurn = await startChurn(churnClient, {
      namespaces: ['demo-a', 'demo-b'],
      initialPerNamespace: 2,
      intervalMs: 10,
      logger: capture(records, { component: 'churn' }),
      random: seeded(42),
    });
    const changes = () =>
      records.filter((r) => r.msg === 'demo pod created' || r.msg === 'demo pod deleted').length;
    await vi.waitFor(() => expect(changes(), '15 churn steps').toBeGreaterThanOrEqual(15), WAIT);
    await stopChurn();
    const counts = () => records.filter((r) => r.msg === 'pod count').map((r) => r.count as number);
    const serverCount = async () => (await churnClient.list(Pod)).items.length;
    await vi.waitFor(
      async () => expect(counts().at(-1), "the count to reach the server's").toBe(await serverCount()),
      WAIT,
    );
    expect(records.some((r) => r.msg === 'demo pod deleted')).toBe(true);
    expect(new Set(counts()).size).toBeGreaterThan(1); // the count moved with the churn
    ac.abort();
    await run;
    await churnClient.close();
    expect(records.filter((r) => r.level === 'error')).toEqual([]);
  });
});

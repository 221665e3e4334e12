import { newManager, newMetricsRegistry } from '@kubeloop/builder';
import { Namespace, newClient } from '@kubeloop/client';
import type { RestConfig } from '@kubeloop/config';
import { type ApiServer, startApiServer } from '@kubeloop/envtest';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SteadyElection } from '../src/index.js';

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
    userAgent: 'steady-election-test',
  };
});
afterAll(async () => {
  await server?.stop();
});

describe('SteadyElection', () => {
  it('refuses timings not ordered lease > renew deadline > retry > 0', () => {
    for (const bad of [
      { leaseDurationMs: 3000, renewDeadlineMs: 3000 },
      { renewDeadlineMs: 500, retryPeriodMs: 500 },
      { retryPeriodMs: 0 },
    ])
      expect(() => new SteadyElection(bad)).toThrow(RangeError);
  });

  it('a manager elected through it keeps leading while a renew hangs far past the renew deadline: the clock waits for the renew', async () => {
    const api = newClient(config);
    const ns = 'steady-election';
    await api.create(Namespace, { metadata: { name: ns } });
    const election = new SteadyElection();
    const mgr = newManager(config, {
      leaderElection: {
        id: 'steady',
        namespace: ns,
        elector: election.elector(config, { identity: 'one', namespace: ns, name: 'steady' }),
      },
      metrics: { registry: newMetricsRegistry() },
    });
    const stop = new AbortController();
    const done = mgr.start(stop.signal);
    let ended = false;
    void done.then(
      () => {
        ended = true;
      },
      () => {
        ended = true;
      },
    );
    let held: { hits: number; clear(): void } | undefined;
    try {
      await mgr.elected();
      await vi.waitFor(() => expect(election.writes.length).toBeGreaterThanOrEqual(2), { timeout: 20_000 });
      // The next renew hangs at the server. On the real clock the renew deadline (3 s) would pass and the
      // manager would stop with LeaderElectionLostError; here the clock stands still while it is in flight.
      held = server.faults.delayRequests({
        match: { resource: 'leases', namespace: ns, method: 'PUT' },
        barrier: 1_000_000,
        delayMs: 60_000,
      });
      await vi.waitFor(() => expect(held?.hits).toBeGreaterThanOrEqual(1), { timeout: 20_000 });
      const heldAt = election.clock.now();
      const writes = election.writes.length;
      // Many driver periods (100 ms each) of wall time with the renew in flight: the clock does not move.
      await new Promise((r) => setTimeout(r, 1500));
      expect(election.clock.now()).toBe(heldAt);
      held.clear();
      // The renew lands and the next ones follow; the manager never stopped.
      await vi.waitFor(() => expect(election.writes.length).toBeGreaterThan(writes + 1), { timeout: 20_000 });
      expect(election.writes.every((w) => w.identity === 'one')).toBe(true);
      expect(ended).toBe(false);
    } finally {
      held?.clear();
      stop.abort();
      await done;
      await api.close();
    }
  });
});

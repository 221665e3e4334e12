import { Namespace, newClient } from '@kubeloop/client';
import { type ApiServer, startApiServer } from '@kubeloop/envtest';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { realCluster } from './support/fault-server.js';
import { type Replica, replicaTokens, startReplica, watchLeases } from './support/leader-election.js';
import { uniqueName, waitFor } from './support.js';

describe.skipIf(realCluster)('C23 standby that is stopping (leader election)', () => {
  let server: ApiServer;
  const replicas: Replica[] = [];
  beforeAll(async () => {
    server = await startApiServer({ tokens: replicaTokens('a', 'b') });
  });
  afterEach(async () => {
    server.faults.reset();
    for (const r of replicas.splice(0)) {
      r.stop.abort();
      await r.done;
    }
  });
  afterAll(async () => {
    await server?.stop();
  });

  async function setup() {
    const api = newClient({
      host: server.url,
      tlsClientConfig: { caData: server.caPem },
      bearerToken: server.token,
      qps: -1,
      burst: 0,
      timeoutMs: 0,
      userAgent: 'c23',
    });
    const ns = uniqueName('c23');
    await api.create(Namespace, { metadata: { name: ns } });
    const history = watchLeases(api, ns);
    const a = startReplica(server, 'a', ns, 'lock');
    replicas.push(a);
    await a.mgr.elected();
    const b = startReplica(server, 'b', ns, 'lock');
    replicas.push(b);
    await waitFor(
      () => server.faults.requests({ resource: 'leases', namespace: ns, verb: 'get' }).length >= 3,
      'B campaigning',
    );
    return { api, ns, history, a, b };
  }

  it('C23: a standby stopped while it waits never starts leader-only work, writes no Lease and stops promptly', async () => {
    const { api, ns, history, a, b } = await setup();
    try {
      // leader_election_master_status{name}: 1 on the leader, 0 on the standby.
      expect(await a.registry.metrics()).toContain('leader_election_master_status{name="lock"} 1');
      expect(await b.registry.metrics()).toContain('leader_election_master_status{name="lock"} 0');
      const t0 = Date.now();
      b.stop.abort();
      expect(await b.done).toBeUndefined();
      expect(Date.now() - t0).toBeLessThan(1500);
      expect(b.led).toEqual([]);
      expect(server.faults.requests({ namespace: ns, name: 'stamp-b' })).toEqual([]);
      expect(history.writes.some((w) => w.holder === 'b')).toBe(false);
    } finally {
      history.stop();
      await api.close();
    }
  });

  it('C23: a leader-only runnable added to the standby after start starts exactly once, when it wins', async () => {
    const { api, history, a, b } = await setup();
    try {
      const runs: number[] = [];
      b.mgr.add({
        async start(signal) {
          runs.push(Date.now());
          await new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));
        },
      });
      await new Promise((r) => setTimeout(r, 700));
      expect(runs).toEqual([]);
      const tA = Date.now();
      a.stop.abort();
      await a.done;
      await waitFor(() => runs.length > 0 && b.stamps > 0, 'B leading', 10_000);
      await new Promise((r) => setTimeout(r, 500));
      expect(runs).toHaveLength(1);
      // Not before A stopped, and only after B took the Lease (A did not release: B waited for expiry).
      expect(runs[0]).toBeGreaterThan(tA);
      await waitFor(() => history.writes.some((w) => w.holder === 'b'), "B's acquire in the Lease history");
      expect(b.led).toHaveLength(1);
    } finally {
      history.stop();
      await api.close();
    }
  });
});

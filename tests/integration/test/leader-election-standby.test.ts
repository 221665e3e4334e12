import { Namespace } from '@kubeloop/client';
import { describe, expect, it } from 'vitest';
import { realCluster } from './support/fault-server.js';
import { startReplica, useReplicaServer, watchLeases } from './support/leader-election.js';
import { uniqueName, waitFor } from './support.js';

describe.skipIf(realCluster)('C23 standby that is stopping (leader election)', () => {
  const ctx = useReplicaServer('c23', 'a', 'b');

  async function setup() {
    const api = ctx.api;
    const ns = uniqueName('c23');
    await api.create(Namespace, { metadata: { name: ns } });
    const history = watchLeases(api, ns);
    const a = startReplica(ctx.server, 'a', ns, 'lock');
    ctx.replicas.push(a);
    await a.mgr.elected();
    const b = startReplica(ctx.server, 'b', ns, 'lock');
    ctx.replicas.push(b);
    await waitFor(
      () => ctx.server.faults.requests({ resource: 'leases', namespace: ns, verb: 'get' }).length >= 3,
      'B campaigning',
    );
    return { ns, history, a, b };
  }

  it('C23: a standby stopped while it waits never starts leader-only work, writes no Lease and stops promptly', async () => {
    const { ns, history, a, b } = await setup();
    try {
      // leader_election_master_status{name}: 1 on the leader, 0 on the standby.
      expect(await a.registry.metrics()).toContain('leader_election_master_status{name="lock"} 1');
      expect(await b.registry.metrics()).toContain('leader_election_master_status{name="lock"} 0');
      const t0 = Date.now();
      b.stop.abort();
      expect(await b.done).toBeUndefined();
      expect(Date.now() - t0).toBeLessThan(1500);
      expect(b.led).toEqual([]);
      expect(ctx.server.faults.requests({ namespace: ns, name: 'stamp-b' })).toEqual([]);
      expect(history.writes.some((w) => w.holder === 'b')).toBe(false);
    } finally {
      history.stop();
    }
  });

  it('C23: a leader-only runnable added to the standby after start starts exactly once, when it wins', async () => {
    const { history, a, b } = await setup();
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
    }
  });
});

import { LeaderElectionLostError } from '@kubeloop/builder';
import { Namespace } from '@kubeloop/client';
import { describe, expect, it } from 'vitest';
import { realCluster } from './support/fault-server.js';
import {
  FAST,
  overlaps,
  startReplica,
  tokenOf,
  useReplicaServer,
  watchLeases,
} from './support/leader-election.js';
import { uniqueName, waitFor } from './support.js';

/** The lock client's request timeout for these timings: max(1 s, renewDeadline / 2). */
const REQUEST_TIMEOUT_MS = 1000;
/** Failover bound of issue 8: leaseDuration + retryPeriod + one request timeout. */
const FAILOVER_BOUND_MS = FAST.leaseDurationMs + FAST.retryPeriodMs + REQUEST_TIMEOUT_MS;

describe.skipIf(realCluster)(
  'leader election: three managers, a stopped leader, then a partitioned one',
  () => {
    const ctx = useReplicaServer('three-managers', 'r1', 'r2', 'r3');

    it('never two leaders at once, and a new leader within leaseDuration + retryPeriod + one request timeout', async () => {
      const api = ctx.api;
      const ns = uniqueName('le3');
      await api.create(Namespace, { metadata: { name: ns } });
      const history = watchLeases(api, ns);
      try {
        const r1 = startReplica(ctx.server, 'r1', ns, 'lock');
        ctx.replicas.push(r1);
        await r1.mgr.elected();
        const others = ['r2', 'r3'].map((id) => startReplica(ctx.server, id, ns, 'lock'));
        ctx.replicas.push(...others);
        await waitFor(
          () => r1.stamps >= 5,
          () =>
            `r1 stamping: ${JSON.stringify(r1.led)} ${JSON.stringify(
              ctx.server.faults
                .requests({ namespace: ns })
                .slice(-8)
                .map((r) => [r.method, r.path, r.status]),
            )}`,
        );
        const lastWriteOf = (id: string) => [...history.writes].reverse().find((w) => w.holder === id);
        const firstWriteOf = (id: string) => history.writes.find((w) => w.holder === id);

        // 1. The leader stops (no release): a standby takes over once the lease expired.
        r1.stop.abort();
        expect(await r1.done).toBeUndefined();
        await waitFor(() => others.some((r) => r.stamps >= 3), 'a new leader after r1 stopped', 15_000);
        const l2 = others.find((r) => r.stamps > 0)!;
        const standby = others.find((r) => r !== l2)!;
        await waitFor(() => firstWriteOf(l2.identity) !== undefined, "the new leader's Lease write");
        const r1Last = lastWriteOf('r1')!;
        const l2First = firstWriteOf(l2.identity)!;
        expect(l2First.time - r1Last.time).toBeGreaterThanOrEqual(FAST.leaseDurationMs - 100);
        expect(l2First.time - r1Last.time).toBeLessThanOrEqual(FAILOVER_BOUND_MS);
        expect(overlaps(ctx.replicas)).toBeUndefined();

        // 2. The new leader is partitioned: its requests hang, then fail.
        const match = { token: tokenOf(l2.identity) };
        const hang = ctx.server.faults.blackhole({ match, sendHeaders: false });
        await new Promise((r) => setTimeout(r, 1000));
        hang.clear();
        ctx.server.faults.failRequests({ match, status: 503, retryAfterSeconds: null });
        expect(await l2.done).toBeInstanceOf(LeaderElectionLostError);
        await waitFor(() => standby.stamps >= 3, 'the third replica leading', 15_000);
        await waitFor(() => firstWriteOf(standby.identity) !== undefined, "the third replica's Lease write");
        const l2Last = lastWriteOf(l2.identity)!;
        const l3First = firstWriteOf(standby.identity)!;
        // The partitioned leader stopped its work within the renew deadline of its last successful renew…
        const l2Led = l2.led.at(-1)!;
        expect(l2Led.to).toBeDefined();
        expect((l2Led.to ?? 0) - l2Last.time).toBeLessThanOrEqual(FAST.renewDeadlineMs + FAST.retryPeriodMs);
        // …before anyone else could acquire, and the next leader came within the bound.
        expect(l3First.time).toBeGreaterThan(l2Led.to ?? 0);
        expect(l3First.time - l2Last.time).toBeGreaterThanOrEqual(FAST.leaseDurationMs - 100);
        expect(l3First.time - l2Last.time).toBeLessThanOrEqual(FAILOVER_BOUND_MS);
        // From each manager's own record of when it led: never two at once (wall clock).
        expect(overlaps(ctx.replicas)).toBeUndefined();
        expect(ctx.replicas.flatMap((r) => r.led)).toHaveLength(3);
        // The Lease's holders in order, each transition counted.
        const holders = history.writes.map((w) => w.holder).filter((h, i, a) => h !== a[i - 1]);
        expect(holders).toEqual(['r1', l2.identity, standby.identity]);
        expect(lastWriteOf(standby.identity)?.leaseTransitions).toBe(2);
      } finally {
        history.stop();
      }
    });
  },
);

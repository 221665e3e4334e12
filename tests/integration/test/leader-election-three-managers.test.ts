import { LeaderElectionLostError } from '@kubeloop/builder';
import { JITTER_FACTOR } from '@kubeloop/builder/leaderelection';
import { Namespace } from '@kubeloop/client';
import { describe, expect, it } from 'vitest';
import { FakeTimeElection } from './support/fake-time-election.js';
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

/**
 * Failover bound on the election clock, from the protocol: a standby sees the last renew at its next poll
 * (at most one acquire wait, retryPeriod × (1 + jitter), after it was sent), may take the lock leaseDuration
 * after that, and tries at its next poll (one more wait).
 */
const FAILOVER_BOUND_MS = FAST.leaseDurationMs + 2 * FAST.retryPeriodMs * (1 + JITTER_FACTOR);
/** Clock times are sums of jittered (fractional) waits: bounds are compared within float rounding. */
const EPS = 1e-6;

describe.skipIf(realCluster)(
  'leader election: three managers, a stopped leader, then a partitioned one',
  () => {
    const ctx = useReplicaServer('three-managers', 'r1', 'r2', 'r3');

    it('never two leaders at once, and a new leader leaseDuration after the last renew, within one more poll (election clock)', async () => {
      const api = ctx.api;
      const ns = uniqueName('le3');
      await api.create(Namespace, { metadata: { name: ns } });
      const history = watchLeases(api, ns);
      const election = new FakeTimeElection();
      const start = (id: string) => {
        const r = startReplica(ctx.server, id, ns, 'lock', {
          leaderElector: election.elector(ctx.server, id, ns, 'lock'),
        });
        ctx.replicas.push(r);
        return election.add(r);
      };
      const stopDriving = election.drive();
      try {
        const r1 = start('r1');
        await r1.mgr.elected();
        const others = ['r2', 'r3'].map(start);
        await waitFor(
          () => r1.stamps >= 5,
          () => `r1 stamping: ${JSON.stringify(r1.led)} ${r1.errors.slice(-3).join(' | ')}`,
        );
        // Both standbys poll the Lease r1 holds.
        await waitFor(
          () => others.every((r) => (election.reads.get(r.identity) ?? 0) >= 2),
          'the standbys polling',
        );

        // 1. The leader stops (no release): a standby takes over once the lease expired.
        r1.stop.abort();
        expect(await r1.done).toBeUndefined();
        await waitFor(() => others.some((r) => r.stamps >= 3), 'a new leader after r1 stopped', 15_000);
        const l2 = others.find((r) => r.stamps > 0)!;
        const standby = others.find((r) => r !== l2)!;
        const r1Last = election.lastWrite('r1')!;
        const l2First = election.firstWrite(l2.identity)!;
        expect(l2First - r1Last).toBeGreaterThanOrEqual(FAST.leaseDurationMs - EPS);
        expect(l2First - r1Last).toBeLessThanOrEqual(FAILOVER_BOUND_MS + EPS);
        expect(overlaps(ctx.replicas)).toBeUndefined();

        // 2. The new leader is partitioned: a request of it hangs (until its own request timeout), then every
        // one fails.
        const match = { token: tokenOf(l2.identity) };
        const hang = ctx.server.faults.blackhole({ match, sendHeaders: false });
        await waitFor(() => hang.hits >= 1, "a hung request of the new leader's");
        hang.clear();
        ctx.server.faults.failRequests({ match, status: 503, retryAfterSeconds: null });
        expect(await l2.done).toBeInstanceOf(LeaderElectionLostError);
        await waitFor(() => standby.stamps >= 3, 'the third replica leading', 15_000);
        const l2Last = election.lastWrite(l2.identity)!;
        const l2Lost = election.stoppedLeading.get(l2.identity)!;
        const l3First = election.firstWrite(standby.identity)!;
        // The partitioned leader stopped within the renew deadline of its last successful renew…
        expect(l2Lost - l2Last).toBeLessThanOrEqual(FAST.renewDeadlineMs + EPS);
        // …before anyone else could acquire, and the next leader came within the bound.
        expect(l3First).toBeGreaterThan(l2Lost);
        expect(l3First - l2Last).toBeGreaterThanOrEqual(FAST.leaseDurationMs - EPS);
        expect(l3First - l2Last).toBeLessThanOrEqual(FAILOVER_BOUND_MS + EPS);
        // From each manager's own record of when its leader-only work ran: never two at once (wall clock).
        expect(overlaps(ctx.replicas)).toBeUndefined();
        expect(ctx.replicas.flatMap((r) => r.led)).toHaveLength(3);
        // The Lease's holders in order, each transition counted.
        await waitFor(
          () => history.writes.some((w) => w.holder === standby.identity),
          "the watch seeing the third replica's Lease",
        );
        const holders = history.writes.map((w) => w.holder).filter((h, i, a) => h !== a[i - 1]);
        expect(holders).toEqual(['r1', l2.identity, standby.identity]);
        expect(history.writes.findLast((w) => w.holder === standby.identity)?.leaseTransitions).toBe(2);
      } finally {
        await stopDriving();
        history.stop();
      }
    });
  },
);

import { ConfigMap, isNotFound } from '@kubeloop/client';
import { onAbort } from '@kubeloop/core';
import { describe, expect, it } from 'vitest';
import { FakeTimeElection } from './support/fake-time-election.js';
import { type Replica, startReplica, watchLeases } from './support/leader-election.js';
import { captureLogger, type LogRecord, testConfig, useLiveCluster, waitFor } from './support.js';

/** Lease 30 s, renew deadline 20 s: a leader that is not meant to lose its Lease keeps it on a loaded box. */
const STEADY = { leaseDurationMs: 30_000, renewDeadlineMs: 20_000, retryPeriodMs: 500 } as const;

describe('C23 standby that is stopping (leader election, observed through the API)', () => {
  const live = useLiveCluster();

  /**
   * A leading, B campaigning. `timings` for a test in which A must not lose the Lease (nothing there waits for it
   * to expire): at load 50 (a soak of two suites) A's PUT with FAST's 3 s renew deadline failed and A lost it.
   */
  async function setup(timings?: typeof STEADY, election?: FakeTimeElection) {
    const { api, ns } = await live.namespace('c23');
    const config = testConfig();
    // The election clock drives until the replicas have stopped (cleanups run last in first out).
    if (election) live.cleanups.push(election.drive());
    const history = watchLeases(api, ns);
    live.cleanups.push(async () => history.stop());
    const started: Replica[] = [];
    live.cleanups.push(async () => {
      for (const r of started) r.stop.abort();
      for (const r of started) await r.done;
    });
    const on = (id: string) =>
      election
        ? { leaderElector: election.elector(config, id, ns, 'lock'), now: () => election.clock.now() }
        : {};
    const a = startReplica(config, 'a', ns, 'lock', { ...(timings ? { timings } : {}), ...on('a') });
    started.push(election ? election.add(a) : a);
    await a.mgr.elected();
    const records: LogRecord[] = [];
    const b = startReplica(config, 'b', ns, 'lock', {
      logger: captureLogger(records),
      ...(timings ? { timings } : {}),
      ...on('b'),
    });
    started.push(election ? election.add(b) : b);
    // B has read the Lease and seen A hold it: it is campaigning.
    await waitFor(
      () =>
        election
          ? (election.reads.get('b') ?? 0) >= 1
          : records.some((r) => r.msg === 'new leader observed' && r.leader === 'a'),
      'B campaigning',
    );
    return { api, ns, history, a, b };
  }

  it('C23: a standby stopped while it waits never starts leader-only work, writes no Lease and stops', async () => {
    const { api, ns, history, a, b } = await setup(STEADY);
    // leader_election_master_status{name}: 1 on the leader, 0 on the standby.
    expect(await a.registry.metrics()).toContain('leader_election_master_status{name="lock"} 1');
    expect(await b.registry.metrics()).toContain('leader_election_master_status{name="lock"} 0');
    b.stop.abort();
    expect(await b.done).toBeUndefined();
    expect(b.led).toEqual([]);
    // B's leader-only work would have created stamp-b first thing.
    const stampB = await api.get(ConfigMap, { namespace: ns, name: 'stamp-b' }).catch((e: unknown) => e);
    expect(isNotFound(stampB)).toBe(true);
    expect(history.writes.some((w) => w.holder === 'b')).toBe(false);
  });

  it('C23: a leader-only runnable added to the standby after start starts exactly once, when it wins', async () => {
    // On the election's fake clock (FAST timings), which moves only while no Lease request is in flight: the
    // test waits for B to take the Lease by expiry, and on the real clock A, loaded, lost it before it was
    // stopped (soak seed 1129965418, 'A stamping on' beside C21 on a cold worker).
    const { history, a, b } = await setup(undefined, new FakeTimeElection());
    /** Per start of the runnable: whether A had been stopped by then. */
    const runs: boolean[] = [];
    let aStopped = false;
    b.mgr.add({
      async start(signal) {
        runs.push(aStopped);
        await new Promise<void>((r) => onAbort(signal, () => r()));
      },
    });
    // A keeps leading (three more stamps) while the runnable waits on the standby.
    const stampsA = a.stamps;
    await waitFor(() => a.stamps >= stampsA + 3, 'A stamping on');
    expect(runs).toEqual([]);
    aStopped = true;
    a.stop.abort();
    await a.done;
    await waitFor(() => runs.length > 0 && b.stamps > 0, 'B leading', 20_000);
    // B keeps leading (three stamps) and the runnable was not started again.
    const stampsB = b.stamps;
    await waitFor(() => b.stamps >= stampsB + 3, 'B stamping on');
    // Started once, only after A stopped (A did not release: B took the Lease by expiry).
    expect(runs).toEqual([true]);
    await waitFor(() => history.writes.some((w) => w.holder === 'b'), "B's acquire in the Lease history");
    expect(b.led).toHaveLength(1);
  });
});

import { LeaseKind, type LeaseObject } from '@kubeloop/builder/leaderelection';
import type { RestConfig } from '@kubeloop/config';
import { describe, expect, it } from 'vitest';
import { type Replica, startReplica, watchLeases } from './support/leader-election.js';
import { captureLogger, type LogRecord, testConfig, useLiveCluster, waitFor } from './support.js';

/**
 * A lease far longer than any wait of this file: a replica that takes over within the test can only have done
 * so because the Lease was released, never by expiry. The renew deadline is long too: with 1.5 s the leader
 * lost its lease under load (load 15) before the test stopped it.
 */
const LONG_LEASE = { leaseDurationMs: 60_000, renewDeadlineMs: 20_000, retryPeriodMs: 500 };

describe('C22 release on shutdown (observed through the Lease and its watch)', () => {
  const live = useLiveCluster();

  /** Starts a replica on the run's API server; stopped (and awaited) after the test. */
  function replica(
    config: RestConfig,
    id: string,
    ns: string,
    extra: Parameters<typeof startReplica>[4] = {},
  ) {
    const r: Replica = startReplica(config, id, ns, 'lock', extra);
    live.cleanups.push(async () => {
      r.stop.abort();
      await r.done;
    });
    return r;
  }

  it('C22: one release write from A — holder empty, duration 1, transitions kept, after its leader-only work stopped; B takes over without waiting for expiry', async () => {
    const { api, ns } = await live.namespace('c22');
    const config = testConfig();
    const history = watchLeases(api, ns);
    live.cleanups.push(async () => history.stop());
    const a = replica(config, 'a', ns, { releaseOnCancel: true, timings: LONG_LEASE });
    await a.mgr.elected();
    const b = replica(config, 'b', ns, { timings: LONG_LEASE });
    await waitFor(() => a.stamps >= 3, 'A stamping');
    const before = await api.get(LeaseKind, { namespace: ns, name: 'lock' });
    a.stop.abort(); // A's signal is aborted before the release runs
    expect(await a.done).toBeUndefined();
    // With a 60 s lease, B leads within this wait only through A's release.
    await waitFor(() => b.stamps >= 1, 'B leading', 20_000);
    // The watch delivers the Lease writes in order; wait until it has shown B's acquire too.
    await waitFor(
      () => history.writes.some((w) => w.holder === 'b'),
      () => `B's acquire in the Lease history (watch ends: ${history.ends.join('; ') || 'none'})`,
    );
    const releases = history.writes.filter((w) => w.holder === '');
    expect(releases).toHaveLength(1);
    const release = releases[0]!;
    const at = history.writes.indexOf(release);
    expect(release.leaseDurationSeconds).toBe(1);
    expect(release.leaseTransitions).toBe(before.spec?.leaseTransitions);
    // Every write before the release was A's (renews until the elector was stopped); B's acquire came next.
    expect(history.writes.slice(0, at).every((w) => w.holder === 'a')).toBe(true);
    expect(history.writes[at + 1]).toMatchObject({
      holder: 'b',
      leaseTransitions: (before.spec?.leaseTransitions ?? 0) + 1,
    });
    // A's leader-only work had stopped before the watch delivered the release.
    expect(a.led).toHaveLength(1);
    expect(a.led[0]?.to).toBeLessThanOrEqual(release.time);
  });

  it('C22: the released Lease itself is valid (holder empty, leaseDurationSeconds 1, transitions unchanged)', async () => {
    const { api, ns } = await live.namespace('c22');
    const a = replica(testConfig(), 'a', ns, { releaseOnCancel: true });
    await a.mgr.elected();
    const before = await api.get(LeaseKind, { namespace: ns, name: 'lock' });
    a.stop.abort();
    await a.done;
    const after: LeaseObject = await api.get(LeaseKind, { namespace: ns, name: 'lock' });
    expect(after.spec).toMatchObject({
      holderIdentity: '',
      leaseDurationSeconds: 1,
      leaseTransitions: before.spec?.leaseTransitions,
    });
  });

  it('C22 (409): a third writer bumps the Lease just before the release — A logs once, does not loop, writes no release; B takes over by expiry', async () => {
    const { api, ns } = await live.namespace('c22');
    const config = testConfig();
    const history = watchLeases(api, ns);
    live.cleanups.push(async () => history.stop());
    const records: LogRecord[] = [];
    // A renews every 3 s, so no renew of A falls between the third writer's bump and A's stop (with 0.5 s one
    // did at load 23: it met the 409, A re-read the Lease and released it cleanly).
    const timings = { leaseDurationMs: 8000, renewDeadlineMs: 6000, retryPeriodMs: 3000 };
    const a = replica(config, 'a', ns, { releaseOnCancel: true, logger: captureLogger(records), timings });
    await a.mgr.elected();
    const b = replica(config, 'b', ns, { timings });
    const lease = () => api.get(LeaseKind, { namespace: ns, name: 'lock' });
    // Right after one of A's renews, a third writer changes the Lease; then A stops.
    const rv = (await lease()).metadata?.resourceVersion;
    await waitFor(async () => (await lease()).metadata?.resourceVersion !== rv, 'a renew of A');
    const cur = await lease();
    await api.update(LeaseKind, { ...cur, metadata: { ...cur.metadata, labels: { bumped: 'yes' } } });
    a.stop.abort();
    await a.done;
    expect(records.filter((r) => /failed to release/.test(r.msg))).toHaveLength(1);
    await waitFor(() => b.stamps >= 1, 'B leading after expiry', 40_000);
    await waitFor(() => history.writes.some((w) => w.holder === 'b'), "B's acquire in the Lease history");
    // No release was stored: B took the Lease over from A's unexpired-then-expired record.
    expect(history.writes.some((w) => w.holder === '')).toBe(false);
    expect(records.filter((r) => /failed to release/.test(r.msg))).toHaveLength(1);
  }, 90_000);

  it('C22: a manager that never led writes no Lease on shutdown', async () => {
    const { api, ns } = await live.namespace('c22');
    const held = await api.create(LeaseKind, {
      metadata: { namespace: ns, name: 'lock' },
      spec: { holderIdentity: 'someone-else', leaseDurationSeconds: 3600 },
    });
    const history = watchLeases(api, ns);
    live.cleanups.push(async () => history.stop());
    const records: LogRecord[] = [];
    const c = replica(testConfig(), 'c', ns, { releaseOnCancel: true, logger: captureLogger(records) });
    // C has read the Lease and seen the other holder.
    await waitFor(
      () => records.some((r) => r.msg === 'new leader observed' && r.leader === 'someone-else'),
      'C trying',
    );
    await waitFor(() => history.writes.length > 0, 'the Lease watch');
    c.stop.abort();
    await c.done;
    expect(c.led).toEqual([]);
    expect((await api.get(LeaseKind, { namespace: ns, name: 'lock' })).metadata?.resourceVersion).toBe(
      held.metadata?.resourceVersion,
    );
    expect(history.writes.map((w) => [w.type, w.holder])).toEqual([['ADDED', 'someone-else']]);
  });
});

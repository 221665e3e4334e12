import { LeaseKind, type LeaseObject } from '@kubeloop/builder/leaderelection';
import { Namespace } from '@kubeloop/client';
import { describe, expect, it } from 'vitest';
import { realCluster } from './support/fault-server.js';
import { FAST, startReplica, useReplicaServer, watchLeases } from './support/leader-election.js';
import { captureLogger, type LogRecord, uniqueName, waitFor } from './support.js';

describe.skipIf(realCluster)('C22 release on shutdown (envtest validates Leases like kube-apiserver)', () => {
  const ctx = useReplicaServer('c22', 'a', 'b', 'c');

  async function namespace(): Promise<string> {
    const ns = uniqueName('c22');
    await ctx.api.create(Namespace, { metadata: { name: ns } });
    return ns;
  }

  const lease = (ns: string) => ctx.api.get(LeaseKind, { namespace: ns, name: 'lock' });

  it('C22: one release write from A — holder empty, duration 1, transitions kept, sent after its signal aborted; B leads about one retry period later', async () => {
    const ns = await namespace();
    const a = startReplica(ctx.server, 'a', ns, 'lock', { releaseOnCancel: true });
    ctx.replicas.push(a);
    await a.mgr.elected();
    const b = startReplica(ctx.server, 'b', ns, 'lock');
    ctx.replicas.push(b);
    await waitFor(() => a.stamps >= 3, 'A stamping');
    const before = await lease(ns);
    const history = watchLeases(ctx.api, ns);
    await waitFor(() => history.writes.length > 0, 'the Lease watch');
    const tStop = Date.now();
    a.stop.abort(); // A's signal is aborted before the release runs
    expect(await a.done).toBeUndefined();
    await waitFor(() => b.stamps >= 1, 'B leading', 10_000);
    // The watch delivers the Lease writes in order; wait until it has shown B's acquire too.
    await waitFor(() => history.writes.some((w) => w.holder === 'b'), "B's acquire in the Lease history");
    history.stop();
    const after = history.writes.filter((w) => w.time >= tStop);
    const releases = after.filter((w) => w.holder === '');
    expect(releases).toHaveLength(1);
    const release = releases[0]!;
    expect(release.leaseDurationSeconds).toBe(1);
    expect(release.leaseTransitions).toBe(before.spec?.leaseTransitions);
    // Every write of A after the stop came before the release (renews until the elector was stopped).
    expect(after.slice(0, after.indexOf(release)).every((w) => w.holder === 'a')).toBe(true);
    // B's acquire is its next attempt — retry period × (1 + 1.2 × jitter) at most — not a lease expiry.
    const bAcquire = after.find((w) => w.holder === 'b');
    expect(bAcquire?.leaseTransitions).toBe((before.spec?.leaseTransitions ?? 0) + 1);
    expect((bAcquire?.time ?? Number.POSITIVE_INFINITY) - release.time).toBeLessThan(
      FAST.retryPeriodMs * 2.2 + 400,
    );
    // A's leader-only work had stopped before the release was written.
    const stampsA = ctx.server.faults.requests({ verb: 'patch', name: 'stamp-a', namespace: ns });
    expect(Math.max(...stampsA.map((r) => r.time))).toBeLessThanOrEqual(release.time);
  });

  it('C22: the released Lease itself is valid (holder empty, leaseDurationSeconds 1, transitions unchanged)', async () => {
    const ns = await namespace();
    const a = startReplica(ctx.server, 'a', ns, 'lock', { releaseOnCancel: true });
    ctx.replicas.push(a);
    await a.mgr.elected();
    const before = await lease(ns);
    a.stop.abort();
    await a.done;
    const after: LeaseObject = await lease(ns);
    expect(after.spec).toMatchObject({
      holderIdentity: '',
      leaseDurationSeconds: 1,
      leaseTransitions: before.spec?.leaseTransitions,
    });
  });

  it('C22 (409): a third writer bumps the Lease just before the release — A logs once, does not loop; B takes over after expiry', async () => {
    const ns = await namespace();
    const records: LogRecord[] = [];
    const a = startReplica(ctx.server, 'a', ns, 'lock', {
      releaseOnCancel: true,
      logger: captureLogger(records),
    });
    ctx.replicas.push(a);
    await a.mgr.elected();
    const b = startReplica(ctx.server, 'b', ns, 'lock');
    ctx.replicas.push(b);
    // Right after one of A's renews, a third writer changes the Lease; then A stops.
    const rv = (await lease(ns)).metadata?.resourceVersion;
    await waitFor(async () => (await lease(ns)).metadata?.resourceVersion !== rv, 'a renew of A');
    const cur = await lease(ns);
    await ctx.api.update(LeaseKind, { ...cur, metadata: { ...cur.metadata, labels: { bumped: 'yes' } } });
    const bumpedAt = Date.now();
    a.stop.abort();
    await a.done;
    const puts = ctx.server.faults.requests({
      resource: 'leases',
      namespace: ns,
      method: 'PUT',
      since: bumpedAt,
    });
    expect(puts.filter((r) => r.status === 409)).toHaveLength(1);
    expect(records.filter((r) => /failed to release/.test(r.msg))).toHaveLength(1);
    await waitFor(() => b.stamps >= 1, 'B leading after expiry', 10_000);
    const firstB = Math.min(
      ...ctx.server.faults.requests({ verb: 'patch', name: 'stamp-b', namespace: ns }).map((r) => r.time),
    );
    expect(firstB - bumpedAt).toBeGreaterThanOrEqual(FAST.leaseDurationMs - 100);
  });

  it('C22: a manager that never led writes no Lease on shutdown', async () => {
    const ns = await namespace();
    await ctx.api.create(LeaseKind, {
      metadata: { namespace: ns, name: 'lock' },
      spec: { holderIdentity: 'someone-else', leaseDurationSeconds: 3600 },
    });
    const c = startReplica(ctx.server, 'c', ns, 'lock', { releaseOnCancel: true });
    ctx.replicas.push(c);
    await waitFor(
      () => ctx.server.faults.requests({ resource: 'leases', namespace: ns, verb: 'get' }).length >= 2,
      'C trying',
    );
    const t = Date.now();
    c.stop.abort();
    await c.done;
    expect(
      ctx.server.faults
        .requests({ resource: 'leases', namespace: ns, since: t })
        .filter((r) => r.method !== 'GET'),
    ).toEqual([]);
    expect(c.led).toEqual([]);
  });
});

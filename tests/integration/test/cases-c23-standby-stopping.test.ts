import { type Manager, newManager, newMetricsRegistry, type Runnable } from '@kubeloop/builder';
import { ConfigMap, isNotFound } from '@kubeloop/client';
import { Lease } from '@kubeloop/client/kinds';
import { onAbort } from '@kubeloop/core';
import { describe, expect, it, vi } from 'vitest';
import { testConfig, useLiveCluster } from './support.js';

// Lease 4 s / renew 3 s: with a 1.5 s renew deadline the leader lost its lease at load 20 mid-test.
const FAST = { leaseDurationMs: 4000, renewDeadlineMs: 3000, retryPeriodMs: 500 };

/** A replica of a leader-elected manager on lease `lease`; `ran` counts starts of its leader-only runnables. */
function replica(identity: string, namespace: string, lease: string) {
  const mgr: Manager = newManager(testConfig(), {
    ...FAST,
    gracefulShutdownTimeoutMs: 5000,
    cache: { defaultNamespaces: [namespace] },
    leaderElection: { id: lease, namespace, identity, releaseOnCancel: true },
    metrics: { registry: newMetricsRegistry() },
  });
  const r = { identity, mgr, ran: 0, stop: new AbortController(), done: Promise.resolve<unknown>(undefined) };
  return r;
}

/** A leader-only runnable that writes `ran-<identity>-<tag>` when it starts, then runs until stopped. */
function stamping(
  r: { identity: string; mgr: Manager; ran: number },
  namespace: string,
  tag: string,
): Runnable {
  return {
    async start(signal) {
      r.ran++;
      // The write gets the runnable's signal and the wait checks it first: a stop that comes while the create
      // is in flight must end the runnable, or the manager's shutdown waits for it until its grace period
      // (a GracefulShutdownTimeoutError from a.done in a fresh-clone CI run).
      await r.mgr
        .getClient()
        .create(ConfigMap, { metadata: { namespace, name: `ran-${r.identity}-${tag}` } }, { signal })
        .catch(() => undefined);
      if (signal.aborted) return;
      await new Promise<void>((resolve) => onAbort(signal, () => resolve()));
    },
  };
}

describe('C23 a standby that is stopping', () => {
  const live = useLiveCluster();

  it('C23: a standby stopped while it waits never starts leader-only work and writes no Lease; a leader-only runnable added to it after start starts exactly once, when it wins', async () => {
    const { api, ns } = await live.namespace('c23');
    const lease = 'c23-lock';
    const exists = async (name: string) =>
      api.get(ConfigMap, { namespace: ns, name }).then(
        () => true,
        (e: unknown) => {
          if (isNotFound(e)) return false;
          throw e;
        },
      );

    const a = replica('a', ns, lease);
    a.mgr.add(stamping(a, ns, 'early'));
    a.done = a.mgr.start(a.stop.signal).catch((e: unknown) => e);
    live.cleanups.push(async () => {
      a.stop.abort();
      await a.done;
    });
    await a.mgr.elected();
    await vi.waitFor(() => expect(a.ran).toBe(1));

    // B waits, then is stopped while waiting.
    const b = replica('b', ns, lease);
    b.mgr.add(stamping(b, ns, 'early'));
    b.done = b.mgr.start(b.stop.signal).catch((e: unknown) => e);
    const leaseBefore = await api.get(Lease, { namespace: ns, name: lease });
    await vi.waitFor(async () => {
      // B has looked at the Lease at least once: A's renewals keep it A's.
      const l = await api.get(Lease, { namespace: ns, name: lease });
      expect(l.spec?.holderIdentity).toBe('a');
    });
    b.stop.abort();
    expect(await b.done).toBeUndefined();
    expect(b.ran).toBe(0);
    expect(await exists('ran-b-early')).toBe(false);
    const leaseAfter = await api.get(Lease, { namespace: ns, name: lease });
    expect(leaseAfter.spec?.holderIdentity).toBe('a');
    expect(leaseAfter.spec?.leaseTransitions ?? 0).toBe(leaseBefore.spec?.leaseTransitions ?? 0);

    // Variant: C waits; a leader-only runnable added after its start runs once, when C wins after A stops.
    const c = replica('c', ns, lease);
    c.done = c.mgr.start(c.stop.signal).catch((e: unknown) => e);
    live.cleanups.push(async () => {
      c.stop.abort();
      await c.done;
    });
    c.mgr.add(stamping(c, ns, 'late'));
    expect(c.ran).toBe(0);
    a.stop.abort(); // releases the lease on cancel
    expect(await a.done).toBeUndefined();
    await c.mgr.elected();
    await vi.waitFor(async () => expect(await exists('ran-c-late')).toBe(true), { timeout: 20_000 });
    expect(c.ran).toBe(1);
    expect((await api.get(Lease, { namespace: ns, name: lease })).spec?.holderIdentity).toBe('c');
  });
});

import { createServer, type Server } from 'node:net';
import { ControllerError, newControllerManagedBy, newManager, type Request } from '@kubeloop/builder';
import { LeaseKind } from '@kubeloop/builder/leaderelection';
import { ConfigMap, isNotFound } from '@kubeloop/client';
import { onAbort } from '@kubeloop/core';
import { SteadyElection } from '@kubeloop/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { liveClient, testConfig, uniqueName, withNamespace } from './support.js';

// The earlier breaker probes of the manager (p6 lifecycle, p11 shutdown with reconciles in flight, p12 a
// bind address already taken), each kept as a test over the real stack. p10 (never two reconciles of one
// key) is builder-watches' "never two concurrent reconciles of one key".
describe('manager lifecycle probes (p6, p11, p12)', () => {
  const api = liveClient();
  let ns: string;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ns = uniqueName('mgr-probes');
    cleanup = await withNamespace(api, ns);
  });
  afterAll(async () => {
    await cleanup?.();
    await api.close();
  });

  // These managers elect because the probes involve a leader (leader-only controllers, the release on stop), not
  // to test election: on a steady election's clock, which a starved process cannot make late (on a real 2 s
  // renew deadline p6 stopped with LeaderElectionLostError while a higher-priority soak starved it).
  const election = new SteadyElection();
  const leaderElection = (id: string, identity = `${id}-a`) => ({
    id,
    namespace: ns,
    elector: election.elector(testConfig(), { identity, namespace: ns, name: id }),
  });

  it('p6: a stop during start (aborted twice) ends start without an error; a second start is refused', async () => {
    const mgr = newManager(testConfig(), {
      leaderElection: leaderElection('p6-early'),
      cache: { defaultNamespaces: [ns] },
      metrics: { bindAddress: '127.0.0.1:0' },
      health: { bindAddress: '127.0.0.1:0' },
    });
    newControllerManagedBy(mgr)
      .for(ConfigMap)
      .named('p6-early')
      .complete({ reconcile: async () => undefined });
    const ac = new AbortController();
    const run = mgr.start(ac.signal);
    await new Promise<void>((resolve) => setImmediate(resolve));
    ac.abort();
    ac.abort();
    await expect(run).resolves.toBeUndefined();
    await expect(mgr.start(new AbortController().signal)).rejects.toThrow(ControllerError);
  });

  it('p6: a controller added after the election reconciles one key at a time; /readyz is 200; the Lease is released on stop', async () => {
    const mgr = newManager(testConfig(), {
      leaderElection: leaderElection('p6-late', 'p6-late-a'),
      cache: { defaultNamespaces: [ns] },
      health: { bindAddress: '127.0.0.1:0' },
    });
    const ac = new AbortController();
    const run = mgr.start(ac.signal);
    try {
      await mgr.elected();
      let inflight = 0;
      let maxInflight = 0;
      let reconciles = 0;
      newControllerManagedBy(mgr)
        .for(ConfigMap)
        .named('p6-late')
        .withOptions({ maxConcurrentReconciles: 4 })
        .complete({
          async reconcile(_ctx, req: Request) {
            if (req.name !== 'p6') return;
            reconciles++;
            inflight++;
            maxInflight = Math.max(maxInflight, inflight);
            await new Promise<void>((resolve) => setImmediate(resolve));
            inflight--;
          },
        });
      await api.create(ConfigMap, { metadata: { namespace: ns, name: 'p6' } });
      for (let i = 0; i < 10; i++) {
        await api.patch(
          ConfigMap,
          { namespace: ns, name: 'p6' },
          { type: 'merge', data: { data: { i: String(i) } } },
        );
      }
      await vi.waitFor(() => expect(reconciles).toBeGreaterThanOrEqual(2), { timeout: 15_000 });
      await vi.waitFor(
        async () => expect((await fetch(`http://${mgr.healthProbeServerAddress()}/readyz`)).status).toBe(200),
        { timeout: 15_000 },
      );
      expect(maxInflight).toBe(1);
    } finally {
      ac.abort();
      ac.abort();
      await run;
    }
    const lease = await api.get(LeaseKind, { namespace: ns, name: 'p6-late' });
    expect(lease.spec?.holderIdentity ?? '').toBe('');
  });

  it('p11: when start resolves no reconcile is in flight, and none starts afterwards', async () => {
    const mgr = newManager(testConfig(), { cache: { defaultNamespaces: [ns] } });
    let inflight = 0;
    let started = 0;
    let startedBeforeAbort = 0;
    newControllerManagedBy(mgr)
      .for(ConfigMap)
      .named('p11')
      .withOptions({ maxConcurrentReconciles: 8 })
      .complete({
        async reconcile(ctx, req: Request) {
          if (!req.name.startsWith('p11-')) return;
          started++;
          inflight++;
          try {
            // Held until the stop: the reconcile returns when its signal aborts.
            await new Promise<void>((resolve) => {
              onAbort(ctx.signal, () => resolve());
            });
          } finally {
            inflight--;
          }
          throw new Error('requeue me');
        },
      });
    for (let i = 0; i < 5; i++)
      await api.create(ConfigMap, { metadata: { namespace: ns, name: `p11-${i}` } });
    const ac = new AbortController();
    const run = mgr.start(ac.signal);
    await vi.waitFor(() => expect(inflight).toBe(5), { timeout: 15_000 });
    startedBeforeAbort = started;
    ac.abort();
    await run;
    expect(inflight).toBe(0);
    // Failed reconciles were requeued with backoff; a stopped controller must not run them.
    for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => setImmediate(resolve));
    expect(started).toBe(startedBeforeAbort);
  });

  describe('p12: a bind address already in use', () => {
    let blocker: Server;
    let taken: string;
    beforeAll(async () => {
      blocker = createServer();
      await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
      const a = blocker.address();
      taken = `127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
    });
    afterAll(async () => {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    });

    it.each([
      ['metrics', false],
      ['health', false],
      ['health', true],
    ] as const)(
      '%s.bindAddress taken (leader election: %s): start rejects with EADDRINUSE before any reconcile or Lease write',
      async (option, elect) => {
        const id = `p12-${option.toLowerCase().slice(0, 6)}-${elect}`;
        const mgr = newManager(testConfig(), {
          [option]: { bindAddress: taken },
          leaderElection: elect ? leaderElection(id) : undefined,
          cache: { defaultNamespaces: [ns] },
        });
        let reconciles = 0;
        newControllerManagedBy(mgr)
          .for(ConfigMap)
          .named(id)
          .complete({
            async reconcile() {
              reconciles++;
            },
          });
        const ac = new AbortController();
        await expect(mgr.start(ac.signal)).rejects.toMatchObject({ code: 'EADDRINUSE' });
        expect(reconciles).toBe(0);
        if (elect) {
          const lease = await api.get(LeaseKind, { namespace: ns, name: id }).catch((e: unknown) => e);
          expect(isNotFound(lease)).toBe(true);
        }
      },
    );
  });
});

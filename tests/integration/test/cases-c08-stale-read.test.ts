import { newControllerManagedBy, newManager } from '@kubeloop/builder';
import { ConfigMap, isNotFound } from '@kubeloop/client';
import type { V1ConfigMap } from '@kubeloop/client/models';
import { describe, expect, it } from 'vitest';
import { realCluster, useFaultServer } from './support/fault-server.js';
import { captureLogger, type LogRecord, waitFor } from './support.js';

describe.skipIf(realCluster)('C08 stale read after own write (envtest fault injection)', () => {
  const ctx = useFaultServer('kubeloop-c08');

  const children = async (ns: string, parent: string) =>
    (await ctx.api.list(ConfigMap, { namespace: ns, labelSelector: { parent } })).items;

  /**
   * A manager whose controller ensures one child ConfigMap per parent ConfigMap (label role=parent), reading
   * through the manager's cache and naming the child after the parent (controller-runtime's pattern).
   */
  function childController(ns: string, records: LogRecord[]) {
    const mgr = newManager(ctx.config, {
      logger: captureLogger(records),
      cache: { defaultNamespaces: [ns] },
    });
    const client = mgr.getClient();
    const reconciles: string[] = [];
    /** 'ok' or 'error' per finished reconcile, in order. */
    const outcomes: string[] = [];
    newControllerManagedBy(mgr)
      .for(ConfigMap)
      .named('one-child')
      .withEventFilter<V1ConfigMap>({
        create: (o) => o.metadata?.labels?.role === 'parent',
        update: (_old, o) => o.metadata?.labels?.role === 'parent',
        delete: () => false,
      })
      .complete({
        async reconcile(ctx, req) {
          try {
            await ensureChild(req);
            outcomes.push('ok');
          } catch (err) {
            outcomes.push('error');
            throw err;
          }
          ctx.log.debug({}, 'reconciled');
        },
      });
    async function ensureChild(req: { namespace: string; name: string }) {
      reconciles.push(req.name);
      try {
        await client.get(ConfigMap, req); // the cache
      } catch (err) {
        if (isNotFound(err)) return;
        throw err;
      }
      const existing = await client.list(ConfigMap, {
        namespace: req.namespace,
        labelSelector: { parent: req.name },
      });
      if (existing.items.length > 0) return;
      // A create that loses to our own earlier write throws AlreadyExists (409): the controller requeues
      // it with backoff, and the next reconcile finds the child once the cache has caught up.
      await client.create(ConfigMap, {
        metadata: {
          namespace: req.namespace,
          // Deterministic: a second create of the same child cannot succeed (a generated name would).
          name: `${req.name}-child`,
          labels: { parent: req.name },
        },
      });
    }
    const ac = new AbortController();
    const run = mgr.start(ac.signal);
    ctx.cleanups.push(async () => {
      ac.abort();
      await run;
    });
    return { reconciles, outcomes };
  }

  async function staleReadScenario(ns: string) {
    const records: LogRecord[] = [];
    const { reconciles, outcomes } = childController(ns, records);
    // The child's ADDED event reaches watches 2 s late; other objects' events overtake it.
    const delayed = ctx.server.faults.delayEvents({
      namespace: ns,
      name: 'p1-child',
      delayMs: 2000,
      order: 'object',
      eventTypes: ['ADDED'],
    });
    await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: 'p1', labels: { role: 'parent' } } });
    await waitFor(async () => (await children(ns, 'p1')).length >= 1, 'the first child at the server');
    // A second reconcile of the parent at once, while the cache has not seen the child yet.
    const before = reconciles.length;
    await ctx.api.patch(
      ConfigMap,
      { namespace: ns, name: 'p1' },
      { type: 'merge', data: { data: { n: '2' } } },
    );
    await waitFor(() => reconciles.length > before, 'the second reconcile');
    return { records, reconciles, outcomes, delayed };
  }

  it('C08: a second reconcile before the cache sees our own child never creates two children; the 409 requeues with backoff', async () => {
    const ns = await ctx.namespace('c08');
    const t0 = Date.now();
    const { records, outcomes, delayed } = await staleReadScenario(ns);
    let max = 0;
    // Until the delayed ADDED has been delivered and a reconcile after the conflicts succeeded, sample the server.
    await waitFor(
      async () => {
        max = Math.max(max, (await children(ns, 'p1')).length);
        return delayed.hits >= 1 && outcomes.includes('error') && outcomes.at(-1) === 'ok';
      },
      () =>
        `the delayed event delivered and a successful reconcile after the conflicts (hits ${delayed.hits}, outcomes ${outcomes.join()})`,
    );
    max = Math.max(max, (await children(ns, 'p1')).length);
    expect(max).toBe(1);
    const creates = ctx.server.faults.requests({
      method: 'POST',
      resource: 'configmaps',
      namespace: ns,
      since: t0,
    });
    const conflicts = creates.filter((r) => r.status === 409);
    expect(conflicts.length).toBeGreaterThanOrEqual(1);
    // Requeued with backoff, not in a tight loop: the 2 s of staleness cost a handful of creates. That the waits
    // grow per item (5 ms, 10 ms, 20 ms, ...) is the rate limiter's contract, proven on a FakeClock in
    // @kubeloop/workqueue's tests; comparing gaps between requests as the server saw them here was a timing
    // assertion (a first gap stretched by a loaded machine, 551 ms against a last of 260 ms, failed it).
    expect(conflicts.length).toBeLessThan(20);
    expect(
      records.filter((r) => r.msg === 'Reconciler error').every((r) => String(r.err).includes('exists')),
    ).toBe(true);
  });
});

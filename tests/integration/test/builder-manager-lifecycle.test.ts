import { GracefulShutdownTimeoutError, newControllerManagedBy, newManager } from '@kubeloop/builder';
import { ConfigMap, type KubeObject, kind } from '@kubeloop/client';
import { describe, expect, it, vi } from 'vitest';
import { installCRD } from './support/crds.js';
import { realCluster, useFaultServer } from './support/fault-server.js';
import { captureLogger, type LogRecord, waitFor } from './support.js';

/** Manager lifecycle races, with the API server's replies held or failed by envtest's faults. */
describe.skipIf(realCluster)('manager lifecycle races (envtest fault injection)', () => {
  const ctx = useFaultServer('kubeloop-builder-lifecycle');

  it('a controller added while the cache syncs starts once, after the sync', async () => {
    const ns = await ctx.namespace('late-ctrl');
    await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: 'a' } });
    // The first list is held until the test clears the rule (a barrier that is never reached).
    const held = ctx.server.faults.delayRequests({
      match: { initialList: true, namespace: ns },
      barrier: 1000,
      delayMs: 60_000,
      times: 1,
    });
    const records: LogRecord[] = [];
    const mgr = newManager(ctx.config, {
      logger: captureLogger(records),
      cache: { defaultNamespaces: [ns] },
    });
    // A read through the cache creates the informer now, so the manager's sync waits on the held list.
    const read = mgr.getClient().list(ConfigMap, { namespace: ns });
    const ac = new AbortController();
    const run = mgr.start(ac.signal);
    ctx.cleanups.push(async () => {
      ac.abort();
      await run;
    });
    // waitFor, not expect.poll: the poll gives up after 1 s, which a loaded box overran before the list came.
    await waitFor(() => held.hits === 1, 'the initial list held at the server');
    const reconciled: string[] = [];
    newControllerManagedBy(mgr)
      .for(ConfigMap)
      .named('late')
      .complete({
        async reconcile(_ctx, req) {
          reconciled.push(req.name);
        },
      });
    held.clear();
    await read;
    await vi.waitFor(() => expect(reconciled).toContain('a'), { timeout: 10_000 });
    expect(records.filter((r) => r.msg === 'Starting workers' && r.controller === 'late')).toHaveLength(1);
    expect(records.filter((r) => r.level === 'error')).toEqual([]);
    // A live change after the start reaches it too.
    await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: 'b' } });
    await vi.waitFor(() => expect(reconciled).toContain('b'), { timeout: 10_000 });
  });

  it('discovery answering 503 while the API server restarts does not stop the manager; the kind source retries until it resolves', async () => {
    const Gadget = kind<KubeObject>('lifecycle.example.com/v1', 'Gadget');
    await installCRD(ctx.api, {
      group: 'lifecycle.example.com',
      kind: 'Gadget',
      plural: 'gadgets',
      scope: 'Namespaced',
    });
    const ns = await ctx.namespace('discovery-503');
    await ctx.api.create(Gadget, { metadata: { namespace: ns, name: 'g1' } });
    // Every discovery request of the next few fails with a 503 (the new manager's RESTMapper starts empty).
    const outage = ctx.server.faults.failRequests({
      match: { pathPattern: '^/apis(/lifecycle\\.example\\.com(/v1)?)?$' },
      status: 503,
      times: 3,
    });
    const records: LogRecord[] = [];
    const mgr = newManager(ctx.config, {
      logger: captureLogger(records),
      cache: { defaultNamespaces: [ns] },
    });
    const reconciled: string[] = [];
    newControllerManagedBy(mgr)
      .for(Gadget)
      .complete({
        async reconcile(_ctx, req) {
          reconciled.push(req.name);
        },
      });
    const ac = new AbortController();
    let failed: unknown;
    const run = mgr.start(ac.signal).catch((e: unknown) => {
      failed = e;
    });
    ctx.cleanups.push(async () => {
      ac.abort();
      await run;
    });
    await vi.waitFor(() => expect(reconciled).toContain('g1'), { timeout: 20_000 });
    expect(outage.hits).toBeGreaterThanOrEqual(1);
    expect(failed).toBeUndefined();
    // The 503 was logged once, with the error itself, however many lookups it failed.
    const lookups = records.filter((r) => /looking up the kind failed/.test(r.msg));
    expect(lookups).toHaveLength(1);
    expect(lookups[0]?.err).toMatchObject({ status: { code: 503 } });
  });

  it('stopping is bounded by the grace period even while a request of a reconcile is held by the server', async () => {
    const ns = await ctx.namespace('held-write');
    await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: 'trigger' } });
    // The reconcile's write is held at the server (a barrier that is never reached) and ignores the stop signal.
    const held = ctx.server.faults.delayRequests({
      match: { verb: 'create', namespace: ns },
      barrier: 1000,
      delayMs: 60_000,
    });
    const mgr = newManager(ctx.config, {
      gracefulShutdownTimeoutMs: 500,
      cache: { defaultNamespaces: [ns] },
    });
    let write: unknown = 'pending';
    const client = mgr.getClient();
    newControllerManagedBy(mgr)
      .for(ConfigMap)
      .complete({
        async reconcile(_ctx, req) {
          if (req.name !== 'trigger') return;
          write = await client.create(ConfigMap, { metadata: { namespace: ns, name: 'child' } }).then(
            () => 'written',
            (e: unknown) => e,
          );
        },
      });
    const ac = new AbortController();
    let outcome: unknown = 'running';
    const run = mgr.start(ac.signal).then(
      () => {
        outcome = undefined;
      },
      (e: unknown) => {
        outcome = e;
      },
    );
    ctx.cleanups.push(() => run);
    await vi.waitFor(() => expect(held.hits).toBe(1), { timeout: 20_000 });
    ac.abort();
    // Before the fix the manager awaited a graceful close of the connection pool, i.e. the held request (60 s).
    await vi.waitFor(() => expect(outcome).not.toBe('running'), { timeout: 10_000 });
    expect(outcome).toBeInstanceOf(GracefulShutdownTimeoutError);
    // Past the grace period the connections are destroyed: the held write fails now, not after 60 s.
    await vi.waitFor(() => expect(write).toBeInstanceOf(Error), { timeout: 10_000 });
  });
  it('a request held by the server outside any runnable is destroyed at the grace period, after the graceful close of the connections has started', async () => {
    const ns = await ctx.namespace('held-outside');
    // Every runnable stops at once, so the manager starts a graceful close of its connections, which waits on
    // this held write; at the grace period it must force them (a force after a started graceful close once
    // destroyed nothing: undici forgets its connections once closing — the loaded-run failure of the test above).
    const held = ctx.server.faults.delayRequests({
      match: { verb: 'create', namespace: ns },
      barrier: 1000,
      delayMs: 60_000,
    });
    const records: LogRecord[] = [];
    const mgr = newManager(ctx.config, {
      gracefulShutdownTimeoutMs: 500,
      logger: captureLogger(records),
      cache: { defaultNamespaces: [ns] },
    });
    const ac = new AbortController();
    let outcome: unknown = 'running';
    const run = mgr.start(ac.signal).then(
      () => {
        outcome = undefined;
      },
      (e: unknown) => {
        outcome = e;
      },
    );
    ctx.cleanups.push(() => run);
    let write: unknown = 'pending';
    void mgr
      .getClient()
      .create(ConfigMap, { metadata: { namespace: ns, name: 'child' } })
      .then(
        () => {
          write = 'written';
        },
        (e: unknown) => {
          write = e;
        },
      );
    await vi.waitFor(() => expect(held.hits).toBe(1), { timeout: 20_000 });
    ac.abort();
    await vi.waitFor(() => expect(outcome).not.toBe('running'), { timeout: 10_000 });
    expect(outcome).toBeInstanceOf(GracefulShutdownTimeoutError);
    await vi.waitFor(() => expect(write).toBeInstanceOf(Error), { timeout: 10_000 });
  });
});

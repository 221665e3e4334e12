import { ConfigMap, isNotFound, Namespace, newClient } from '@kubeloop/client';
import type { RestConfig } from '@kubeloop/config';
import { FakeClock } from '@kubeloop/core/testing';
import type { ApiServer } from '@kubeloop/envtest';
import { describe, expect, it, vi } from 'vitest';
import { newControllerManagedBy, newManager, newMetricsRegistry, type Request } from '../../src/index.js';
import { LeaseKind } from '../../src/leaderelection/resource-lock.js';
import { rendezvousOwner } from '../../src/sharding/hash.js';
import {
  memberRecord,
  newSharding,
  SHARD_DRAINED_ANNOTATION,
  SHARD_NAME_LABEL,
  ShardingConfigError,
} from '../../src/sharding/index.js';
import { offlineConfig, useEnvtest } from '../support/config.js';

const offline = offlineConfig('sharding-test');

describe('newSharding options', () => {
  it.each([
    [{ name: '', namespace: 'ns' }, /name is empty/],
    [{ name: 'n', namespace: '' }, /namespace is empty/],
    [{ name: 'n', namespace: 'ns', identity: 'Host_1' }, /identity "Host_1"/],
    [
      { name: 'n', namespace: 'ns', leaseDurationMs: 1000, renewDeadlineMs: 1000 },
      /leaseDurationMs > renewDeadlineMs/,
    ],
    [
      { name: 'n', namespace: 'ns', renewDeadlineMs: 2000, retryPeriodMs: 2000 },
      /renewDeadlineMs > retryPeriodMs/,
    ],
  ])('refuses %j with a ShardingConfigError', (options, message) => {
    const mgr = newManager(offline, { metrics: { registry: newMetricsRegistry() } });
    expect(() => newSharding(mgr, options)).toThrow(ShardingConfigError);
    expect(() => newSharding(mgr, options)).toThrow(message);
  });

  it('makes a valid default identity and reads member records from Leases', () => {
    const mgr = newManager(offline, { metrics: { registry: newMetricsRegistry() } });
    const s = newSharding(mgr, { name: 'n', namespace: 'ns' });
    expect(s.identity).toMatch(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
    expect(s.shardKey({ namespace: 'a', name: 'b' })).toBe('a/b');
    expect(
      memberRecord({
        metadata: { resourceVersion: '7', annotations: { [SHARD_DRAINED_ANNOTATION]: 'x,y' } },
        spec: { holderIdentity: 'x' },
      }),
    ).toEqual({ identity: 'x', version: '7', drainedFor: ['x', 'y'] });
    expect(
      memberRecord({ metadata: { resourceVersion: '8' }, spec: { holderIdentity: 'x' } }).drainedFor,
    ).toBe(undefined);
  });
});

/** A manager with a one-replica sharding group `cms` on a FakeClock (ticks run only when the clock is stepped). */
function fakeClockSharding(config: RestConfig, ns: string) {
  const mgr = newManager(config, {
    cache: { defaultNamespaces: [ns] },
    metrics: { registry: newMetricsRegistry() },
  });
  const clock = new FakeClock(1_000_000);
  const sharding = newSharding(mgr, {
    name: 'cms',
    namespace: ns,
    identity: 'solo',
    clock,
    leaseDurationMs: 60_000,
    renewDeadlineMs: 30_000,
    retryPeriodMs: 1000,
  });
  /** Steps the clock a retry period at a time until `check` passes. */
  const stepUntil = (check: () => void) =>
    vi.waitFor(
      () => {
        clock.step(1000);
        check();
      },
      { timeout: 15_000, interval: 50 },
    );
  return { mgr, clock, sharding, stepUntil };
}

/**
 * Fences the replica with a renew in flight: holds the next Lease renew at the server, lets a tick send it,
 * then moves the clock to the renew deadline of the last successful renew. `clear()` lets the renew succeed.
 */
async function fenceWithRenewHeld(
  server: ApiServer,
  ns: string,
  f: ReturnType<typeof fakeClockSharding>,
): Promise<{ hits: number; clear(): void }> {
  const held = server.faults.delayRequests({
    match: { resource: 'leases', namespace: ns, method: 'PUT' },
    barrier: 1_000_000,
    delayMs: 60_000,
  });
  await f.stepUntil(() => expect(held.hits).toBeGreaterThanOrEqual(1));
  f.clock.step(f.sharding.state.fenceAt() - f.clock.now());
  expect(f.sharding.state.fenced).toBe(true);
  return held;
}

describe('Sharding on one replica (envtest)', () => {
  const env = useEnvtest('sharding-test');

  it('holds its member Lease with its acknowledgement, reconciles every key alone, reports metrics, and deletes the Lease on stop', async () => {
    const api = newClient(env.config);
    const ns = 'shard-unit';
    await api.create(Namespace, { metadata: { name: ns } });
    for (let i = 0; i < 20; i++)
      await api.create(ConfigMap, { metadata: { namespace: ns, name: `cm-${i}` } });
    const registry = newMetricsRegistry();
    const mgr = newManager(env.config, {
      cache: { defaultNamespaces: [ns] },
      metrics: { registry },
    });
    const sharding = newSharding(mgr, {
      name: 'cms',
      namespace: ns,
      identity: 'solo',
      leaseDurationMs: 2000,
      renewDeadlineMs: 1500,
      retryPeriodMs: 200,
    });
    const seen = new Set<string>();
    sharding.complete(newControllerManagedBy(mgr), ConfigMap, {
      async reconcile(_ctx, req: Request) {
        seen.add(`${req.namespace}/${req.name}`);
      },
    });
    const stop = new AbortController();
    const done = mgr.start(stop.signal);
    try {
      await vi.waitFor(() => expect(seen.size).toBeGreaterThanOrEqual(20), { timeout: 15_000 });
      const lease = await api.get(LeaseKind, { namespace: ns, name: 'cms-shard-solo' });
      expect(lease.metadata?.labels?.[SHARD_NAME_LABEL]).toBe('cms');
      expect(lease.metadata?.annotations?.[SHARD_DRAINED_ANNOTATION]).toBe('solo');
      expect(lease.spec?.holderIdentity).toBe('solo');
      await vi.waitFor(
        async () => {
          const text = await registry.metrics();
          expect(text).toMatch(/kubeloop_shard_members\{name="cms"\} 1/);
          // kube-root-ca.crt may be cached too: at least the 20 test ConfigMaps
          const owned = Number(/kubeloop_shard_owned_keys\{name="cms"\} (\d+)/.exec(text)?.[1]);
          expect(owned).toBeGreaterThanOrEqual(20);
          expect(text).toMatch(/kubeloop_shard_handover_seconds_count\{name="cms"\} [1-9]/);
        },
        { timeout: 5000 },
      );
    } finally {
      stop.abort();
      await done;
    }
    // Released on stop: the Lease is gone.
    const after = await api
      .get(LeaseKind, { namespace: ns, name: 'cms-shard-solo' })
      .catch((e: unknown) => e);
    expect(isNotFound(after)).toBe(true);
    await api.close();
  });
  it('deletes its member Lease on stop even when the stop aborts a Lease write in flight', async () => {
    // Seen as a Lease left behind by pod-counter --shards under load: the aborted write cleared what the
    // replica knew of its Lease, and the release on stop was skipped without a word.
    const api = newClient(env.config);
    const ns = 'shard-stop-mid-write';
    await api.create(Namespace, { metadata: { name: ns } });
    const mgr = newManager(env.config, {
      cache: { defaultNamespaces: [ns] },
      metrics: { registry: newMetricsRegistry() },
    });
    const sharding = newSharding(mgr, {
      name: 'cms',
      namespace: ns,
      identity: 'solo',
      leaseDurationMs: 60_000,
      renewDeadlineMs: 30_000,
      retryPeriodMs: 200,
    });
    sharding.complete(newControllerManagedBy(mgr), ConfigMap, { async reconcile() {} });
    const stop = new AbortController();
    const done = mgr.start(stop.signal);
    let held: { hits: number; clear(): void } | undefined;
    try {
      await vi.waitFor(
        async () => {
          const lease = await api.get(LeaseKind, { namespace: ns, name: 'cms-shard-solo' });
          expect(lease.metadata?.annotations?.[SHARD_DRAINED_ANNOTATION]).toBe('solo');
        },
        { timeout: 15_000 },
      );
      // Hold the next renewal at the server (released when the rule is cleared), then stop mid-write.
      held = env.server.faults.delayRequests({
        match: { resource: 'leases', namespace: ns, method: 'PUT' },
        barrier: 1_000_000,
        delayMs: 60_000,
      });
      await vi.waitFor(() => expect(held?.hits).toBeGreaterThanOrEqual(1), { timeout: 15_000 });
    } finally {
      stop.abort();
      await done;
      held?.clear();
    }
    const after = await api
      .get(LeaseKind, { namespace: ns, name: 'cms-shard-solo' })
      .catch((e: unknown) => e);
    expect(isNotFound(after)).toBe(true);
    await api.close();
  });

  it('reconciles a change whose event came while the fence timer had fenced it, once a renew in flight succeeds', async () => {
    // Seen as lost changes in the multi-cluster chaos profile (seed 2127074336) on a starved event loop: the fence timer fired
    // while a renew was in flight (the view went empty, so the event was filtered out as not owned), the renew
    // then succeeded and the view came back before the next refresh, which saw the key as permitted already
    // and never enqueued it again.
    const api = newClient(env.config);
    const ns = 'shard-fence-timer';
    await api.create(Namespace, { metadata: { name: ns } });
    await api.create(ConfigMap, { metadata: { namespace: ns, name: 'cm' }, data: { v: '0' } });
    const f = fakeClockSharding(env.config, ns);
    const { mgr, clock, sharding } = f;
    const seen: string[] = [];
    sharding.complete(newControllerManagedBy(mgr), ConfigMap, {
      async reconcile(_ctx, req) {
        const cm = await mgr.getClient().get(ConfigMap, req);
        seen.push(cm.data?.v ?? '');
      },
    });
    const stop = new AbortController();
    const done = mgr.start(stop.signal);
    let held: { hits: number; clear(): void } | undefined;
    try {
      await f.stepUntil(() => expect(seen).toContain('0'));
      // The renew deadline of the last successful renew passes while a renew (sent later) is in flight: fenced.
      held = await fenceWithRenewHeld(env.server, ns, f);
      await api.patch(
        ConfigMap,
        { namespace: ns, name: 'cm' },
        { type: 'merge', data: { data: { v: '1' } } },
      );
      await vi.waitFor(async () =>
        expect((await mgr.getClient().get(ConfigMap, { namespace: ns, name: 'cm' })).data?.v).toBe('1'),
      );
      // The renew sent before the deadline succeeds (the clock stands still meanwhile): no longer fenced, the
      // view is back, and the change is reconciled on the following ticks.
      held.clear();
      await vi.waitFor(() => expect(sharding.state.view).toEqual(['solo']), { timeout: 15_000 });
      await f.stepUntil(() => expect(seen).toContain('1'));
    } finally {
      held?.clear();
      stop.abort();
      clock.step(60_000);
      await done;
    }
    await api.close();
  });

  it('reconciles a deletion whose event came while it was fenced, once it is no longer fenced', async () => {
    // The kind of the multi-cluster chaos profile's lost changes: while fenced a replica owns nothing, so the
    // ownership filter drops the key's DELETE; the refresh after the fence re-enqueues every permitted key of
    // the cache, but the deleted object is no longer in the cache, so its deletion was never reconciled.
    const api = newClient(env.config);
    const ns = 'shard-fenced-delete';
    await api.create(Namespace, { metadata: { name: ns } });
    await api.create(ConfigMap, { metadata: { namespace: ns, name: 'cm' }, data: { v: '0' } });
    const f = fakeClockSharding(env.config, ns);
    const { mgr, clock, sharding } = f;
    const seen: string[] = [];
    sharding.complete(newControllerManagedBy(mgr), ConfigMap, {
      async reconcile(_ctx, req) {
        const cm = await mgr
          .getClient()
          .get(ConfigMap, req)
          .catch((e: unknown) => (isNotFound(e) ? undefined : Promise.reject(e)));
        seen.push(cm ? `${req.name}=${cm.data?.v ?? ''}` : `${req.name} gone`);
      },
    });
    const stop = new AbortController();
    const done = mgr.start(stop.signal);
    let held: { hits: number; clear(): void } | undefined;
    try {
      await f.stepUntil(() => expect(seen).toContain('cm=0'));
      held = await fenceWithRenewHeld(env.server, ns, f);
      // The DELETE arrives while fenced, and the cache drops the object.
      await api.delete(ConfigMap, { namespace: ns, name: 'cm' });
      await vi.waitFor(async () => {
        const got = await mgr
          .getClient()
          .get(ConfigMap, { namespace: ns, name: 'cm' })
          .catch((e: unknown) => e);
        expect(isNotFound(got)).toBe(true);
      });
      // The renew succeeds: no longer fenced; the following refreshes must reconcile the deletion.
      held.clear();
      await vi.waitFor(() => expect(sharding.state.view).toEqual(['solo']), { timeout: 15_000 });
      await f.stepUntil(() => expect(seen).toContain('cm gone'));
    } finally {
      held?.clear();
      stop.abort();
      clock.step(60_000);
      await done;
    }
    await api.close();
  });
  it('a multi-cluster attachment admits only owned requests and enqueues the others it dropped once permitted', async () => {
    const api = newClient(env.config);
    const ns = 'shard-attach-admit';
    await api.create(Namespace, { metadata: { name: ns } });
    const f = fakeClockSharding(env.config, ns);
    const { mgr, clock, sharding } = f;
    const queued: Request[] = [];
    const att = sharding.attach(
      { add: (req) => queued.push(req), handlerError: () => undefined },
      async () => [], // the object is gone from the member cluster's cache
      () => true,
      { async reconcile() {} },
    );
    const gone: Request = { cluster: 'member-1', namespace: ns, name: 'gone' };
    // Not started: fenced, it owns nothing, so the DELETE's request is dropped — and remembered.
    expect(att.admit(gone)).toBe(false);
    const stop = new AbortController();
    const done = mgr.start(stop.signal);
    try {
      await f.stepUntil(() => expect(queued).toEqual([gone]));
      expect(att.admit(gone)).toBe(true);
    } finally {
      att.detach();
      stop.abort();
      clock.step(60_000);
      await done;
    }
    await api.close();
  });
});

describe('Sharding on two replicas: keys gained without a new event (envtest)', () => {
  const env = useEnvtest('sharding-gain-test');

  it('a key whose last event came while the other replica owned it is reconciled by this one once the key moves here, without a new event or a requeue', async () => {
    // The ownership filter drops the events of keys another member owns, and a reconciler that does not requeue
    // gets no later event: the key must still be reconciled when it moves here (a leave), from the cache.
    const api = newClient(env.config);
    const ns = 'shard-gain';
    await api.create(Namespace, { metadata: { name: ns } });
    const names = Array.from({ length: 8 }, (_, i) => `cm-${i}`);
    // One key of a and two of b under the view [a, b].
    const [ofB, ofB2] = names.filter((n) => rendezvousOwner(`${ns}/${n}`, ['a', 'b']) === 'b') as [
      string,
      string,
    ];
    const ofA = names.find((n) => rendezvousOwner(`${ns}/${n}`, ['a', 'b']) === 'a') as string;
    expect([ofA, ofB, ofB2].every(Boolean)).toBe(true);
    for (const name of [ofA, ofB, ofB2])
      await api.create(ConfigMap, { metadata: { namespace: ns, name }, data: { v: '0' } });
    // Both replicas on one fake clock: membership ticks run only when the test steps it.
    const clock = new FakeClock(1_000_000);
    const runs: string[] = [];
    const replica = (id: 'a' | 'b') => {
      const registry = newMetricsRegistry();
      const mgr = newManager(env.config, { cache: { defaultNamespaces: [ns] }, metrics: { registry } });
      const sharding = newSharding(mgr, {
        name: 'cms',
        namespace: ns,
        identity: id,
        clock,
        leaseDurationMs: 60_000,
        renewDeadlineMs: 30_000,
        retryPeriodMs: 1000,
      });
      sharding.complete(newControllerManagedBy(mgr), ConfigMap, {
        async reconcile(_ctx, req) {
          const cm = await mgr.getClient().get(ConfigMap, req);
          runs.push(`${id} ${req.name}=${cm.data?.v ?? ''}`);
        },
      });
      const stop = new AbortController();
      return { mgr, registry, sharding, stop, done: mgr.start(stop.signal) };
    };
    const stepUntil = (check: () => void) =>
      vi.waitFor(
        () => {
          clock.step(1000);
          check();
        },
        { timeout: 20_000, interval: 50 },
      );
    const a = replica('a');
    const b = replica('b');
    try {
      await stepUntil(() => {
        for (const r of [a, b]) expect(r.sharding.state.acked).toEqual(['a', 'b']);
        expect(runs).toEqual(expect.arrayContaining([`a ${ofA}=0`, `b ${ofB}=0`]));
      });
      // The last changes of b's keys: a's filter drops their events, b reconciles them.
      for (const name of [ofB, ofB2])
        await api.patch(ConfigMap, { namespace: ns, name }, { type: 'merge', data: { data: { v: '1' } } });
      await vi.waitFor(
        async () => {
          expect(runs).toEqual(expect.arrayContaining([`b ${ofB}=1`, `b ${ofB2}=1`]));
          for (const name of [ofB, ofB2])
            expect((await a.mgr.getClient().get(ConfigMap, { namespace: ns, name })).data?.v).toBe('1');
        },
        { timeout: 20_000 },
      );
      // Two more ticks of a (two renewals of its Lease): a refresh ran after the drops, and a remembers
      // nothing of them (a passed-over event of a cached object is left to the cache listing). So what brings
      // the keys back below is the listing of a's cache.
      const leaseVersion = async () =>
        (await api.get(LeaseKind, { namespace: ns, name: 'cms-shard-a' })).metadata?.resourceVersion;
      const first = await leaseVersion();
      const versions = new Set([first]);
      await vi.waitFor(
        async () => {
          clock.step(1000);
          versions.add(await leaseVersion());
          expect(versions.size).toBeGreaterThanOrEqual(3);
          expect(await a.registry.metrics()).toMatch(/kubeloop_shard_dropped_requests\{name="cms"\} 0\b/);
        },
        { timeout: 20_000, interval: 50 },
      );
      expect(runs).not.toContain(`a ${ofB}=1`);
      // b leaves (graceful: drains and deletes its Lease); its key moves to a, which reconciles it from its cache.
      b.stop.abort();
      await b.done;
      await stepUntil(() => {
        expect(a.sharding.state.view).toEqual(['a']);
        expect(runs).toEqual(expect.arrayContaining([`a ${ofB}=1`, `a ${ofB2}=1`]));
      });
    } finally {
      for (const r of [a, b]) r.stop.abort();
      clock.step(60_000);
      await Promise.all([a.done, b.done]);
      await api.close();
    }
  });
});

import { type ApiClient, isInvalid, isNotFound, Namespace, newClient } from '@kubeloop/client';
import type { RestConfig } from '@kubeloop/config';
import { FakeClock } from '@kubeloop/core/testing';
import { type ApiServer, startApiServer } from '@kubeloop/envtest';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  LeaderElectionConfigError,
  LeaderElector,
  LeaseKind,
  LeaseLock,
  type LeaseObject,
  newResourceLock,
  resolveLeaseNamespace,
} from '../../src/leaderelection/index.js';

/**
 * `vi.waitFor` bounded by the test's own timeout (the project's 30 s), not a shorter timer of its own: the
 * conditions are real HTTP round trips to envtest, which a process starved of CPU makes as late as it is starved.
 * A little under 30 s, so that a failure names the condition instead of reporting a test timeout.
 */
const waitFor = <T>(cb: () => T | Promise<T>, options: { timeout?: number; interval?: number } = {}) =>
  vi.waitFor(cb, { timeout: 28_000, ...options });

// Real HTTP against an in-process envtest; every protocol timer (retry, expiry, renew deadline) runs on a
// FakeClock, so the test moves time instead of waiting for it.
let server: ApiServer;
let config: RestConfig;
let api: ApiClient;
const cleanups: Array<() => Promise<void> | void> = [];
let seq = 0;

beforeAll(async () => {
  server = await startApiServer();
  config = {
    host: server.url,
    tlsClientConfig: { caData: server.caPem },
    bearerToken: server.token,
    qps: -1,
    burst: 0,
    timeoutMs: 0,
    userAgent: 'leader-elector-test',
  };
  api = newClient(config);
  await api.create(Namespace, { metadata: { name: 'le' } });
});
afterEach(async () => {
  server.faults.reset();
  while (cleanups.length) await cleanups.pop()?.();
});
afterAll(async () => {
  await api?.close();
  await server?.stop();
});

function leaseName(): string {
  seq += 1;
  return `lock-${seq}`;
}

/**
 * The Lease lock of `identity`. Its requests may take 30 s of wall time (`requestTimeoutMs`): the protocol's
 * timers are on the test's FakeClock, and a 1 s request timeout on the real clock was the one timer a starved
 * process could beat (a cut acquire parks the elector on a clock that only the test moves). The test of the cut
 * itself passes a short one.
 */
function lockFor(name: string, identity: string, requestTimeoutMs = 30_000): LeaseLock {
  return newResourceLock(config, { id: name, namespace: 'le', identity, requestTimeoutMs });
}

async function readLease(name: string): Promise<LeaseObject | undefined> {
  try {
    return await api.get(LeaseKind, { namespace: 'le', name });
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

interface Started {
  elector: LeaderElector;
  stop: AbortController;
  done: Promise<void>;
  events: string[];
  leaderSignal: () => AbortSignal | undefined;
  gauge: () => number | undefined;
}

/** Runs an elector (lease 3 s, renew deadline 2 s, retry 0.5 s on `clock`) and records what it reports. */
function run(
  name: string,
  identity: string,
  clock: FakeClock,
  { requestTimeoutMs, ...extra }: { releaseOnCancel?: boolean; requestTimeoutMs?: number } = {},
): Started {
  const events: string[] = [];
  let leaderSignal: AbortSignal | undefined;
  let gauge: number | undefined;
  const elector = new LeaderElector({
    lock: lockFor(name, identity, requestTimeoutMs),
    leaseDurationMs: 3000,
    renewDeadlineMs: 2000,
    retryPeriodMs: 500,
    clock,
    random: () => 0,
    ...extra,
    metrics: {
      leaderOn: () => {
        gauge = 1;
      },
      leaderOff: () => {
        gauge = 0;
      },
    },
    callbacks: {
      onStartedLeading: (s) => {
        leaderSignal = s;
        events.push('started');
      },
      onStoppedLeading: ({ lost }) => events.push(lost ? 'lost' : 'stopped'),
      onNewLeader: (id) => events.push(`leader:${id}`),
    },
  });
  const stop = new AbortController();
  const done = elector.run(stop.signal);
  const started = { elector, stop, done, events, leaderSignal: () => leaderSignal, gauge: () => gauge };
  cleanups.push(async () => {
    stop.abort();
    await done;
  });
  return started;
}

/** Waits until the elector is parked on the clock (its request finished), then moves time by `ms`. */
async function step(clock: FakeClock, ms: number, timers = 1): Promise<void> {
  await waitFor(() => expect(clock.pendingTimers()).toBeGreaterThanOrEqual(timers));
  clock.step(ms);
}

describe('LeaderElector (client-go tools/leaderelection) against envtest', () => {
  it('validates leaseDuration > renewDeadline > 1.2 × retryPeriod and positive durations', () => {
    const lock = new LeaseLock({ client: api, namespace: 'le', name: 'x', identity: 'me' });
    expect(() => new LeaderElector({ lock })).not.toThrow();
    expect(() => new LeaderElector({ lock, leaseDurationMs: 10_000 })).toThrow(
      /greater than renewDeadlineMs/,
    );
    expect(() => new LeaderElector({ lock, renewDeadlineMs: 2400 })).toThrow(LeaderElectionConfigError);
    expect(() => new LeaderElector({ lock, retryPeriodMs: 0 })).toThrow(/positive/);
    expect(() => new LeaseLock({ client: api, namespace: 'le', name: 'x', identity: '' })).toThrow(
      /identity/,
    );
    expect(() => resolveLeaseNamespace(undefined, '/nonexistent/namespace')).toThrow(
      /not running in a cluster/,
    );
    // the message names the option to set
    expect(() => resolveLeaseNamespace(undefined, '/nonexistent/namespace')).toThrow(
      /leaderElection\.namespace/,
    );
    expect(resolveLeaseNamespace('given', '/nonexistent')).toBe('given');
  });

  it('envtest validates Leases like kube-apiserver: leaseDurationSeconds 0 is refused (what a release must not write)', async () => {
    const bad = api.create(LeaseKind, {
      metadata: { namespace: 'le', name: leaseName() },
      spec: { holderIdentity: '', leaseDurationSeconds: 0 },
    });
    await expect(bad).rejects.toSatisfy(isInvalid);
  });

  it('acquires a missing lease by creating it and renews it every retry period', async () => {
    const clock = new FakeClock();
    const name = leaseName();
    const a = run(name, 'a', clock);
    await waitFor(() => expect(a.events).toContain('started'));
    expect(a.gauge()).toBe(1);
    const created = await readLease(name);
    expect(created?.spec).toMatchObject({
      holderIdentity: 'a',
      leaseDurationSeconds: 3,
      leaseTransitions: 0,
    });
    expect(created?.spec?.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    const rv = created?.metadata?.resourceVersion;
    await step(clock, 500, 2);
    await waitFor(async () => expect((await readLease(name))?.metadata?.resourceVersion).not.toBe(rv));
    expect(a.elector.isLeader()).toBe(true);
  });

  it('judges expiry on its own clock since it last saw the record change, never by the times written in it', async () => {
    const clock = new FakeClock();
    const name = leaseName();
    // Written by a holder whose clock is decades behind: comparing renewTime with our clock would call it expired.
    await api.create(LeaseKind, {
      metadata: { namespace: 'le', name },
      spec: {
        holderIdentity: 'old',
        leaseDurationSeconds: 3,
        renewTime: '2000-01-01T00:00:00.000000Z',
        acquireTime: '2000-01-01T00:00:00.000000Z',
        leaseTransitions: 4,
      },
    });
    const b = run(name, 'b', clock);
    await waitFor(() => expect(b.events).toContain('leader:old'));
    for (let t = 500; t < 3000; t += 500) {
      await step(clock, 500);
      await waitFor(() =>
        expect(server.faults.requests({ verb: 'get', name }).length).toBeGreaterThan(t / 500),
      );
      expect(b.events).not.toContain('started');
    }
    await step(clock, 500);
    await waitFor(() => expect(b.events).toContain('started'));
    const taken = await readLease(name);
    expect(taken?.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 5 });
  });

  it('a record that changes keeps restarting the wait: a live holder is never overthrown', async () => {
    const clock = new FakeClock();
    const name = leaseName();
    const a = run(name, 'a', clock);
    await waitFor(() => expect(a.events).toContain('started'));
    const bClock = new FakeClock();
    const b = run(name, 'b', bClock);
    await waitFor(() => expect(b.events).toContain('leader:a'));
    for (let i = 0; i < 12; i++) {
      await step(clock, 500, 2); // a renews
      await waitFor(async () =>
        expect(server.faults.requests({ verb: 'update', name }).length).toBeGreaterThanOrEqual(i + 1),
      );
      await step(bClock, 500); // b looks again
    }
    expect(b.events).not.toContain('started');
    expect(a.elector.isLeader()).toBe(true);
  });

  it('C21 (unit): a leader whose renews fail stops leading renewDeadline after its last good renew was sent, and writes nothing more', async () => {
    const clock = new FakeClock();
    const name = leaseName();
    const a = run(name, 'a', clock, { releaseOnCancel: true });
    await waitFor(() => expect(a.events).toContain('started'));
    const acquiredAt = clock.now();
    server.faults.failRequests({ match: { resource: 'leases', name, method: 'PUT' }, status: 503 });
    // Renews at 500, 1000, 1500 fail; at 2000 (= renew deadline after the acquire was sent) it stops.
    for (let t = 500; t < 2000; t += 500) {
      await step(clock, 500, 2);
      expect(a.leaderSignal()?.aborted).toBe(false);
    }
    await waitFor(() =>
      expect(server.faults.requests({ method: 'PUT', name }).length).toBeGreaterThanOrEqual(3),
    );
    await step(clock, 2000 - (clock.now() - acquiredAt), 2);
    expect(a.leaderSignal()?.aborted).toBe(true);
    expect(a.events).toContain('lost');
    expect(a.gauge()).toBe(0);
    await a.done;
    const puts = server.faults.requests({ method: 'PUT', name }).length;
    server.faults.reset();
    a.stop.abort();
    // A lost lease is not released: no write after the loss.
    expect(server.faults.requests({ method: 'PUT', name }).length).toBe(puts);
  });

  it('a leader that reads another holder stops at once (does not wait for its deadline)', async () => {
    const clock = new FakeClock();
    const name = leaseName();
    const a = run(name, 'a', clock);
    await waitFor(() => expect(a.events).toContain('started'));
    const cur = await readLease(name);
    await api.update(LeaseKind, { ...cur, spec: { ...cur?.spec, holderIdentity: 'usurper' } } as LeaseObject);
    await step(clock, 500, 2);
    await waitFor(() => expect(a.events).toContain('lost'));
    expect(a.leaderSignal()?.aborted).toBe(true);
    await a.done;
  });

  it('C22 (unit): release on cancel writes one valid Lease — holder empty, duration 1, transitions kept — with a fresh signal', async () => {
    const clock = new FakeClock();
    const name = leaseName();
    const a = run(name, 'a', clock, { releaseOnCancel: true });
    await waitFor(() => expect(a.events).toContain('started'));
    const before = await readLease(name);
    const t0 = Date.now();
    a.stop.abort();
    await a.done;
    const writes = server.faults.requests({ method: 'PUT', name, since: t0 });
    expect(writes).toHaveLength(1);
    expect(writes[0]?.status).toBe(200);
    const after = await readLease(name);
    expect(after?.spec).toMatchObject({
      holderIdentity: '',
      leaseDurationSeconds: 1,
      leaseTransitions: before?.spec?.leaseTransitions,
    });
    expect(a.events).toEqual(['leader:a', 'started', 'stopped']);
    // A waiting candidate takes the released lease at its next attempt, without waiting for expiry.
    const bClock = new FakeClock();
    const b = run(name, 'b', bClock);
    await waitFor(() => expect(b.events).toContain('started'));
  });

  it('C22 (unit): a 409 on release is logged once and not retried; a candidate that never led writes nothing', async () => {
    const clock = new FakeClock();
    const name = leaseName();
    const errors: string[] = [];
    const logger = {
      debug() {},
      info() {},
      warn() {},
      error: (_f: Record<string, unknown>, msg: string) => errors.push(msg),
      child() {
        return logger;
      },
    };
    const a = new LeaderElector({
      lock: lockFor(name, 'a'),
      leaseDurationMs: 3000,
      renewDeadlineMs: 2000,
      retryPeriodMs: 500,
      clock,
      releaseOnCancel: true,
      logger,
    });
    let leading = false;
    const stop = new AbortController();
    const done = a.run(stop.signal, { onStartedLeading: () => (leading = true) });
    await waitFor(() => expect(leading).toBe(true));
    // A third writer bumps the Lease just before the release.
    const cur = await readLease(name);
    await api.update(LeaseKind, {
      ...cur,
      metadata: { ...cur?.metadata, labels: { bumped: 'yes' } },
    } as LeaseObject);
    const t0 = Date.now();
    stop.abort();
    await done;
    expect(server.faults.requests({ method: 'PUT', name, since: t0 }).map((r) => r.status)).toEqual([409]);
    expect(errors.filter((m) => /release/.test(m))).toHaveLength(1);

    const standbyClock = new FakeClock();
    const other = leaseName();
    await api.create(LeaseKind, {
      metadata: { namespace: 'le', name: other },
      spec: { holderIdentity: 'someone', leaseDurationSeconds: 3 },
    });
    const s = run(other, 'standby', standbyClock, { releaseOnCancel: true });
    await waitFor(() => expect(s.events).toContain('leader:someone'));
    const t1 = Date.now();
    s.stop.abort();
    await s.done;
    expect(server.faults.requests({ name: other, since: t1 }).filter((r) => r.method !== 'GET')).toEqual([]);
    expect(s.events).not.toContain('stopped');
  });

  it('a hung Lease request is cut by the lock client timeout, and the renew deadline still holds', async () => {
    const clock = new FakeClock();
    const name = leaseName();
    const a = run(name, 'a', clock, { requestTimeoutMs: 1000 });
    // Its acquire runs under the same 1 s timeout, which a starved process can beat: a cut try parks the elector
    // for a retry period on the clock, so the clock is moved on until it leads.
    await waitFor(() => {
      if (!a.events.includes('started') && clock.pendingTimers() > 0) clock.step(500);
      expect(a.events).toContain('started');
    });
    server.faults.blackhole({ match: { resource: 'leases', name, method: 'PUT' }, sendHeaders: false });
    await step(clock, 500, 2);
    // The PUT hangs at the server; the client gives up after its 1 s timeout (real time) and the elector
    // parks on the clock again.
    await waitFor(() => expect(server.faults.requests({ method: 'PUT', name }).length).toBeGreaterThan(0));
    await waitFor(() => expect(clock.pendingTimers()).toBe(2));
    clock.step(1500);
    expect(a.leaderSignal()?.aborted).toBe(true);
    await a.done;
  });
});

describe('Lease clients ask for Leases only', () => {
  it('the lock of newResourceLock reads, creates and updates its Lease without one discovery request (its short timeout is for the Lease alone)', async () => {
    // On a real kube-apiserver under load, discovery (GET /api, /apis) took longer than the lock's 1.5-2 s request
    // timeout, so every campaign failed before it read the Lease, and the one that got through came after the renew
    // deadline: "leader election lost" at once. client-go's lock uses the typed coordination/v1 client (no discovery).
    const token = 'lease-only-token';
    server.auth.addToken(token, { user: 'lease-only', groups: ['system:masters'] });
    const lock = newResourceLock(
      { ...config, bearerToken: token },
      {
        id: leaseName(),
        namespace: 'le',
        identity: 'only',
        // What is checked is the requests made; a 1 s timeout here could be beaten by a starved process.
        requestTimeoutMs: 30_000,
      },
    );
    cleanups.push(() => lock.close?.());
    const signal = new AbortController().signal;
    const missing = await lock.get(signal).catch((e: unknown) => e);
    expect(isNotFound(missing)).toBe(true);
    const at = new Date();
    const record = {
      holderIdentity: 'only',
      leaseDurationSeconds: 5,
      acquireTime: at,
      renewTime: at,
      leaderTransitions: 0,
    };
    await lock.create(record, signal);
    await lock.update({ ...record, renewTime: new Date() }, signal);
    const paths = server.requestLog
      .filter((r) => r.user === 'lease-only')
      .map((r) => `${r.method} ${r.path}`);
    expect(paths.length).toBe(3);
    expect(
      paths.every((p) => p.includes('/apis/coordination.k8s.io/v1/namespaces/le/leases')),
      paths.join('\n'),
    ).toBe(true);
  });
});

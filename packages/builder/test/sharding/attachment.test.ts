import { FakeClock } from '@kubeloop/core/testing';
import { describe, expect, it } from 'vitest';
import { discardLogger } from '../../src/logger.js';
import type { Request } from '../../src/reconcile.js';
import { requestKey } from '../../src/reconcile.js';
import { Attachment } from '../../src/sharding/attachment.js';
import { ShardState } from '../../src/sharding/state.js';
import { keyOwnedBy, keysOwnedBy, Leases, servingPair, tick } from './support.js';

const T = { leaseDurationMs: 2000, renewDeadlineMs: 1500 } as const;

function req(key: string): Request {
  const [namespace, name] = key.split('/') as [string, string];
  return { namespace, name };
}

/** An attachment over a cache holding `cached`, recording what it enqueues. */
function attachment(
  cached: Set<string>,
  o: { retentionMs?: number; limit?: number; list?: () => Promise<readonly Request[]> } = {},
) {
  const added: string[] = [];
  let evicted = 0;
  const att = new Attachment({
    queue: { add: (r) => added.push(requestKey(r)), handlerError: () => undefined },
    list: o.list ?? (async () => [...cached].map(req)),
    synced: () => true,
    shardKey: requestKey,
    limit: o.limit ?? 100,
    retentionMs: o.retentionMs ?? 4000,
    log: discardLogger,
    onEvict: () => evicted++,
  });
  return { att, added, evictions: () => evicted };
}

/** Two replicas `a` and `b` that both serve the view [a, b]. */
function pair(clock: FakeClock) {
  const p = servingPair(clock, T);
  expect(p.a.view).toEqual(['a', 'b']);
  expect(p.b.view).toEqual(['a', 'b']);
  return p;
}

describe('Sharding attachment: passed-over requests (injected clock)', () => {
  it('a deletion whose event reached a non-owner while the owner was dead is reconciled by the replica that takes the key over', async () => {
    const clock = new FakeClock(10_000);
    const { leases, b } = pair(clock);
    const k = keyOwnedBy('a', ['a', 'b']);
    const { att, added } = attachment(new Set(), { retentionMs: 500 });
    const owned = new Set<string>();
    await att.refresh(b, clock.now(), owned);
    // `a` stops renewing; the DELETE of its key reaches `b`, which does not own it.
    att.drop(req(k), clock.now());
    clock.step(1000);
    tick(b, leases, clock);
    await att.refresh(b, clock.now(), owned);
    // Past the retention, but `a` has not renewed since: still remembered.
    expect(added).toEqual([]);
    expect(att.dropped).toBe(1);
    clock.step(1000);
    tick(b, leases, clock); // `a` expired: view [b], acknowledged
    tick(b, leases, clock); // read after the acknowledgement: permitted
    expect(b.view).toEqual(['b']);
    await att.refresh(b, clock.now(), owned);
    expect(added).toEqual([k]);
    expect(att.dropped).toBe(0);
  });

  it('forgets a request passed over for a live owner once the owner renewed after it and the retention passed', async () => {
    const clock = new FakeClock(10_000);
    const { leases, a, b } = pair(clock);
    const k = keyOwnedBy('a', ['a', 'b']);
    const { att, added } = attachment(new Set(), { retentionMs: 1000 });
    att.drop(req(k), clock.now());
    clock.step(500);
    tick(a, leases, clock);
    tick(b, leases, clock);
    await att.refresh(b, clock.now(), new Set());
    expect(att.dropped).toBe(1); // renewed since, but within the retention
    clock.step(500);
    await att.refresh(b, clock.now(), new Set());
    expect(att.dropped).toBe(0);
    expect(added).toEqual([]);
  });

  it('enqueues a request passed over while fenced at the first refresh after the fence', async () => {
    const clock = new FakeClock(10_000);
    const leases = new Leases();
    const s = new ShardState('solo', clock, T);
    tick(s, leases, clock);
    tick(s, leases, clock);
    const { att, added } = attachment(new Set(['ns/kept']));
    await att.refresh(s, clock.now(), new Set());
    expect(added).toEqual(['ns/kept']);
    clock.step(1500);
    expect(s.checkFence()).toBe(true);
    att.forgetPermitted();
    att.drop(req('ns/gone'), clock.now()); // the DELETE, dropped: fenced, it owns nothing
    clock.step(60_000); // however long the fence lasts
    await att.refresh(s, clock.now(), new Set());
    expect(att.dropped).toBe(1);
    tick(s, leases, clock);
    await att.refresh(s, clock.now(), new Set());
    expect(added).toEqual(['ns/kept', 'ns/kept', 'ns/gone']);
  });

  it('enqueues again a request the gate refused of a key that was permitted at the last refresh', async () => {
    const clock = new FakeClock(10_000);
    const leases = new Leases();
    const s = new ShardState('solo', clock, T);
    tick(s, leases, clock);
    tick(s, leases, clock);
    const { att, added } = attachment(new Set(['ns/x']));
    await att.refresh(s, clock.now(), new Set());
    att.drop(req('ns/x'), clock.now()); // e.g. refused between a new acknowledgement and the read after it
    await att.refresh(s, clock.now(), new Set());
    expect(added).toEqual(['ns/x', 'ns/x']);
  });

  it('leaves a cached object to the cache listing, but keeps a request recorded while the listing ran', async () => {
    const clock = new FakeClock(10_000);
    const { leases, b } = pair(clock);
    const [cachedKey, deleted] = keysOwnedBy('a', ['a', 'b'], 2) as [string, string];
    const cached = new Set([cachedKey, deleted]);
    const box: { att?: Attachment } = {};
    const { att, added } = attachment(cached, {
      retentionMs: 1_000_000,
      list: async () => {
        const snapshot = [...cached].map(req);
        // The object is deleted, and its event dropped, while the listing is under way.
        if (cached.delete(deleted)) box.att?.drop(req(deleted), clock.now());
        return snapshot;
      },
    });
    box.att = att;
    att.drop(req(cachedKey), clock.now()); // an update of a cached object `a` owns
    await att.refresh(b, clock.now(), new Set());
    expect(att.dropped).toBe(1); // the deleted one
    expect(added).toEqual([]);
    // `a` leaves: `b` gains both keys, the cached one from the listing, the deleted one from memory.
    leases.records.delete('a');
    tick(b, leases, clock);
    tick(b, leases, clock);
    await att.refresh(b, clock.now(), new Set());
    expect(added.sort()).toEqual([cachedKey, deleted].sort());
  });

  it('remembers at most the limit, forgetting the oldest and counting each', async () => {
    const clock = new FakeClock(10_000);
    const leases = new Leases();
    const s = new ShardState('solo', clock, T);
    const { att, added, evictions } = attachment(new Set(), { limit: 2 });
    att.drop(req('ns/1'), clock.now());
    att.drop(req('ns/2'), clock.now());
    att.drop(req('ns/1'), clock.now()); // again: now the newest
    att.drop(req('ns/3'), clock.now());
    expect(att.dropped).toBe(2);
    expect(evictions()).toBe(1);
    expect(att.evicted).toBe(1);
    tick(s, leases, clock);
    tick(s, leases, clock);
    await att.refresh(s, clock.now(), new Set());
    expect(added).toEqual(['ns/1', 'ns/3']);
  });

  it('after a failed listing, the next refresh enqueues every permitted key again', async () => {
    const clock = new FakeClock(10_000);
    const leases = new Leases();
    const s = new ShardState('solo', clock, T);
    tick(s, leases, clock);
    tick(s, leases, clock);
    let fail = false;
    const cached = new Set(['ns/x']);
    const { att, added } = attachment(cached, {
      list: async () => {
        if (fail) throw new Error('cache stopped');
        return [...cached].map(req);
      },
    });
    const owned = new Set<string>();
    await att.refresh(s, clock.now(), owned);
    expect(owned).toEqual(new Set(['ns/x']));
    fail = true;
    await expect(att.refresh(s, clock.now(), owned)).rejects.toThrow('cache stopped');
    fail = false;
    await att.refresh(s, clock.now(), owned);
    expect(added).toEqual(['ns/x', 'ns/x']);
  });
});

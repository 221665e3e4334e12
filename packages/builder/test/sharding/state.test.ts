import { FakeClock } from '@kubeloop/core/testing';
import { describe, expect, it } from 'vitest';
import { rendezvousOwner } from '../../src/sharding/hash.js';
import { ShardState } from '../../src/sharding/state.js';
import { keyOwnedBy, Leases, servingPair, tick } from './support.js';

const T = { leaseDurationMs: 2000, renewDeadlineMs: 1500 } as const;

describe('ShardState membership (injected clock)', () => {
  it('a member is live until a lease duration after its Lease was last seen changing, on the local clock', () => {
    const clock = new FakeClock(1000);
    const s = new ShardState('a', clock, T);
    s.writeSucceeded(clock.now(), undefined);
    s.observeMembers([{ identity: 'b', version: '1', drainedFor: undefined }]);
    expect(s.view).toEqual(['a', 'b']);
    clock.step(1999);
    s.observeMembers([{ identity: 'b', version: '1', drainedFor: undefined }]); // unchanged: the clock runs on
    expect(s.liveOthers().map((m) => m.identity)).toEqual(['b']);
    s.writeSucceeded(clock.now(), undefined);
    clock.step(1);
    expect(s.liveOthers()).toEqual([]);
    expect(s.expire().viewChanged).toBe(true);
    expect(s.view).toEqual(['a']);
    // It renews (new version): live again from the moment it is seen.
    s.observeMembers([{ identity: 'b', version: '2', drainedFor: undefined }]);
    expect(s.view).toEqual(['a', 'b']);
    // Its Lease is gone (released): not a member at once.
    s.observeMembers([]);
    expect(s.view).toEqual(['a']);
  });

  it('refuses every key until its own acknowledgement is written and others were read after it', () => {
    const clock = new FakeClock();
    const leases = new Leases();
    const s = new ShardState('a', clock, T);
    expect(s.permitted('ns/x')).toBe(false); // fenced: never renewed
    tick(s, leases, clock); // creates the Lease without an acknowledgement, sees itself alone
    expect(s.view).toEqual(['a']);
    expect(s.acked).toBeUndefined();
    expect(s.permitted('ns/x')).toBe(false);
    s.checkFence();
    const ack = s.ackToWrite();
    expect(ack).toEqual(['a']);
    s.writeStarted(ack);
    leases.write('a', ack);
    s.writeSucceeded(clock.now(), ack);
    expect(s.permitted('ns/x')).toBe(false); // not read since the claim
    s.observeMembers(leases.list());
    expect(s.permitted('ns/x')).toBe(true);
  });

  it('fences itself at the renew deadline (aborting running reconciles) and comes back after a renew and a read', () => {
    const clock = new FakeClock();
    const leases = new Leases();
    const s = new ShardState('a', clock, T);
    tick(s, leases, clock);
    tick(s, leases, clock);
    const ac = s.begin('ns/x') as AbortController;
    expect(ac).toBeDefined();
    clock.step(1499);
    tick(s, leases, clock, false);
    expect(s.fenced).toBe(false);
    expect(s.permitted('ns/y')).toBe(true);
    clock.step(1);
    // At the deadline the gate refuses even before anything calls checkFence (a late fence timer).
    expect(s.permitted('ns/y')).toBe(false);
    expect(s.checkFence()).toBe(true);
    expect(ac.signal.aborted).toBe(true);
    expect(s.view).toEqual([]);
    expect(s.permitted('ns/x')).toBe(false);
    s.end('ns/x', ac);
    tick(s, leases, clock);
    expect(s.fenced).toBe(false);
    expect(s.permitted('ns/x')).toBe(true);
  });
});

describe('ShardState hand-over', () => {
  it('a joining member starts a moved key only after the old owner drained it and acknowledged', () => {
    const clock = new FakeClock();
    const leases = new Leases();
    const a = new ShardState('a', clock, T);
    tick(a, leases, clock);
    tick(a, leases, clock);
    const k = keyOwnedBy('b', ['a', 'b']);
    const running = a.begin(k) as AbortController;
    expect(running).toBeDefined();

    const b = new ShardState('b', clock, T);
    tick(b, leases, clock);
    tick(b, leases, clock);
    expect(b.view).toEqual(['a', 'b']);
    expect(b.acked).toEqual(['a', 'b']);
    expect(b.permitted(k)).toBe(false); // a still claims it (acknowledged ['a'])

    clock.step(500);
    tick(a, leases, clock);
    expect(a.view).toEqual(['a', 'b']);
    expect(a.permitted(k)).toBe(false); // stops accepting the lost key at once
    expect(a.draining()).toBe(true);
    expect(a.acked).toEqual(['a']); // not acknowledged while the reconcile runs
    tick(b, leases, clock);
    expect(b.permitted(k)).toBe(false);
    // Further ticks while the lost key still runs: still no acknowledgement, still refused on b.
    clock.step(500);
    tick(a, leases, clock);
    expect(a.acked).toEqual(['a']);
    tick(b, leases, clock);
    expect(b.permitted(k)).toBe(false);

    // The drain deadline passes: only the lost key's reconcile is aborted.
    const kept = keyOwnedBy('a', ['a', 'b']);
    const keptRun = a.begin(kept) as AbortController;
    expect(a.abortLost()).toBe(1);
    expect(running.signal.aborted).toBe(true);
    expect(keptRun.signal.aborted).toBe(false);
    a.end(k, running);
    tick(a, leases, clock);
    expect(a.acked).toEqual(['a', 'b']);
    expect(b.permitted(k)).toBe(false); // b has not read a's acknowledgement yet
    tick(b, leases, clock);
    expect(b.permitted(k)).toBe(true);
    expect(b.permitted(kept)).toBe(false);
  });

  it('a member whose Lease expired is ignored only after it fenced itself (renew deadline < lease duration)', () => {
    const clock = new FakeClock();
    const { leases, a, b } = servingPair(clock, T);
    const k = keyOwnedBy('a', ['a', 'b']);
    const run = a.begin(k) as AbortController;
    expect(run).toBeDefined();
    let fencedAt: number | undefined;
    let bStartedAt: number | undefined;
    // a is partitioned: its writes fail; b keeps going.
    for (let t = 0; t < 5000; t += 100) {
      clock.step(100);
      if (t % 500 === 0) {
        tick(a, leases, clock, false);
        tick(b, leases, clock);
      }
      if (fencedAt === undefined && a.checkFence()) fencedAt = clock.now();
      if (run.signal.aborted) a.end(k, run);
      if (bStartedAt === undefined && b.permitted(k)) bStartedAt = clock.now();
    }
    expect(fencedAt).toBeDefined();
    expect(bStartedAt).toBeDefined();
    expect(bStartedAt as number).toBeGreaterThan(fencedAt as number);
    expect(a.inflight).toBe(0);
  });

  it('a write with an unknown outcome keeps the gate honouring both acknowledgements', () => {
    const clock = new FakeClock();
    const leases = new Leases();
    const a = new ShardState('a', clock, T);
    tick(a, leases, clock);
    tick(a, leases, clock);
    leases.write('b', undefined);
    a.observeMembers(leases.list());
    expect(a.view).toEqual(['a', 'b']);
    const k = keyOwnedBy('a', ['a']); // owned under the old claim
    const moved = rendezvousOwner(k, ['a', 'b']) !== 'a';
    a.writeStarted(a.ackToWrite());
    a.writeFailed();
    a.observeMembers(leases.list());
    // Whatever the server holds, a key outside ['a','b']'s share of a is refused.
    if (moved) expect(a.permitted(k)).toBe(false);
    const both = keyOwnedBy('a', ['a', 'b']);
    expect(a.permitted(both)).toBe(true);
  });
});

describe('ShardState safety under random joins, leaves, partitions and reconciles (seeded simulation)', () => {
  function rng(seed: number): () => number {
    let x = seed >>> 0 || 1;
    return () => {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      return (x >>> 0) / 0x1_0000_0000;
    };
  }

  for (const seed of [1, 2, 3, 4, 5]) {
    it(`seed ${seed}: no key is ever running on two replicas; every key is reconciled again after the churn`, () => {
      const rand = rng(seed);
      const clock = new FakeClock();
      const leases = new Leases();
      const keys = Array.from({ length: 30 }, (_, i) => `ns/k-${i}`);
      interface Replica {
        s: ShardState;
        partitioned: boolean;
        stopping: boolean;
        gone: boolean;
        running: Map<string, { ac: AbortController; until: number }>;
      }
      const replicas: Replica[] = [];
      const add = (id: string) =>
        replicas.push({
          s: new ShardState(id, clock, T),
          partitioned: false,
          stopping: false,
          gone: false,
          running: new Map(),
        });
      add('r0');
      add('r1');
      add('r2');
      let overlaps = 0;
      let starts = 0;
      const lastRun = new Map<string, number>();
      for (let step = 0; step < 3000; step++) {
        clock.step(100);
        const live = replicas.filter((r) => !r.gone);
        // Churn: joins, graceful leaves, partitions that heal.
        if (step > 0 && step % 400 === 0 && step < 2400) {
          const roll = rand();
          if (roll < 0.4) add(`r${replicas.length}`);
          else if (roll < 0.7 && live.length > 2) {
            const r = live[Math.floor(rand() * live.length)] as Replica;
            r.stopping = true;
            r.s.stop();
          } else {
            const r = live[Math.floor(rand() * live.length)] as Replica;
            r.partitioned = !r.partitioned;
          }
        }
        if (step === 2400) for (const r of replicas) r.partitioned = false;
        for (const r of replicas) {
          if (r.gone) continue;
          // Reconciles end at their time, or soon after an abort (they honour the signal within 100 ms).
          for (const [k, run] of r.running) {
            if (clock.now() >= run.until || run.ac.signal.aborted) {
              r.running.delete(k);
              r.s.end(k, run.ac);
            }
          }
          if (r.stopping && r.running.size === 0) {
            r.gone = true;
            leases.records.delete(r.s.self);
            continue;
          }
          const idx = replicas.indexOf(r);
          if ((step + idx) % 5 === 0) tick(r.s, leases, clock, !r.partitioned);
          else if (r.s.checkFence()) {
            // fenced between ticks: the timer path
          }
          if (step % 7 === idx % 7) {
            if (rand() < 0.5) r.s.abortLost();
          }
          for (let n = 0; n < 3; n++) {
            const k = keys[Math.floor(rand() * keys.length)] as string;
            if (r.running.has(k)) continue;
            const ac = r.s.begin(k);
            if (!ac) continue;
            starts++;
            lastRun.set(k, clock.now());
            r.running.set(k, { ac, until: clock.now() + 100 + Math.floor(rand() * 3000) });
          }
        }
        for (const k of keys) {
          let n = 0;
          for (const r of replicas) if (!r.gone && r.running.has(k)) n++;
          if (n > 1) overlaps++;
        }
      }
      expect(overlaps).toBe(0);
      expect(starts).toBeGreaterThan(1000);
      // After the churn settled (last 600 steps = 60 s, no faults), every key ran again.
      for (const k of keys) expect(lastRun.get(k) ?? 0).toBeGreaterThan(clock.now() - 60_000);
    });
  }
});

import type { Clock } from '@kubeloop/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TokenBucketRateLimiter } from '../../src/transport/index.js';

/** A manual clock: timers fire when time is advanced past their due time. */
class ManualClock implements Clock {
  t = 0;
  private waiters: Array<{ at: number; fn: () => void }> = [];
  now(): number {
    return this.t;
  }
  setTimer(fn: () => void, ms: number) {
    const w = { at: this.t + ms, fn };
    this.waiters.push(w);
    return {
      cancel: () => {
        this.waiters = this.waiters.filter((x) => x !== w);
      },
    };
  }
  advance(ms: number): void {
    this.t += ms;
    const due = this.waiters.filter((w) => w.at <= this.t);
    this.waiters = this.waiters.filter((w) => w.at > this.t);
    for (const w of due) w.fn();
  }
}

describe('TokenBucketRateLimiter', () => {
  it('starts full with burst tokens, then refills at qps', () => {
    const clock = new ManualClock();
    const l = new TokenBucketRateLimiter(5, 10, clock);
    let accepted = 0;
    while (l.tryAccept()) accepted++;
    expect(accepted).toBe(10);
    clock.advance(200);
    expect(l.tryAccept()).toBe(true);
    expect(l.tryAccept()).toBe(false);
    clock.advance(1000);
    accepted = 0;
    while (l.tryAccept()) accepted++;
    expect(accepted).toBe(5);
  });

  it('wait() serves waiters in order at qps after the burst', async () => {
    const clock = new ManualClock();
    const l = new TokenBucketRateLimiter(2, 1, clock);
    const done: number[] = [];
    const ps = [0, 1, 2].map((i) => l.wait().then(() => done.push(i)));
    await Promise.resolve();
    await Promise.resolve();
    expect(done).toEqual([0]);
    clock.advance(499);
    await Promise.resolve();
    expect(done).toEqual([0]);
    clock.advance(1);
    await ps[1];
    expect(done).toEqual([0, 1]);
    clock.advance(500);
    await Promise.all(ps);
    expect(done).toEqual([0, 1, 2]);
  });

  it('an aborted wait gives its token back', async () => {
    const clock = new ManualClock();
    const l = new TokenBucketRateLimiter(1, 1, clock);
    await l.wait();
    const ac = new AbortController();
    const p = l.wait(ac.signal);
    ac.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
    clock.advance(1000);
    expect(l.tryAccept()).toBe(true);
  });

  it('rejects a non-positive qps and a burst below 1', () => {
    expect(() => new TokenBucketRateLimiter(0, 1)).toThrow(RangeError);
    expect(() => new TokenBucketRateLimiter(1, 0)).toThrow(RangeError);
  });

  it('never accepts more than burst + qps·t tokens in t (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 1, max: 50 }),
        fc.array(fc.integer({ min: 0, max: 400 }), { minLength: 1, maxLength: 60 }),
        (qps, burst, steps) => {
          const clock = new ManualClock();
          const l = new TokenBucketRateLimiter(qps, burst, clock);
          let accepted = 0;
          for (const step of steps) {
            clock.advance(step);
            while (l.tryAccept()) accepted++;
          }
          return accepted <= burst + Math.floor((qps * clock.t) / 1000) + 1e-9;
        },
      ),
    );
  });
});

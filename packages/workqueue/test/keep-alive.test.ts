// A worker awaiting get() while an item waits for its delay must keep Node running: the delay timers are
// unref'd (a forgotten queue never holds a process open), so without a held handle the process exited
// under the waiting worker with code 13 ("unsettled top-level await") — found by the pack-and-install check,
// where a standalone rate-limited queue retried a key with addRateLimited.
//
// These tests observe only the queue's own holds, through its clock (Clock.keepAlive): counting every timer
// of the process made them flaky whenever anything else in the test process held a timer.

import { type Clock, type ClockTimer, realClock } from '@kubeloop/core';
import { FakeClock } from '@kubeloop/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { newDelayingQueue, newPriorityQueue, newRateLimitingQueue } from '../src/index.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('a waiting get() keeps the process alive while a delayed item is pending', () => {
  it('delaying queue: held only while a get() waits and a delay is pending', async () => {
    const clock = new FakeClock();
    const q = newDelayingQueue<string>({ clock });
    q.addAfter('a', 60_000);
    expect(clock.keepAliveHandles()).toBe(0); // nobody waits: the pending delay alone holds nothing
    const got = q.get();
    expect(clock.keepAliveHandles()).toBe(1);
    q.shutDown();
    expect(await got).toEqual({ shutdown: true });
    expect(clock.keepAliveHandles()).toBe(0);
  });

  it('delaying queue: released once the delayed item reaches the waiting worker', async () => {
    const clock = new FakeClock();
    const q = newDelayingQueue<string>({ clock });
    const got = q.get();
    expect(clock.keepAliveHandles()).toBe(0); // waiting, but nothing will ever arrive by timer
    q.addAfter('b', 5);
    expect(clock.keepAliveHandles()).toBe(1);
    clock.step(5);
    expect(await got).toEqual({ item: 'b', shutdown: false });
    expect(clock.keepAliveHandles()).toBe(0);
    q.shutDown();
  });

  it('rate-limiting queue: a retried key keeps the waiting worker alive until it is handed out again', async () => {
    const clock = new FakeClock();
    const q = newRateLimitingQueue<string>({ clock });
    q.add('k');
    const first = await q.get();
    q.addRateLimited('k');
    q.done('k');
    const again = q.get();
    expect(clock.keepAliveHandles()).toBe(1);
    expect(first.item).toBe('k');
    clock.step(5); // the first retry of the default limiter
    expect((await again).item).toBe('k');
    expect(clock.keepAliveHandles()).toBe(0);
    q.shutDown();
  });

  it('priority queue: the same rule', async () => {
    const clock = new FakeClock();
    const q = newPriorityQueue<string>({ clock });
    const got = q.get();
    expect(clock.keepAliveHandles()).toBe(0);
    q.add('p', { after: 5 });
    expect(clock.keepAliveHandles()).toBe(1);
    clock.step(5);
    expect(await got).toEqual({ item: 'p', shutdown: false });
    expect(clock.keepAliveHandles()).toBe(0);
    const waiting = q.get();
    q.add('later', { after: 1_000 });
    expect(clock.keepAliveHandles()).toBe(1);
    q.shutDown();
    expect(await waiting).toEqual({ shutdown: true });
    expect(clock.keepAliveHandles()).toBe(0);
  });

  it('on the real clock the hold is one referenced timer, cleared when the item arrives', async () => {
    // A clock that delegates to realClock and records the holds it hands out, so only this queue's count.
    const holds: { handle: ReturnType<typeof setInterval>; released: boolean }[] = [];
    const setInterval_ = vi.spyOn(globalThis, 'setInterval');
    const clearInterval_ = vi.spyOn(globalThis, 'clearInterval');
    const clock: Clock = {
      now: realClock.now,
      setTimer: realClock.setTimer,
      keepAlive: (): ClockTimer => {
        const before = setInterval_.mock.results.length;
        const inner = (realClock.keepAlive as () => ClockTimer)();
        const hold = {
          handle: setInterval_.mock.results[before]?.value as ReturnType<typeof setInterval>,
          released: false,
        };
        holds.push(hold);
        return {
          cancel: () => {
            inner.cancel();
            hold.released = clearInterval_.mock.calls.some(([h]) => h === hold.handle);
          },
        };
      },
    };
    const q = newDelayingQueue<string>({ clock });
    const got = q.get();
    q.addAfter('b', 5);
    expect(holds).toHaveLength(1);
    expect(holds[0]?.handle.hasRef()).toBe(true); // this is what keeps the process running
    expect(await got).toEqual({ item: 'b', shutdown: false });
    expect(holds.map((h) => h.released)).toEqual([true]);
    q.shutDown();
  });

  it('a clock without keepAlive makes the queue hold nothing, and the fake clock nothing real', () => {
    const setInterval_ = vi.spyOn(globalThis, 'setInterval');
    const setTimeout_ = vi.spyOn(globalThis, 'setTimeout');
    const fake = new FakeClock();
    const plain: Clock = { now: () => fake.now(), setTimer: (fn, ms) => fake.setTimer(fn, ms) };
    const held: number[] = [];
    for (const clock of [fake, plain]) {
      const q = newDelayingQueue<string>({ clock });
      q.addAfter('a', 1000);
      void q.get();
      held.push(fake.keepAliveHandles());
      q.shutDown();
      held.push(fake.keepAliveHandles());
    }
    expect(held).toEqual([1, 0, 0, 0]); // only the fake clock's queue held (counted), until shutDown
    expect(setInterval_).not.toHaveBeenCalled();
    expect(setTimeout_).not.toHaveBeenCalled();
  });
});

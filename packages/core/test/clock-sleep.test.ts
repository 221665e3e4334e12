// sleep() on a long-lived signal (a manager's or an informer's) must not add one abort listener per call: the
// limiter, the retry waits and the reflector backoff all sleep on such signals, many at once, and past 10
// listeners Node prints MaxListenersExceededWarning. It follows the signal through the onAbort fan-out.
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { sleep } from '../src/index.js';
import { FakeClock } from '../src/testing.js';

describe('sleep on one long-lived signal', () => {
  it('100 concurrent sleeps on the fake clock hold one abort listener, and none once they are over', async () => {
    const clock = new FakeClock();
    const parent = new AbortController();
    const sleeps = Array.from({ length: 100 }, (_, i) => sleep(10 + i, parent.signal, clock));
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(1);
    clock.step(200);
    await Promise.all(sleeps);
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('100 concurrent sleeps on the real clock hold one abort listener, and none once they are over', async () => {
    const parent = new AbortController();
    const sleeps = Array.from({ length: 100 }, () => sleep(1, parent.signal));
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(1);
    await Promise.all(sleeps);
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
  });

  it('1000 sleeps one after another leave no listener behind', async () => {
    const clock = new FakeClock();
    const parent = new AbortController();
    for (let i = 0; i < 1000; i++) {
      const p = sleep(5, parent.signal, clock);
      clock.step(5);
      await p;
    }
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
  });

  it('an abort rejects every pending sleep with the reason, cancels their timers and leaves no listener', async () => {
    const clock = new FakeClock();
    const parent = new AbortController();
    const sleeps = Array.from({ length: 20 }, () => sleep(60_000, parent.signal, clock));
    const real = sleep(60_000, parent.signal);
    const reason = new Error('stop');
    parent.abort(reason);
    for (const s of [...sleeps, real]) await expect(s).rejects.toBe(reason);
    expect(clock.pendingTimers()).toBe(0);
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
    await expect(sleep(1, parent.signal, clock)).rejects.toBe(reason);
  });
});

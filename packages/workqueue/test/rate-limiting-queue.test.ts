import { FakeClock } from '@kubeloop/core/testing';
import { describe, expect, it } from 'vitest';
import { ItemExponentialFailureRateLimiter, newRateLimitingQueue } from '../src/index.js';

describe('rate-limiting queue', () => {
  it('addRateLimited waits the limiter delay; numRequeues counts; forget resets', () => {
    const clock = new FakeClock();
    const q = newRateLimitingQueue<string>({
      clock,
      rateLimiter: new ItemExponentialFailureRateLimiter(10, 1000),
    });
    q.addRateLimited('a');
    expect(q.numRequeues('a')).toBe(1);
    clock.step(9);
    expect(q.len()).toBe(0);
    clock.step(1);
    expect(q.len()).toBe(1);
    q.addRateLimited('b');
    q.addRateLimited('b');
    expect(q.numRequeues('b')).toBe(2);
    q.forget('b');
    expect(q.numRequeues('b')).toBe(0);
  });

  it('uses the default controller rate limiter when none is given', () => {
    const clock = new FakeClock();
    const q = newRateLimitingQueue<string>({ clock });
    q.addRateLimited('a');
    clock.step(4);
    expect(q.len()).toBe(0);
    clock.step(1);
    expect(q.len()).toBe(1);
  });

  it('keys the limiter with keyFn', () => {
    const clock = new FakeClock();
    type Req = { ns: string; n: string };
    const q = newRateLimitingQueue<Req>({ clock, keyFn: (r) => `${r.ns}/${r.n}` });
    q.addRateLimited({ ns: 'a', n: 'x' });
    q.addRateLimited({ ns: 'a', n: 'x' });
    expect(q.numRequeues({ ns: 'a', n: 'x' })).toBe(2);
    q.forget({ ns: 'a', n: 'x' });
    expect(q.debugSizes().rateLimiter).toBe(0);
  });

  it('C12: 50,000 distinct keys added, processed and forgotten leave every internal map and heap empty', async () => {
    const clock = new FakeClock();
    const q = newRateLimitingQueue<string>({ clock, name: 'c12', metricsProvider: noopProvider() });
    const N = 50_000;
    for (let i = 0; i < N; i++) {
      const k = `ns/obj-${i}`;
      if (i % 3 === 0) q.addRateLimited(k);
      else if (i % 3 === 1) q.addAfter(k, 1 + (i % 500));
      else q.add(k);
    }
    expect(q.debugSizes().waiting).toBeGreaterThan(0);
    let processed = 0;
    // the default limiter's 10 qps bucket spreads the rate-limited third over ~1700 s of fake time
    for (let t = 0; t < 4000 && processed < N; t++) {
      clock.step(1000);
      while (q.len() > 0) {
        const r = await q.get();
        if (r.shutdown) break;
        q.forget(r.item);
        q.done(r.item);
        processed++;
      }
    }
    expect(processed).toBe(N);
    expect(q.debugSizes()).toEqual({
      queue: 0,
      keys: 0,
      dirty: 0,
      processing: 0,
      waiters: 0,
      waiting: 0,
      waitingByKey: 0,
      parked: 0,
      rateLimiter: 0,
      metrics: 0,
    });
    q.shutDown();
  }, 60_000);
});

function noopProvider() {
  const g = { inc() {}, dec() {}, set() {}, observe() {} };
  return {
    newDepthMetric: () => g,
    newAddsMetric: () => g,
    newLatencyMetric: () => g,
    newWorkDurationMetric: () => g,
    newUnfinishedWorkSecondsMetric: () => g,
    newLongestRunningProcessorSecondsMetric: () => g,
    newRetriesMetric: () => g,
  };
}

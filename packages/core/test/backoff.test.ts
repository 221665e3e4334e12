import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { Backoff, discardLogger, sleep } from '../src/index.js';
import { FakeClock } from '../src/testing.js';

describe('Backoff', () => {
  it("uses client-go's reflector numbers: 800 ms doubling to a 30 s cap", () => {
    const b = new Backoff({ random: () => 0, clock: new FakeClock() });
    const delays = Array.from({ length: 8 }, () => b.nextDelayMs());
    expect(delays).toEqual([800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000]);
  });

  it('adds up to jitter × delay and never exceeds the cap', () => {
    const b = new Backoff({ random: () => 0.999, clock: new FakeClock() });
    expect(b.nextDelayMs()).toBeCloseTo(1599.2);
    for (let i = 0; i < 10; i++) expect(b.nextDelayMs()).toBeLessThanOrEqual(30_000);
  });

  it('starts over after resetAfterMs without a failure, and on reset()', () => {
    const clock = new FakeClock();
    const b = new Backoff({ random: () => 0, clock });
    b.nextDelayMs();
    b.nextDelayMs();
    clock.step(120_001);
    expect(b.nextDelayMs()).toBe(800);
    b.nextDelayMs();
    b.reset();
    expect(b.nextDelayMs()).toBe(800);
  });

  it('refuses a factor below 1 or a negative duration, naming the option', () => {
    expect(() => new Backoff({ factor: 0.5 })).toThrow(/factor/);
    expect(() => new Backoff({ initialMs: -1 })).toThrow(/initialMs/);
  });
});

describe('sleep', () => {
  it('resolves when the clock reaches the delay', async () => {
    const clock = new FakeClock();
    let done = false;
    const p = sleep(50, undefined, clock).then(() => {
      done = true;
    });
    clock.step(49);
    await Promise.resolve();
    expect(done).toBe(false);
    clock.step(1);
    await p;
    expect(done).toBe(true);
  });

  it("rejects with the signal's reason and leaves no listener behind", async () => {
    const ac = new AbortController();
    const p = sleep(60_000, ac.signal);
    ac.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
    const clock = new FakeClock();
    const ac2 = new AbortController();
    const q = sleep(10, ac2.signal, clock);
    clock.step(10);
    await q;
    expect(getEventListeners(ac2.signal, 'abort')).toHaveLength(0);
  });
});

describe('discardLogger', () => {
  it('drops records and its children are discard loggers too', () => {
    expect(discardLogger.child({ a: 1 })).toBe(discardLogger);
    expect(() => discardLogger.info({}, 'x')).not.toThrow();
  });
});

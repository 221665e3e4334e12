import { describe, expect, it } from 'vitest';
import { realClock } from '../src/index.js';
import { FakeClock } from '../src/testing.js';

describe('FakeClock', () => {
  it('fires due timers in due-time order, each seeing its own due time', () => {
    const clock = new FakeClock(1000);
    const fired: [string, number][] = [];
    clock.setTimer(() => fired.push(['b', clock.now()]), 200);
    clock.setTimer(() => fired.push(['a', clock.now()]), 100);
    clock.setTimer(() => fired.push(['a2', clock.now()]), 100);
    clock.setTimer(() => fired.push(['late', clock.now()]), 5000);
    clock.step(300);
    expect(fired).toEqual([
      ['a', 1100],
      ['a2', 1100],
      ['b', 1200],
    ]);
    expect(clock.now()).toBe(1300);
    expect(clock.pendingTimers()).toBe(1);
    expect(clock.nextTimerAt()).toBe(6000);
  });

  it('fires timers created by callbacks when they fall inside the step', () => {
    const clock = new FakeClock();
    const fired: number[] = [];
    const tick = () => {
      fired.push(clock.now());
      if (fired.length < 10) clock.setTimer(tick, 100);
    };
    clock.setTimer(tick, 100);
    clock.step(350);
    expect(fired).toEqual([100, 200, 300]);
  });

  it('cancelled timers never fire', () => {
    const clock = new FakeClock();
    let n = 0;
    const t = clock.setTimer(() => n++, 10);
    t.cancel();
    t.cancel();
    clock.step(100);
    expect(n).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('treats a negative or NaN delay as now', () => {
    const clock = new FakeClock(10);
    const fired: number[] = [];
    clock.setTimer(() => fired.push(1), Number.NaN);
    clock.setTimer(() => fired.push(2), -5);
    clock.step(0);
    expect(fired).toEqual([1, 2]);
  });

  it('setTime jumps and refuses to go backwards; step refuses negative', () => {
    const clock = new FakeClock();
    let n = 0;
    clock.setTimer(() => n++, 50);
    clock.setTime(50);
    expect(n).toBe(1);
    expect(() => clock.setTime(10)).toThrow(RangeError);
    expect(() => clock.step(-1)).toThrow(RangeError);
    expect(() => clock.step(Number.NaN)).toThrow(RangeError);
  });
});

describe('realClock', () => {
  it('is monotonic and fires a short timer', async () => {
    const a = realClock.now();
    const fired = await new Promise<number>((resolve) =>
      realClock.setTimer(() => resolve(realClock.now()), 2),
    );
    expect(fired).toBeGreaterThanOrEqual(a);
  });
});

describe('keepAlive', () => {
  it('FakeClock counts holds until each is cancelled (twice is once)', () => {
    const clock = new FakeClock();
    const a = clock.keepAlive();
    const b = clock.keepAlive();
    expect(clock.keepAliveHandles()).toBe(2);
    a.cancel();
    a.cancel();
    expect(clock.keepAliveHandles()).toBe(1);
    b.cancel();
    expect(clock.keepAliveHandles()).toBe(0);
  });

  it('realClock holds the process with one referenced timer until cancelled; its timers are unref-ed', () => {
    const created: ReturnType<typeof setInterval>[] = [];
    const originalInterval = globalThis.setInterval;
    const originalTimeout = globalThis.setTimeout;
    globalThis.setInterval = ((...args: Parameters<typeof setInterval>) => {
      const t = originalInterval(...args);
      created.push(t);
      return t;
    }) as typeof setInterval;
    globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
      const t = originalTimeout(...args);
      created.push(t);
      return t;
    }) as typeof setTimeout;
    try {
      const hold = realClock.keepAlive?.();
      const timer = realClock.setTimer(() => {}, 60_000);
      expect(created).toHaveLength(2);
      expect(created[0]?.hasRef()).toBe(true);
      expect(created[1]?.hasRef()).toBe(false);
      hold?.cancel();
      timer.cancel();
      timer.cancel();
    } finally {
      globalThis.setInterval = originalInterval;
      globalThis.setTimeout = originalTimeout;
    }
  });
});

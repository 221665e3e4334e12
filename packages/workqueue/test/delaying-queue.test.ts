import { FakeClock } from '@kubeloop/core/testing';
import { describe, expect, it } from 'vitest';
import { newDelayingQueue } from '../src/index.js';

describe('delaying queue', () => {
  it('adds an item only once its delay has passed on the clock', () => {
    const clock = new FakeClock();
    const q = newDelayingQueue<string>({ clock });
    q.addAfter('a', 100);
    expect(q.len()).toBe(0);
    clock.step(99);
    expect(q.len()).toBe(0);
    clock.step(1);
    expect(q.len()).toBe(1);
    expect(q.debugSizes()).toMatchObject({ waiting: 0, waitingByKey: 0 });
  });

  it('delay <= 0 adds immediately', () => {
    const q = newDelayingQueue<string>({ clock: new FakeClock() });
    q.addAfter('a', 0);
    q.addAfter('b', -5);
    expect(q.len()).toBe(2);
  });

  it('a duplicate waiting item keeps the earlier ready time', () => {
    const clock = new FakeClock();
    const q = newDelayingQueue<string>({ clock });
    q.addAfter('a', 500);
    q.addAfter('a', 100);
    q.addAfter('a', 1000);
    expect(q.debugSizes().waiting).toBe(1);
    clock.step(100);
    expect(q.len()).toBe(1);
    clock.step(1000);
    expect(q.len()).toBe(1);
  });

  it('releases items in ready-time order', async () => {
    const clock = new FakeClock();
    const q = newDelayingQueue<string>({ clock });
    q.addAfter('c', 300);
    q.addAfter('a', 100);
    q.addAfter('b', 200);
    clock.step(1000);
    const order: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await q.get();
      if (!r.shutdown) order.push(r.item);
    }
    expect(order).toEqual(['a', 'b', 'c']);
  });

  it('shutDown drops waiting items and cancels the timer', () => {
    const clock = new FakeClock();
    const q = newDelayingQueue<string>({ clock });
    q.addAfter('a', 100);
    expect(clock.pendingTimers()).toBe(1);
    q.shutDown();
    expect(clock.pendingTimers()).toBe(0);
    clock.step(200);
    expect(q.len()).toBe(0);
    q.addAfter('b', 10);
    expect(q.debugSizes()).toMatchObject({ waiting: 0, waitingByKey: 0 });
  });

  it('with the real clock, a delayed item arrives and the timer does not hold the process', async () => {
    const q = newDelayingQueue<string>();
    q.addAfter('a', 5);
    const r = await q.get();
    expect(r).toEqual({ item: 'a', shutdown: false });
    q.addAfter('b', 60_000);
    q.shutDown();
  });
});

describe('real clock timers', () => {
  it('are unref-ed, so pending delays never keep the process alive', async () => {
    const { realClock } = await import('@kubeloop/core');
    const created: ReturnType<typeof setTimeout>[] = [];
    const original = globalThis.setTimeout;
    const spy = ((...args: Parameters<typeof setTimeout>) => {
      const t = original(...args);
      created.push(t);
      return t;
    }) as typeof setTimeout;
    globalThis.setTimeout = spy;
    try {
      const t = realClock.setTimer(() => {}, 60_000);
      const q = newDelayingQueue<string>();
      q.addAfter('x', 3_600_000);
      expect(created.length).toBe(2);
      for (const h of created) expect(h.hasRef()).toBe(false);
      t.cancel();
      q.shutDown();
    } finally {
      globalThis.setTimeout = original;
    }
  });
});

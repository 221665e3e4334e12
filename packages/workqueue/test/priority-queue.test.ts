import { FakeClock } from '@kubeloop/core/testing';
import { describe, expect, it } from 'vitest';
import { ItemExponentialFailureRateLimiter, LOW_PRIORITY, newPriorityQueue } from '../src/index.js';

async function drain<T>(q: {
  len(): number;
  getWithPriority(): Promise<{ item: T | undefined; priority: number }>;
}) {
  const out: [T | undefined, number][] = [];
  while (q.len() > 0) {
    const r = await q.getWithPriority();
    out.push([r.item, r.priority]);
  }
  return out;
}

describe('priority queue', () => {
  it('hands out higher priority first, FIFO within a priority', async () => {
    const q = newPriorityQueue<string>({ clock: new FakeClock() });
    q.add('low1', { priority: LOW_PRIORITY });
    q.add('a');
    q.add('high', { priority: 10 });
    q.add('low2', { priority: LOW_PRIORITY });
    q.add('b');
    expect(await drain(q)).toEqual([
      ['high', 10],
      ['a', 0],
      ['b', 0],
      ['low1', LOW_PRIORITY],
      ['low2', LOW_PRIORITY],
    ]);
  });

  it('dedup keeps the highest priority; a raised item goes to the end of its new level', async () => {
    const q = newPriorityQueue<string>({ clock: new FakeClock() });
    q.add('x', { priority: LOW_PRIORITY });
    q.add('a');
    q.add('b');
    q.add('x'); // raised to 0: after a and b
    q.add('a', { priority: LOW_PRIORITY }); // lower priority: ignored
    expect(q.len()).toBe(3);
    expect(await drain(q)).toEqual([
      ['a', 0],
      ['b', 0],
      ['x', 0],
    ]);
  });

  it('dedup keeps the earliest ready time', () => {
    const clock = new FakeClock();
    const q = newPriorityQueue<string>({ clock });
    q.add('a', { after: 1000 });
    q.add('a', { after: 100 });
    q.add('a', { after: 5000 });
    expect(q.len()).toBe(0);
    clock.step(100);
    expect(q.len()).toBe(1);
    q.add('b', { after: 100 });
    q.add('b');
    expect(q.len()).toBe(2);
    expect(q.debugSizes().waiting).toBe(0);
  });

  it('rateLimited uses the smaller of after and the limiter delay', () => {
    const clock = new FakeClock();
    const q = newPriorityQueue<string>({
      clock,
      rateLimiter: new ItemExponentialFailureRateLimiter(50, 1000),
    });
    q.add('a', { after: 500, rateLimited: true });
    clock.step(49);
    expect(q.len()).toBe(0);
    clock.step(1);
    expect(q.len()).toBe(1);
    expect(q.numRequeues('a')).toBe(1);
    q.forget('a');
    expect(q.numRequeues('a')).toBe(0);
  });

  it('a key being processed is not handed out again until done', async () => {
    const q = newPriorityQueue<string>({ clock: new FakeClock() });
    q.add('a');
    const r1 = await q.get();
    expect(r1.item).toBe('a');
    q.add('a', { priority: 5 });
    q.add('b');
    const r2 = await q.getWithPriority();
    expect(r2.item).toBe('b');
    let got: string | undefined;
    const p = q.get().then((r) => {
      got = r.item;
    });
    await Promise.resolve();
    await Promise.resolve();
    expect(got).toBeUndefined();
    q.done('a');
    await p;
    expect(got).toBe('a');
  });

  it('get after shutDown resolves shutdown at once, even with queued items', async () => {
    const q = newPriorityQueue<string>({ clock: new FakeClock() });
    const waiting = q.get();
    q.shutDown();
    await expect(waiting).resolves.toEqual({ item: undefined, shutdown: true });
    q.add('a');
    await expect(q.getWithPriority()).resolves.toEqual({ item: undefined, priority: 0, shutdown: true });
  });

  it('wakes a waiter when a delayed item becomes ready', async () => {
    const clock = new FakeClock();
    const q = newPriorityQueue<string>({ clock });
    const p = q.get();
    q.addAfter('a', 10);
    clock.step(10);
    await expect(p).resolves.toEqual({ item: 'a', shutdown: false });
  });

  it('C12 for the priority queue: 50,000 keys leave no internal state behind', async () => {
    const clock = new FakeClock();
    const q = newPriorityQueue<string>({ clock });
    const N = 50_000;
    for (let i = 0; i < N; i++) {
      const k = `k${i}`;
      if (i % 3 === 0) q.addRateLimited(k);
      else q.add(k, { priority: i % 5, after: i % 2 === 0 ? 0 : 1 + (i % 700) });
    }
    clock.step(1000);
    let n = 0;
    while (q.len() > 0) {
      const r = await q.get();
      if (r.shutdown) break;
      q.forget(r.item);
      q.done(r.item);
      n++;
    }
    expect(n).toBe(N);
    expect(Object.values(q.debugSizes()).every((v) => v === 0)).toBe(true);
    q.shutDown();
  }, 60_000);

  it('keyFn identifies object items; shutDownWithDrain waits for in-flight items', async () => {
    type Req = { ns: string; name: string };
    const q = newPriorityQueue<Req>({ clock: new FakeClock(), keyFn: (r) => `${r.ns}/${r.name}` });
    q.add({ ns: 'a', name: 'x' });
    q.add({ ns: 'a', name: 'x' }, { priority: 3 });
    q.add({ ns: 'b', name: 'y' });
    expect(q.len()).toBe(2);
    const r = await q.getWithPriority();
    expect(r).toEqual({ item: { ns: 'a', name: 'x' }, priority: 3, shutdown: false });
    let drained = false;
    const p = q.shutDownWithDrain().then(() => {
      drained = true;
    });
    await Promise.resolve();
    expect(drained).toBe(false);
    q.done({ ns: 'a', name: 'x' });
    await p;
    expect(drained).toBe(true);
    expect(q.debugSizes().keys).toBe(0);
  });

  it('tryGet and addWithOpts', () => {
    const q = newPriorityQueue<string>({ clock: new FakeClock() });
    q.addWithOpts({ priority: 1 }, 'a', 'b');
    q.add('c', { priority: 2 });
    expect([q.tryGet(), q.tryGet(), q.tryGet(), q.tryGet()]).toEqual(['c', 'a', 'b', undefined]);
  });

  it('tryGetWithPriority: highest first with its priority, nothing while processing or after shutdown', () => {
    const q = newPriorityQueue<string>({ clock: new FakeClock() });
    expect(q.tryGetWithPriority()).toBeUndefined();
    q.add('low', { priority: LOW_PRIORITY });
    q.add('high', { priority: 5 });
    q.add('zero');
    expect(q.tryGetWithPriority()).toEqual({ item: 'high', priority: 5 });
    q.add('high', { priority: 7 }); // re-added while processing: parked until done
    expect(q.tryGetWithPriority()).toEqual({ item: 'zero', priority: 0 });
    expect(q.tryGetWithPriority()).toEqual({ item: 'low', priority: LOW_PRIORITY });
    expect(q.tryGetWithPriority()).toBeUndefined();
    q.done('zero'); // not the last one handed out: found by key
    q.done('high');
    expect(q.tryGetWithPriority()).toEqual({ item: 'high', priority: 7 });
    q.add('zero');
    q.shutDown();
    expect(q.tryGetWithPriority()).toBeUndefined();
    expect(q.tryGet()).toBeUndefined();
    q.done('high');
    q.done('low');
    expect(q.debugSizes()).toMatchObject({ keys: 0, processing: 0, queue: 0 });
  });

  it('a queue that runs empty after every item keeps its order when priorities change (levels are reused)', () => {
    const q = newPriorityQueue<string>({ clock: new FakeClock() });
    const order: [string | undefined, number | undefined][] = [];
    for (const [k, p] of [
      ['a', 0],
      ['b', 3],
      ['c', LOW_PRIORITY],
    ] as const) {
      q.add(k, { priority: p });
      const r = q.tryGetWithPriority();
      order.push([r?.item, r?.priority]);
      q.done(k);
      expect(q.debugSizes()).toMatchObject({ keys: 0, queue: 0 });
    }
    q.add('d', { priority: 1 });
    q.add('e', { priority: 2 });
    q.add('f', { priority: 1 });
    q.add('d', { priority: 4 }); // raised: the old entry stays dead in its level's FIFO
    for (let r = q.tryGetWithPriority(); r !== undefined; r = q.tryGetWithPriority()) {
      order.push([r.item, r.priority]);
      q.done(r.item);
    }
    expect(order).toEqual([
      ['a', 0],
      ['b', 3],
      ['c', LOW_PRIORITY],
      ['d', 4],
      ['e', 2],
      ['f', 1],
    ]);
    expect(q.debugSizes()).toMatchObject({ keys: 0, queue: 0, dirty: 0, processing: 0 });
  });
});

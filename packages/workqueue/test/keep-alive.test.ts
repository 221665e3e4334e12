// A worker awaiting get() while an item waits for its delay must keep Node running: the delay timers are
// unref'd (a forgotten queue never holds a process open), so without a referenced handle the process exited
// under the waiting worker with code 13 ("unsettled top-level await") — found by the pack-and-install check,
// where a standalone rate-limited queue retried a key with addRateLimited.
import { describe, expect, it } from 'vitest';
import { FakeClock, newDelayingQueue, newPriorityQueue, newRateLimitingQueue } from '../src/index.js';

/** Active resources that keep the event loop alive and are timers. */
const refTimers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('a waiting get() keeps the process alive while a delayed item is pending', () => {
  it('delaying queue: held only while a get() waits and a delay is pending', async () => {
    const base = refTimers();
    const q = newDelayingQueue<string>();
    q.addAfter('a', 60_000);
    expect(refTimers()).toBe(base); // nobody waits: the pending delay alone holds nothing
    const got = q.get();
    expect(refTimers()).toBe(base + 1);
    q.shutDown();
    expect(await got).toEqual({ shutdown: true });
    expect(refTimers()).toBe(base);
  });

  it('delaying queue: released once the delayed item reaches the waiting worker', async () => {
    const base = refTimers();
    const q = newDelayingQueue<string>();
    const got = q.get();
    expect(refTimers()).toBe(base); // waiting, but nothing will ever arrive by timer
    q.addAfter('b', 5);
    expect(refTimers()).toBe(base + 1);
    expect(await got).toEqual({ item: 'b', shutdown: false });
    expect(refTimers()).toBe(base);
    q.shutDown();
  });

  it('rate-limiting queue: a retried key keeps the waiting worker alive until it is handed out again', async () => {
    const base = refTimers();
    const q = newRateLimitingQueue<string>();
    q.add('k');
    const first = await q.get();
    q.addRateLimited('k');
    q.done('k');
    const again = q.get();
    expect(refTimers()).toBe(base + 1);
    expect(first.item).toBe('k');
    expect((await again).item).toBe('k');
    expect(refTimers()).toBe(base);
    q.shutDown();
  });

  it('priority queue: the same rule', async () => {
    const base = refTimers();
    const q = newPriorityQueue<string>({});
    const got = q.get();
    expect(refTimers()).toBe(base);
    q.add('p', { after: 5 });
    expect(refTimers()).toBe(base + 1);
    expect(await got).toEqual({ item: 'p', shutdown: false });
    expect(refTimers()).toBe(base);
    q.shutDown();
  });

  it('with an injected clock nothing real is held', () => {
    const base = refTimers();
    const q = newDelayingQueue<string>({ clock: new FakeClock() });
    q.addAfter('a', 1000);
    void q.get();
    expect(refTimers()).toBe(base);
    q.shutDown();
  });
});

import { FakeClock } from '@kubeloop/core/testing';
import { describe, expect, it, vi } from 'vitest';
import { LOW_PRIORITY, newDelayingQueue, newPriorityQueue, newRateLimitingQueue } from '../src/index.js';

describe('README examples', () => {
  it('worker loop with forget / addRateLimited / done and shutDownWithDrain', async () => {
    const clock = new FakeClock();
    const queue = newRateLimitingQueue<string>({ name: 'pods', clock });
    queue.add('default/web-0');
    queue.add('default/web-0');
    const seen: string[] = [];
    let fail = true;
    const reconcile = async (key: string) => {
      seen.push(key);
      if (fail) {
        fail = false;
        throw new Error('first try fails');
      }
    };
    async function worker(): Promise<void> {
      for (;;) {
        const next = await queue.get();
        if (next.shutdown) return;
        try {
          await reconcile(next.item);
          queue.forget(next.item);
        } catch {
          queue.addRateLimited(next.item);
        } finally {
          queue.done(next.item);
        }
      }
    }
    const workers = [worker(), worker()];
    await vi.waitFor(() => expect(queue.numRequeues('default/web-0')).toBe(1));
    clock.step(5); // first retry after 5 ms
    await vi.waitFor(() => expect(seen).toEqual(['default/web-0', 'default/web-0']));
    await vi.waitFor(() => expect(queue.numRequeues('default/web-0')).toBe(0));
    await queue.shutDownWithDrain();
    await Promise.all(workers);
  });

  it('a worker with a backlog takes ready keys with tryGet and awaits get only when none is ready', async () => {
    const queue = newRateLimitingQueue<string>({ clock: new FakeClock() });
    const handled: string[] = [];
    let awaited = 0;
    async function worker(): Promise<void> {
      for (;;) {
        let key = queue.tryGet();
        if (key === undefined) {
          awaited++;
          const next = await queue.get();
          if (next.shutdown) return;
          key = next.item;
        }
        handled.push(key);
        queue.done(key);
      }
    }
    for (const k of ['a', 'b', 'c']) queue.add(k);
    const running = worker();
    expect(handled).toEqual(['a', 'b', 'c']); // the backlog, synchronously
    queue.add('d');
    await vi.waitFor(() => expect(handled).toEqual(['a', 'b', 'c', 'd']));
    queue.shutDown();
    await running;
    expect(awaited).toBe(2); // once when the backlog ran out ('d' came through it), once to see the shutdown
  });

  it('priority queue example', async () => {
    const q = newPriorityQueue<string>({ clock: new FakeClock() });
    q.add('default/old', { priority: LOW_PRIORITY });
    q.add('default/new');
    q.add('default/later', { after: 2_000 });
    await expect(q.getWithPriority()).resolves.toEqual({ item: 'default/new', priority: 0, shutdown: false });
  });

  it('fake clock example', () => {
    const clock = new FakeClock();
    const q = newDelayingQueue<string>({ clock });
    q.addAfter('a', 1_000);
    clock.step(999);
    expect(q.len()).toBe(0);
    clock.step(1);
    expect(q.len()).toBe(1);
  });
});

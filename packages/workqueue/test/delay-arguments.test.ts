import { FakeClock } from '@kubeloop/core/testing';
import { describe, expect, it } from 'vitest';
import {
  InvalidArgumentError,
  ItemExponentialFailureRateLimiter,
  newDelayingQueue,
  newPriorityQueue,
  newRateLimitingQueue,
  type RateLimiter,
} from '../src/index.js';

/**
 * Breaker report item 8: a delay given as a string (`addAfter('a', '1000')`, `add('a', { after: '1000' })`) made
 * the item ready at once — `'1000' > 0` is true, then `now() + '1000'` concatenates — so a controller hot-looped.
 * Every delay argument must be a finite number; ≤ 0 still means "now" (client-go `AddAfter`).
 */
const BAD: unknown[] = [
  '1000',
  '0',
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  null,
  {},
];

describe('workqueue delay arguments are finite numbers of ms (InvalidArgumentError)', () => {
  it('delaying queue addAfter refuses a non-number delay and queues nothing', () => {
    const clock = new FakeClock();
    const q = newDelayingQueue<string>({ clock });
    for (const bad of BAD) {
      expect(() => q.addAfter('a', bad as number), String(bad)).toThrow(InvalidArgumentError);
    }
    expect(() => q.addAfter('a', '1000' as unknown as number)).toThrow(/delayMs.*the string "1000"/);
    expect(q.len()).toBe(0);
    expect(q.debugSizes().waiting).toBe(0);
    // Numbers keep their meaning: ≤ 0 is now, a positive delay waits on the clock.
    q.addAfter('now', -5);
    q.addAfter('later', 1000);
    expect(q.len()).toBe(1);
    clock.step(1000);
    expect(q.len()).toBe(2);
  });

  it('priority queue add refuses a non-number after or priority, before anything is queued', () => {
    const q = newPriorityQueue<string>({ clock: new FakeClock() });
    for (const bad of BAD) {
      expect(() => q.add('a', { after: bad as number }), String(bad)).toThrow(InvalidArgumentError);
      expect(() => q.addWithOpts({ after: bad as number }, 'b', 'c'), String(bad)).toThrow(
        InvalidArgumentError,
      );
      expect(() => q.addAfter('d', bad as number), String(bad)).toThrow(InvalidArgumentError);
    }
    for (const bad of ['5', Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => q.add('a', { priority: bad as number }), String(bad)).toThrow(InvalidArgumentError);
    }
    expect(q.len()).toBe(0);
    expect(q.debugSizes().waiting).toBe(0);
  });

  it('priority queue: a string after does not make the item ready at once (the hot loop)', () => {
    const clock = new FakeClock();
    const q = newPriorityQueue<string>({ clock });
    expect(() => q.add('a', { after: '1000' as unknown as number })).toThrow(/after.*"1000"/);
    q.add('a', { after: 1000 });
    expect(q.len()).toBe(0);
    clock.step(1000);
    expect(q.len()).toBe(1);
  });

  it('a custom rate limiter answering a non-number delay is refused by addRateLimited', () => {
    const broken: RateLimiter<unknown> = {
      when: () => '1000' as unknown as number,
      forget: () => {},
      numRequeues: () => 0,
    };
    const q = newRateLimitingQueue<string>({ clock: new FakeClock(), rateLimiter: broken });
    expect(() => q.addRateLimited('a')).toThrow(InvalidArgumentError);
    expect(q.len()).toBe(0);
    const pq = newPriorityQueue<string>({ clock: new FakeClock(), rateLimiter: broken });
    expect(() => pq.add('a', { rateLimited: true })).toThrow(InvalidArgumentError);
    expect(pq.len()).toBe(0);
  });

  it('rate limiter options refuse strings too', () => {
    expect(() => new ItemExponentialFailureRateLimiter('5' as unknown as number, 1000)).toThrow(
      InvalidArgumentError,
    );
    expect(() => new ItemExponentialFailureRateLimiter(5, '1000' as unknown as number)).toThrow(
      InvalidArgumentError,
    );
  });
});

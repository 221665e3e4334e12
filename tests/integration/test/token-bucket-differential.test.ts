// The client's token bucket (request throttling) and the workqueue's (BucketRateLimiter) stay two
// pieces of code — the workqueue stands alone — but one property test runs against both: for any qps, burst
// and arrival times, each reservation waits the same time in both (golang.org/x/time/rate semantics).

import { TokenBucketRateLimiter } from '@kubeloop/client/transport';
import type { Clock } from '@kubeloop/core';
import { FakeClock } from '@kubeloop/core/testing';
import { BucketRateLimiter } from '@kubeloop/workqueue';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

/** A clock whose time the test sets, recording the delay of every timer (a wait) without firing it. */
class SteppedClock implements Clock {
  t = 0;
  delays: number[] = [];
  now(): number {
    return this.t;
  }
  setTimer(_fn: () => void, delayMs: number) {
    this.delays.push(delayMs);
    return { cancel: () => {} };
  }
}

describe('token buckets: client limiter vs workqueue BucketRateLimiter (one property, both buckets)', () => {
  it('give every reservation the same wait for any qps, burst and arrival times', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100 }),
        fc.integer({ min: 1, max: 20 }),
        fc.array(fc.integer({ min: 0, max: 500 }), { minLength: 1, maxLength: 60 }),
        (qps, burst, gaps) => {
          const clientClock = new SteppedClock();
          const client = new TokenBucketRateLimiter(qps, burst, clientClock);
          const queueClock = new FakeClock();
          const queue = new BucketRateLimiter<string>(qps, burst, queueClock);
          for (const gap of gaps) {
            clientClock.t += gap;
            queueClock.step(gap);
            const before = clientClock.delays.length;
            void client.wait(); // reserves synchronously; a wait shows up as a timer of that delay
            const clientWait = clientClock.delays.length > before ? (clientClock.delays.at(-1) ?? 0) : 0;
            expect(clientWait).toBeCloseTo(queue.when('k'), 6);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});

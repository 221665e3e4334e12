import { FakeClock } from '@kubeloop/core/testing';
import { describe, expect, it } from 'vitest';
import {
  BucketRateLimiter,
  defaultControllerRateLimiter,
  InvalidArgumentError,
  ItemExponentialFailureRateLimiter,
  ItemFastSlowRateLimiter,
  MaxOfRateLimiter,
  WithMaxWaitRateLimiter,
} from '../src/index.js';

describe('rate limiters', () => {
  it('exponential: base·2^n capped at max, per item, reset by forget', () => {
    const l = new ItemExponentialFailureRateLimiter<string>(1, 1000);
    expect([l.when('a'), l.when('a'), l.when('a'), l.when('a'), l.when('a')]).toEqual([1, 2, 4, 8, 16]);
    expect(l.numRequeues('a')).toBe(5);
    expect(l.when('b')).toBe(1);
    l.forget('a');
    expect(l.numRequeues('a')).toBe(0);
    expect(l.when('a')).toBe(1);
    for (let i = 0; i < 20; i++) l.when('c');
    expect(l.when('c')).toBe(1000);
  });

  it('exponential: never overflows for huge failure counts', () => {
    const l = new ItemExponentialFailureRateLimiter<string>(5, 1_000_000);
    let last = 0;
    for (let i = 0; i < 2000; i++) last = l.when('x');
    expect(last).toBe(1_000_000);
  });

  it('token bucket: burst free, then 1/qps apart, refilled by the clock', () => {
    const clock = new FakeClock();
    const l = new BucketRateLimiter<string>(10, 3, clock);
    expect([l.when('a'), l.when('b'), l.when('c')]).toEqual([0, 0, 0]);
    expect(l.when('d')).toBeCloseTo(100);
    expect(l.when('e')).toBeCloseTo(200);
    clock.step(1000);
    // 10 tokens refilled, 2 owed, capped at burst 3
    expect(l.when('f')).toBe(0);
    expect(l.numRequeues('a')).toBe(0);
  });

  it('fast-slow: maxFast fast delays then slow', () => {
    const l = new ItemFastSlowRateLimiter<string>(5, 10_000, 3);
    expect([l.when('a'), l.when('a'), l.when('a'), l.when('a')]).toEqual([5, 5, 5, 10_000]);
    expect(l.numRequeues('a')).toBe(4);
    l.forget('a');
    expect(l.when('a')).toBe(5);
  });

  it('max-of: longest delay, max numRequeues, forget fans out', () => {
    const fast = new ItemFastSlowRateLimiter<string>(5, 3000, 3);
    const exp = new ItemExponentialFailureRateLimiter<string>(1, 1000);
    const l = new MaxOfRateLimiter(fast, exp);
    expect([l.when('a'), l.when('a'), l.when('a'), l.when('a')]).toEqual([5, 5, 5, 3000]);
    expect(l.numRequeues('a')).toBe(4);
    l.forget('a');
    expect(fast.numRequeues('a')).toBe(0);
    expect(exp.numRequeues('a')).toBe(0);
  });

  it('with-max-wait caps the delay', () => {
    const l = new WithMaxWaitRateLimiter(new ItemExponentialFailureRateLimiter<string>(100, 100_000), 250);
    expect([l.when('a'), l.when('a'), l.when('a')]).toEqual([100, 200, 250]);
  });

  it('default controller limiter: 5 ms exponential and a 10 qps / burst 100 bucket', () => {
    const clock = new FakeClock();
    const l = defaultControllerRateLimiter<string>(clock);
    expect(l.when('one')).toBe(5);
    expect(l.when('one')).toBe(10);
    for (let i = 0; i < 98; i++) l.when(`k${i}`);
    // bucket now exhausted: the next distinct key waits for the bucket (1/10 s), not 5 ms
    expect(l.when('fresh')).toBeCloseTo(100);
  });

  it('rejects invalid arguments with a typed error', () => {
    expect(() => new ItemExponentialFailureRateLimiter(-1, 10)).toThrow(InvalidArgumentError);
    expect(() => new BucketRateLimiter(0, 1)).toThrow(InvalidArgumentError);
    expect(() => new BucketRateLimiter(1, 0)).toThrow(InvalidArgumentError);
    expect(() => new MaxOfRateLimiter()).toThrow(InvalidArgumentError);
    try {
      new BucketRateLimiter(-1, 1);
    } catch (e) {
      expect((e as InvalidArgumentError).code).toBe('ERR_WORKQUEUE_INVALID_ARGUMENT');
    }
  });
});

// The suite-wide wait budget (scripts/vitest/wait-for-defaults.ts, a setup file of every project): a `vi.waitFor`
// inside a test waits until the test's own timeout is nearly up, whatever shorter timeout it asked for. C21's
// "A stamping as leader" gave up after its own 20 s at load 50 in a 60 s test (soak of 6f2acd3, seed 1129965418),
// although the leader was about to stamp.
import { describe, expect, it, vi } from 'vitest';
import { waitOptions } from '../../../scripts/vitest/wait-for-defaults.js';

describe('wait budget of vi.waitFor', () => {
  it('inside a test: the rest of the test timeout, less a margin, even when the call asks for 20 s', {
    timeout: 60_000,
  }, () => {
    const { timeout, interval } = waitOptions({ timeout: 20_000, interval: 20 });
    expect(timeout).toBeGreaterThan(55_000);
    expect(timeout).toBeLessThanOrEqual(57_000);
    expect(interval).toBe(20);
    expect(waitOptions(1_000).timeout).toBeGreaterThan(55_000);
    expect(waitOptions(undefined).interval).toBe(50);
  });

  it('a call that asks for more than the test has left keeps its own timeout', { timeout: 10_000 }, () => {
    expect(waitOptions({ timeout: 120_000 }).timeout).toBe(120_000);
  });

  it('vi.waitFor itself runs with the budget: a condition that holds after 1.2 s passes a 1 s wait', {
    timeout: 30_000,
  }, async () => {
    const holdsAt = Date.now() + 1_200;
    await vi.waitFor(
      () => {
        if (Date.now() < holdsAt) throw new Error('not yet');
      },
      { timeout: 1_000, interval: 20 },
    );
  });
});

/**
 * vitest setup file of every project (root vitest.config.ts): `vi.waitFor` / `vi.waitUntil` inside a test wait for
 * their condition until the test's own timeout is nearly up, whatever shorter timeout the call gives; outside a test
 * (hooks) a call without a timeout waits up to 10 s instead of vitest's 1 s.
 *
 * Why: the suite waits on real servers, informers, leases and subprocesses. On the 2-core CI box with three workers,
 * or in the soak with two whole suites at once (load 40-70), a condition that holds in 50 ms when idle can take tens
 * of seconds, and a wait on its own short timer (1 s, 10 s, 20 s) failed tests whose condition was about to hold
 * (C21's "A stamping as leader" after 20 s at load 50, examples and leader-election tests before). The test's
 * timeout is the one budget a test has; a few seconds of it are left so that a condition that never holds still fails
 * with its own message rather than as a test timeout. The condition itself is still what is asserted: this changes
 * how long a wait may take, never what it waits for (no timing assertion), and no test waits in order to see a
 * condition fail to hold.
 */
import { vi } from 'vitest';
import { getCurrentTest } from 'vitest/suite';

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_INTERVAL_MS = 50;
/** Part of the test's timeout left after a wait gives up, so the wait's own error is what the test reports. */
const MARGIN_MS = 3_000;

type WaitOptions = number | { timeout?: number; interval?: number } | undefined;

/** Milliseconds the current test has left before its timeout minus the margin; undefined outside a test. */
function testBudgetMs(): number | undefined {
  const test = getCurrentTest();
  const started = test?.result?.startTime;
  if (!test || started === undefined || !(test.timeout > 0)) return undefined;
  const margin = Math.min(MARGIN_MS, test.timeout / 10);
  return test.timeout - margin - (Date.now() - started);
}

/** The options a wait runs with: the larger of the timeout it asked for (or 10 s) and the test's budget. */
export function waitOptions(options: WaitOptions): { timeout: number; interval: number } {
  const given = typeof options === 'number' ? options : options?.timeout;
  const interval = (typeof options === 'number' ? undefined : options?.interval) ?? DEFAULT_INTERVAL_MS;
  return { timeout: Math.max(given ?? DEFAULT_TIMEOUT_MS, testBudgetMs() ?? 0), interval };
}

// With `isolate: false` this file runs once per test file while `vi` stays the same object: wrap only once.
const wrapped = Symbol.for('kubeloop.waitForDefaults');
const target = vi as typeof vi & { [wrapped]?: true };
if (!target[wrapped]) {
  target[wrapped] = true;
  const waitFor = vi.waitFor;
  const waitUntil = vi.waitUntil;
  vi.waitFor = ((callback: Parameters<typeof waitFor>[0], options?: WaitOptions) =>
    waitFor(callback, waitOptions(options))) as typeof vi.waitFor;
  vi.waitUntil = ((callback: Parameters<typeof waitUntil>[0], options?: WaitOptions) =>
    waitUntil(callback, waitOptions(options))) as typeof vi.waitUntil;
}

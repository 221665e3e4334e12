/**
 * vitest setup file of every project (root vitest.config.ts): `vi.waitFor` / `vi.waitUntil` called without a timeout
 * wait up to 10 s instead of vitest's 1 s. The suite waits on real servers, informers and subprocesses; on the 2-core
 * CI box with three workers (and Node 22/24 runs beside them) a condition that holds in 50 ms when idle can take
 * seconds, and a 1 s default made conditions that were going to hold fail (examples and leader-election tests failed
 * that way under load). A call that passes its own timeout keeps it. The condition itself is still what is asserted:
 * this changes how long a wait may take, never what it waits for (no timing assertion).
 */
import { vi } from 'vitest';

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_INTERVAL_MS = 50;

type WaitOptions = number | { timeout?: number; interval?: number } | undefined;

function withDefaults(options: WaitOptions): { timeout: number; interval: number } | number {
  if (typeof options === 'number') return options;
  return {
    timeout: options?.timeout ?? DEFAULT_TIMEOUT_MS,
    interval: options?.interval ?? DEFAULT_INTERVAL_MS,
  };
}

// With `isolate: false` this file runs once per test file while `vi` stays the same object: wrap only once.
const wrapped = Symbol.for('kubeloop.waitForDefaults');
const target = vi as typeof vi & { [wrapped]?: true };
if (!target[wrapped]) {
  target[wrapped] = true;
  const waitFor = vi.waitFor;
  const waitUntil = vi.waitUntil;
  vi.waitFor = ((callback: Parameters<typeof waitFor>[0], options?: WaitOptions) =>
    waitFor(callback, withDefaults(options))) as typeof vi.waitFor;
  vi.waitUntil = ((callback: Parameters<typeof waitUntil>[0], options?: WaitOptions) =>
    waitUntil(callback, withDefaults(options))) as typeof vi.waitUntil;
}

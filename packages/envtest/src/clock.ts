/**
 * The clock the server's watch timers go through (watch deadlines, bookmark times, etcd's progress ticks). The
 * shape is `@kubeloop/client`'s and `@kubeloop/workqueue`'s `Clock` (envtest imports neither), so one of their
 * `FakeClock`s can drive a server in a test. Times are **milliseconds** on an arbitrary monotonic epoch.
 */
export interface ServerClock {
  /** Current time in ms (monotonic; only differences mean anything). */
  now(): number;
  /** Calls `fn` once, `delayMs` ms from now (≤ 0 ⇒ as soon as possible, never synchronously). */
  setTimer(fn: () => void, delayMs: number): { cancel(): void };
}

/** Node's timers accept at most 2^31-1 ms. */
const MAX_NODE_DELAY_MS = 2_147_483_647;

/** The real clock: `performance.now()` and `unref`ed Node timers (they never keep the process alive). */
export const realClock: ServerClock = {
  now: () => performance.now(),
  setTimer(fn, delayMs) {
    const delay = Number.isNaN(delayMs) || delayMs < 0 ? 0 : Math.min(delayMs, MAX_NODE_DELAY_MS);
    const handle = setTimeout(fn, delay);
    handle.unref();
    return { cancel: () => clearTimeout(handle) };
  },
};

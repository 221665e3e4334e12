import { onAbort } from './abort.js';
import { delayOrZero } from './internal/delay.js';

/**
 * The clock every timer of the kubeloop stack goes through (client-go's `k8s.io/utils/clock`): the client's
 * limiter and retries, the reflector's backoff, the work queues' delays, the leader elector, envtest's watch
 * timers. Inject a `FakeClock` (from `@kubeloop/core/testing`) to advance time in tests instead of sleeping.
 * All times are **milliseconds**; `now()` is monotonic on an arbitrary epoch: only differences mean anything.
 */
export interface Clock {
  /** Current time in ms on a monotonic, arbitrary epoch. */
  now(): number;
  /**
   * Calls `fn` once, `delayMs` ms from now (≤ 0 or NaN ⇒ as soon as possible, never synchronously).
   * Timers of the real clock never keep the Node.js process alive (they are `unref`ed).
   */
  setTimer(fn: () => void, delayMs: number): ClockTimer;
  /**
   * Holds the Node.js process open until the returned handle is cancelled. A work queue asks for it only while
   * a `get()` waits and a delayed item will become ready (its timers alone never hold a process open), so an
   * awaiting worker is not cut off by the process exiting (exit code 13). {@link realClock}: one referenced
   * timer; `FakeClock`: nothing real, counted by `keepAliveHandles()`. A clock without it holds nothing.
   */
  keepAlive?(): ClockTimer;
}

/** A pending one-shot timer created by {@link Clock.setTimer} (or a hold from {@link Clock.keepAlive}). */
export interface ClockTimer {
  /** Cancels the timer; calling it after the timer fired, or twice, does nothing. */
  cancel(): void;
}

/** Node's timers accept at most 2^31-1 ms; longer delays are re-armed in steps. */
const MAX_NODE_DELAY_MS = 2_147_483_647;
/** Interval of the keep-alive timer: it never needs to fire (~12 days). */
const KEEP_ALIVE_INTERVAL_MS = 2 ** 30;

class RealTimer implements ClockTimer {
  #handle: ReturnType<typeof setTimeout> | undefined;
  readonly #fn: () => void;
  readonly #dueAt: number;
  readonly #keepAlive: boolean;
  /** @param keepAlive - keep the process alive while pending (a sleep); clock timers are `unref`ed. */
  constructor(fn: () => void, dueAt: number, keepAlive = false) {
    this.#fn = fn;
    this.#dueAt = dueAt;
    this.#keepAlive = keepAlive;
    this.#arm();
  }
  #arm(): void {
    const delay = Math.max(0, Math.min(MAX_NODE_DELAY_MS, this.#dueAt - performance.now()));
    this.#handle = setTimeout(() => {
      this.#handle = undefined;
      if (performance.now() < this.#dueAt - 1) {
        this.#arm();
        return;
      }
      this.#fn();
    }, delay);
    if (!this.#keepAlive) this.#handle.unref();
  }
  cancel(): void {
    if (this.#handle !== undefined) {
      clearTimeout(this.#handle);
      this.#handle = undefined;
    }
  }
}

/**
 * The wall clock: `performance.now()` and `setTimeout`, every timer `unref`ed so pending delays never keep the
 * process alive; delays beyond Node's 2^31-1 ms limit are re-armed in steps. `keepAlive()` is one referenced
 * interval timer, cleared on cancel.
 */
export const realClock: Clock = Object.freeze({
  now: (): number => performance.now(),
  setTimer: (fn: () => void, delayMs: number): ClockTimer =>
    new RealTimer(fn, performance.now() + delayOrZero(delayMs)),
  keepAlive: (): ClockTimer => {
    const handle = setInterval(noop, KEEP_ALIVE_INTERVAL_MS);
    return { cancel: () => clearInterval(handle) };
  },
});

/**
 * Resolves after `ms` on `clock` (negative or NaN ⇒ as soon as possible); rejects with `signal.reason` if
 * `signal` aborts first (at once if it already has). On the real clock the pending timer keeps the process
 * alive like any awaited sleep (it is not `unref`ed). The sleep follows `signal` through the shared per-signal
 * fan-out ({@link onAbort}): however many sleeps wait on one long-lived signal at once, it carries one `abort`
 * listener, and none once they are over (a listener per sleep made Node print MaxListenersExceededWarning past
 * 10). apimachinery's `wait` helpers sleep the same way: a timer raced against the context's `Done()`.
 */
export async function sleep(ms: number, signal?: AbortSignal, clock: Clock = realClock): Promise<void> {
  signal?.throwIfAborted();
  await new Promise<void>((resolve, reject) => {
    let unsubscribe = noop;
    const done = () => {
      unsubscribe();
      resolve();
    };
    const timer =
      clock === realClock
        ? new RealTimer(done, performance.now() + delayOrZero(ms), true)
        : clock.setTimer(done, ms);
    if (signal)
      unsubscribe = onAbort(signal, () => {
        timer.cancel();
        reject(signal.reason);
      });
  });
}

function noop(): void {}

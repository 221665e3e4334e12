import { onAbort } from './abort.js';

/**
 * The clock every timer in the client stack goes through (client-go's `k8s.io/utils/clock`). The shape is
 * the same as `@kubeloop/workqueue`'s `Clock`, so one fake drives both. All times are **milliseconds**;
 * `now()` is monotonic on an arbitrary epoch: only differences mean anything.
 */
export interface Clock {
  /** Current time in ms on a monotonic, arbitrary epoch. */
  now(): number;
  /**
   * Calls `fn` once, `delayMs` ms from now (≤ 0 or NaN ⇒ as soon as possible, never synchronously).
   * Timers of the real clock never keep the Node.js process alive (they are `unref`ed).
   */
  setTimer(fn: () => void, delayMs: number): ClockTimer;
}

/** A pending one-shot timer created by {@link Clock.setTimer}. */
export interface ClockTimer {
  /** Cancels the timer; calling it after the timer fired, or twice, does nothing. */
  cancel(): void;
}

/** A delay in ms, with negative and NaN meaning "now" (`Math.max` would keep NaN). */
function delayOrZero(ms: number): number {
  return Number.isNaN(ms) || ms < 0 ? 0 : ms;
}

/** Node's timers accept at most 2^31-1 ms; longer delays are re-armed in steps. */
const MAX_NODE_DELAY_MS = 2_147_483_647;

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

/** The wall clock: `performance.now()` and `setTimeout`, every timer `unref`ed. */
export const realClock: Clock = Object.freeze({
  now: (): number => performance.now(),
  setTimer: (fn: () => void, delayMs: number): ClockTimer =>
    new RealTimer(fn, performance.now() + delayOrZero(delayMs)),
});

/**
 * Resolves after `ms` on `clock`; rejects with `signal.reason` if `signal` aborts first (at once if it already
 * has). On the real clock the pending timer keeps the process alive like any awaited sleep (it is not
 * `unref`ed). The sleep follows `signal` through the shared per-signal fan-out ({@link onAbort}): however many
 * sleeps wait on one long-lived signal at once, it carries one `abort` listener, and none once they are over
 * (a listener per sleep made Node print MaxListenersExceededWarning past 10).
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

interface FakeTimerEntry {
  readonly at: number;
  readonly seq: number;
  readonly fn: () => void;
}

/**
 * A manually driven {@link Clock} for tests (client-go's `clock/testing.FakeClock`; same behaviour as
 * `@kubeloop/workqueue`'s). Time moves only with {@link FakeClock.step} or {@link FakeClock.setTime}; due
 * timers then fire synchronously, in due-time order (ties in creation order).
 */
export class FakeClock implements Clock {
  #current: number;
  #seq = 0;
  readonly #timers: FakeTimerEntry[] = [];

  /** @param startMs - initial `now()` in ms (default 0). */
  constructor(startMs = 0) {
    this.#current = startMs;
  }

  now(): number {
    return this.#current;
  }

  setTimer(fn: () => void, delayMs: number): ClockTimer {
    const entry: FakeTimerEntry = { at: this.#current + delayOrZero(delayMs), seq: this.#seq++, fn };
    this.#timers.push(entry);
    return {
      cancel: () => {
        const i = this.#timers.indexOf(entry);
        if (i >= 0) this.#timers.splice(i, 1);
      },
    };
  }

  /**
   * Advances time by `ms` and fires every timer that becomes due (also timers created while stepping).
   * @throws RangeError if `ms` is negative or not finite.
   */
  step(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0)
      throw new RangeError('FakeClock.step: ms must be a finite number >= 0');
    this.setTime(this.#current + ms);
  }

  /**
   * Sets the time to `ms` and fires every timer due at or before it.
   * @throws RangeError if `ms` is earlier than the current time (the clock is monotonic).
   */
  setTime(ms: number): void {
    if (!(ms >= this.#current)) throw new RangeError('FakeClock.setTime: time cannot go backwards');
    for (;;) {
      const next = this.#nextDue(ms);
      if (next === undefined) break;
      this.#timers.splice(this.#timers.indexOf(next), 1);
      this.#current = next.at;
      next.fn();
    }
    this.#current = ms;
  }

  /** Number of pending (not fired, not cancelled) timers. */
  pendingTimers(): number {
    return this.#timers.length;
  }

  /** Due time (ms) of the earliest pending timer, or `undefined` if there is none. */
  nextTimerAt(): number | undefined {
    return this.#nextDue(Number.POSITIVE_INFINITY)?.at;
  }

  #nextDue(limit: number): FakeTimerEntry | undefined {
    let best: FakeTimerEntry | undefined;
    for (const t of this.#timers) {
      if (t.at > limit) continue;
      if (best === undefined || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t;
    }
    return best;
  }
}

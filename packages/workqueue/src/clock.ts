/**
 * The clock every timer in `@kubeloop/workqueue` goes through (client-go's `k8s.io/utils/clock` and its
 * `testing.FakeClock`). Inject a {@link FakeClock} to advance time in tests instead of sleeping.
 *
 * All times are **milliseconds**. `now()` is monotonic on an arbitrary epoch: only differences mean anything.
 */

/** A pending one-shot timer created by {@link Clock.setTimer}. */
export interface ClockTimer {
  /** Cancels the timer; calling it after the timer fired, or twice, does nothing. */
  cancel(): void;
}

/** Source of time and one-shot timers (ms). */
export interface Clock {
  /** Current time in ms on a monotonic, arbitrary epoch. */
  now(): number;
  /**
   * Calls `fn` once, `delayMs` ms from now (≤ 0 or NaN ⇒ as soon as possible, never synchronously).
   * Timers of the real clock never keep the Node.js process alive (they are `unref`ed).
   */
  setTimer(fn: () => void, delayMs: number): ClockTimer;
  /**
   * Holds the Node.js process open until the returned handle is cancelled. The queues ask for it only while
   * a `get()` waits and a delayed item will become ready (their timers alone never hold a process open), so
   * an awaiting worker is not cut off by the process exiting (exit code 13). {@link realClock}: one
   * referenced timer; {@link FakeClock}: nothing real, counted by `keepAliveHandles()`. A clock without
   * it holds nothing.
   */
  keepAlive?(): ClockTimer;
}

const noop = (): void => {};
/** Interval of the keep-alive timer: it never needs to fire (~12 days). */
const KEEP_ALIVE_INTERVAL_MS = 2 ** 30;

/** A delay in ms, with negative and NaN meaning "now" (`Math.max` would keep NaN). */
function delayOrZero(ms: number): number {
  return Number.isNaN(ms) || ms < 0 ? 0 : ms;
}

/** Node's timers accept at most 2^31-1 ms; longer delays are re-armed in steps. */
const MAX_NODE_DELAY_MS = 2_147_483_647;

class RealTimer implements ClockTimer {
  private handle: ReturnType<typeof setTimeout> | undefined;
  constructor(
    private readonly fn: () => void,
    private readonly dueAt: number,
  ) {
    this.arm();
  }
  private arm(): void {
    const delay = Math.max(0, Math.min(MAX_NODE_DELAY_MS, this.dueAt - performance.now()));
    this.handle = setTimeout(() => {
      this.handle = undefined;
      if (performance.now() < this.dueAt - 1) {
        this.arm();
        return;
      }
      this.fn();
    }, delay);
    this.handle.unref?.();
  }
  cancel(): void {
    if (this.handle !== undefined) {
      clearTimeout(this.handle);
      this.handle = undefined;
    }
  }
}

/**
 * The wall clock: `performance.now()` and `setTimeout`, with every timer `unref`ed so a queue's pending
 * delays never keep the process alive; `keepAlive()` is one referenced interval timer, cleared on cancel.
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

interface FakeTimerEntry {
  readonly at: number;
  readonly seq: number;
  readonly fn: () => void;
  cancelled: boolean;
}

/**
 * A manually driven {@link Clock} for tests (client-go's `clock/testing.FakeClock`). Time only moves when
 * you call {@link FakeClock.step} or {@link FakeClock.setTime}; due timers then fire synchronously, in
 * due-time order (ties in creation order), each seeing `now()` equal to its due time.
 *
 * @example
 * ```ts
 * const clock = new FakeClock();
 * const q = newDelayingQueue<string>({ clock });
 * q.addAfter('a', 1000);
 * clock.step(1000); // 'a' is now in the queue
 * ```
 */
export class FakeClock implements Clock {
  private current: number;
  private seq = 0;
  private timers: FakeTimerEntry[] = [];
  private held = 0;

  /** @param startMs - initial `now()` in ms (default 0). */
  constructor(startMs = 0) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  setTimer(fn: () => void, delayMs: number): ClockTimer {
    const entry: FakeTimerEntry = {
      at: this.current + delayOrZero(delayMs),
      seq: this.seq++,
      fn,
      cancelled: false,
    };
    this.timers.push(entry);
    return {
      cancel: () => {
        entry.cancelled = true;
        const i = this.timers.indexOf(entry);
        if (i >= 0) this.timers.splice(i, 1);
      },
    };
  }

  /**
   * Advances time by `ms` (must be ≥ 0) and fires every timer that becomes due, including timers created by
   * callbacks while stepping, if they fall inside the step.
   * @throws RangeError if `ms` is negative or not finite.
   */
  step(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0)
      throw new RangeError(`FakeClock.step: ms must be a finite number >= 0`);
    this.setTime(this.current + ms);
  }

  /**
   * Sets the time to `ms` and fires every timer due at or before it.
   * @throws RangeError if `ms` is earlier than the current time (the clock is monotonic).
   */
  setTime(ms: number): void {
    if (!(ms >= this.current)) throw new RangeError(`FakeClock.setTime: time cannot go backwards`);
    for (;;) {
      const next = this.nextDue(ms);
      if (next === undefined) break;
      this.timers.splice(this.timers.indexOf(next), 1);
      this.current = next.at;
      next.fn();
    }
    this.current = ms;
  }

  /** Number of pending (not fired, not cancelled) timers. */
  pendingTimers(): number {
    return this.timers.length;
  }

  /** Counts a keep-alive hold (nothing real is held); cancelling the handle, once or more, releases it. */
  keepAlive(): ClockTimer {
    this.held++;
    let released = false;
    return {
      cancel: () => {
        if (released) return;
        released = true;
        this.held--;
      },
    };
  }

  /** Keep-alive holds not yet cancelled: what a queue on the real clock would hold the process open with. */
  keepAliveHandles(): number {
    return this.held;
  }

  /** Due time (ms) of the earliest pending timer, or `undefined` if there is none. */
  nextTimerAt(): number | undefined {
    return this.nextDue(Number.POSITIVE_INFINITY)?.at;
  }

  private nextDue(limit: number): FakeTimerEntry | undefined {
    let best: FakeTimerEntry | undefined;
    for (const t of this.timers) {
      if (t.at > limit) continue;
      if (best === undefined || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t;
    }
    return best;
  }
}

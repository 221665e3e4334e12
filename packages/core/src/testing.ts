/**
 * @packageDocumentation
 * `@kubeloop/core/testing` — the manually driven {@link FakeClock} for tests: inject it wherever a kubeloop
 * option takes a `clock` and advance time with `step` instead of sleeping.
 */
import type { Clock, ClockTimer } from './clock.js';
import { delayOrZero } from './internal/delay.js';

interface FakeTimerEntry {
  readonly at: number;
  readonly seq: number;
  readonly fn: () => void;
}

/**
 * A manually driven {@link Clock} for tests (client-go's `k8s.io/utils/clock/testing.FakeClock`). Time moves
 * only with {@link FakeClock.step} or {@link FakeClock.setTime}; due timers then fire synchronously, in due-time
 * order (ties in creation order), each seeing `now()` equal to its due time. All times are ms.
 *
 * @example
 * ```ts
 * const clock = new FakeClock();
 * const fired: number[] = [];
 * clock.setTimer(() => fired.push(clock.now()), 1000);
 * clock.step(1000); // fired is [1000]
 * ```
 */
export class FakeClock implements Clock {
  #current: number;
  #seq = 0;
  #held = 0;
  readonly #timers: FakeTimerEntry[] = [];

  /** @param startMs - initial `now()` in ms (default 0). */
  constructor(startMs = 0) {
    this.#current = startMs;
  }

  /** The fake time in ms. */
  now(): number {
    return this.#current;
  }

  /** Schedules `fn` at `now() + delayMs` (negative or NaN ⇒ now); it fires on the next step that reaches it. */
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
   * Advances time by `ms` and fires every timer that becomes due, including timers created by callbacks
   * while stepping, if they fall inside the step.
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

  /** Counts a keep-alive hold (nothing real is held); cancelling the handle, once or more, releases it. */
  keepAlive(): ClockTimer {
    this.#held++;
    let released = false;
    return {
      cancel: () => {
        if (released) return;
        released = true;
        this.#held--;
      },
    };
  }

  /** Keep-alive holds not yet cancelled: what a queue on the real clock would hold the process open with. */
  keepAliveHandles(): number {
    return this.#held;
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

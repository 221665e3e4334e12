import { onAbort } from './abort.js';
import { type Clock, type ClockTimer, realClock } from './clock.js';

/** What {@link withDeadline} returns: a signal that aborts on the caller's abort or on the deadline. */
export interface Deadline {
  /** Aborts with the caller signal's reason, or with a `TimeoutError` `DOMException` when the time is up. */
  readonly signal: AbortSignal;
  /** True once the deadline (not the caller) aborted {@link Deadline.signal}. */
  readonly timedOut: boolean;
  /**
   * Stops the timer and removes the listener from the caller's signal; the deadline signal then never
   * aborts. Call it when the guarded work ends (also on error). Calling it twice does nothing.
   */
  dispose(): void;
}

/**
 * The one deadline helper of the stack: a signal that aborts when `parent` aborts or `timeoutMs` ms from now,
 * whichever comes first (client-go's `context.WithTimeout(ctx, d)`). Use it instead of
 * `AbortSignal.any([parent, AbortSignal.timeout(ms)])`: Node may garbage-collect an otherwise unreferenced
 * `AbortSignal.timeout` signal inside `AbortSignal.any`, and then the deadline never fires — here the
 * returned object holds its timer strongly. The timer never keeps the process alive (real clock: `unref`).
 * Listeners on `parent` live only until {@link Deadline.dispose} or an abort, so a long-lived caller signal
 * collects none.
 *
 * @param parent - the caller's signal, if any.
 * @param timeoutMs - the time budget in ms; `≤ 0`, `NaN` or `Infinity` means no deadline (only `parent`).
 * @param clock - the clock for the timer (tests inject a fake). Default the real one.
 */
export function withDeadline(
  parent: AbortSignal | undefined,
  timeoutMs: number,
  clock: Clock = realClock,
): Deadline {
  const ac = new AbortController();
  let timer: ClockTimer | undefined;
  let timedOut = false;
  let unsubscribe: () => void = noop;
  const dispose = () => {
    timer?.cancel();
    timer = undefined;
    unsubscribe();
  };
  if (parent?.aborted) {
    ac.abort(parent.reason);
  } else {
    // Through the per-signal fan-out: many concurrent deadlines on one caller signal add one listener.
    if (parent) {
      unsubscribe = onAbort(parent, () => {
        timer?.cancel();
        timer = undefined;
        ac.abort(parent.reason);
      });
    }
    if (timeoutMs > 0 && Number.isFinite(timeoutMs)) {
      timer = clock.setTimer(() => {
        timer = undefined;
        unsubscribe();
        timedOut = true;
        ac.abort(new DOMException(`timed out after ${timeoutMs} ms`, 'TimeoutError'));
      }, timeoutMs);
    }
  }
  return {
    signal: ac.signal,
    get timedOut() {
      return timedOut;
    },
    dispose,
  };
}

function noop(): void {}

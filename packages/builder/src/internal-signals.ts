import { type Clock, onAbort, realClock, withDeadline } from '@kubeloop/core';

/**
 * A signal aborted when `parent` aborts or after `ms` milliseconds on `clock`, whichever comes first: core's
 * {@link withDeadline} (it holds its timer strongly, unlike `AbortSignal.any` + `AbortSignal.timeout`).
 * Call `clear()` when done; the timer does not keep the process alive.
 * @internal
 */
export function signalWithTimeout(
  parent: AbortSignal,
  ms: number,
  clock: Clock = realClock,
): { signal: AbortSignal; clear: () => void } {
  const d = withDeadline(parent, ms, clock);
  return { signal: d.signal, clear: d.dispose };
}

/**
 * A promise that resolves when `signal` aborts (at once if it has), subscribed through the client's
 * per-signal fan-out {@link onAbort}: however many components wait on one long-lived signal (the
 * manager's stop, a runnable group's), the signal carries one `abort` listener. Call
 * `off()` when the wait is abandoned (e.g. it lost a race) so the subscription does not outlive it.
 * @internal
 */
export function whenAborted(signal: AbortSignal): {
  readonly promise: Promise<void>;
  readonly off: () => void;
} {
  let off: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => {
    off = onAbort(signal, resolve);
  });
  return { promise, off };
}

/** Whether `p` settled before `deadline` aborted. */
export async function settledBefore(p: Promise<unknown>, deadline: AbortSignal): Promise<boolean> {
  if (deadline.aborted) return false;
  const timedOut = whenAborted(deadline);
  try {
    return await Promise.race([
      p.then(
        () => true,
        () => true,
      ),
      timedOut.promise.then(() => false),
    ]);
  } finally {
    timedOut.off();
  }
}

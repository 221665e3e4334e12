/**
 * A signal aborted when `parent` aborts or after `ms` milliseconds, whichever comes first. Unlike
 * `AbortSignal.any([parent, AbortSignal.timeout(ms)])` it holds its timer strongly: Node may garbage-collect
 * an otherwise unreferenced `AbortSignal.timeout` signal inside `AbortSignal.any`, and then it never fires.
 * Call `clear()` when done; the timer does not keep the process alive.
 * @internal
 */
export function signalWithTimeout(
  parent: AbortSignal,
  ms: number,
): { signal: AbortSignal; clear: () => void } {
  const ac = new AbortController();
  const onAbort = () => ac.abort(parent.reason);
  if (parent.aborted) ac.abort(parent.reason);
  else parent.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(() => ac.abort(new Error(`timed out after ${ms} ms`)), ms);
  timer.unref();
  return {
    signal: ac.signal,
    clear: () => {
      clearTimeout(timer);
      parent.removeEventListener('abort', onAbort);
    },
  };
}

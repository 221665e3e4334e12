/**
 * One real `abort` listener per signal, however many requests, deadlines, informers or waits follow it at
 * once: Node warns (MaxListenersExceededWarning) past 10 listeners on one signal, and a long-lived signal
 * shared by many concurrent requests would otherwise carry one listener each (case C33).
 * The listener is removed again when its last subscriber leaves, so a signal that outlives every request
 * carries none.
 */
const subscribers = new WeakMap<AbortSignal, { readonly fns: Set<() => void>; readonly fire: () => void }>();

/**
 * Calls `fn` once when `signal` aborts (at once, synchronously, if it already has). Returns the
 * unsubscribe function; calling it twice does nothing. Every subscriber of one signal shares one real
 * `abort` listener, removed with the last subscriber: use it instead of `signal.addEventListener('abort', …)`
 * wherever many waits follow one long-lived signal (a manager's, an informer's), as Go code selects on one
 * `ctx.Done()` channel from any number of goroutines.
 */
export function onAbort(signal: AbortSignal, fn: () => void): () => void {
  if (signal.aborted) {
    fn();
    return noop;
  }
  let entry = subscribers.get(signal);
  if (!entry) {
    const fns = new Set<() => void>();
    const fire = () => {
      subscribers.delete(signal);
      for (const f of [...fns]) f();
    };
    entry = { fns, fire };
    subscribers.set(signal, entry);
    signal.addEventListener('abort', fire, { once: true });
  }
  const e = entry;
  e.fns.add(fn);
  return () => {
    if (!e.fns.delete(fn) || e.fns.size > 0) return;
    if (subscribers.get(signal) === e) {
      subscribers.delete(signal);
      signal.removeEventListener('abort', e.fire);
    }
  };
}

function noop(): void {}

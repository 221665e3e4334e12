/**
 * One real `abort` listener per signal, however many reflectors, informers or waits follow it: Node warns
 * (MaxListenersExceededWarning) past 10 listeners on one signal, and a signal shared by many informers would
 * otherwise collect one listener each (issue 16 item 8).
 */
const subscribers = new WeakMap<AbortSignal, Set<() => void>>();

/**
 * Calls `fn` once when `signal` aborts (at once if it has). Returns the unsubscribe. The single listener put
 * on `signal` stays until it aborts; subscribers come and go without touching the signal.
 */
export function onAbort(signal: AbortSignal, fn: () => void): () => void {
  if (signal.aborted) {
    fn();
    return noop;
  }
  let set = subscribers.get(signal);
  if (!set) {
    const fresh = new Set<() => void>();
    set = fresh;
    subscribers.set(signal, fresh);
    signal.addEventListener(
      'abort',
      () => {
        subscribers.delete(signal);
        for (const f of [...fresh]) f();
      },
      { once: true },
    );
  }
  const s = set;
  s.add(fn);
  return () => {
    s.delete(fn);
  };
}

/** An AbortController that aborts when `parent` does (through {@link onAbort}); `release` unlinks it. */
export function childController(parent: AbortSignal): { controller: AbortController; release: () => void } {
  const controller = new AbortController();
  const release = onAbort(parent, () => controller.abort(parent.reason));
  return { controller, release };
}

function noop(): void {}

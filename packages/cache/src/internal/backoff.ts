/**
 * Exponential backoff with jitter and a reset after a quiet period (client-go reflector defaults:
 * 800 ms, ×2, cap 30 s, jitter 1.0, reset after 2 min without a failure). All durations in ms.
 */
export interface BackoffOptions {
  readonly initialMs?: number;
  readonly maxMs?: number;
  readonly factor?: number;
  /** Extra random fraction added to each delay: delay × (1 + jitter × random()). */
  readonly jitter?: number;
  /** A failure this long after the previous one starts again from `initialMs`. */
  readonly resetAfterMs?: number;
  readonly random?: () => number;
  readonly now?: () => number;
}

export class Backoff {
  readonly #o: Required<BackoffOptions>;
  #next: number;
  #lastAt = Number.NEGATIVE_INFINITY;

  constructor(options: BackoffOptions = {}) {
    this.#o = {
      initialMs: options.initialMs ?? 800,
      maxMs: options.maxMs ?? 30_000,
      factor: options.factor ?? 2,
      jitter: options.jitter ?? 1,
      resetAfterMs: options.resetAfterMs ?? 120_000,
      random: options.random ?? Math.random,
      now: options.now ?? Date.now,
    };
    this.#next = this.#o.initialMs;
  }

  /** The next delay in ms (and advance). */
  nextDelayMs(): number {
    const now = this.#o.now();
    if (now - this.#lastAt > this.#o.resetAfterMs) this.#next = this.#o.initialMs;
    this.#lastAt = now;
    const base = this.#next;
    this.#next = Math.min(this.#o.maxMs, base * this.#o.factor);
    return Math.min(this.#o.maxMs, base * (1 + this.#o.jitter * this.#o.random()));
  }

  /** Back to the initial delay (after a healthy stretch). */
  reset(): void {
    this.#next = this.#o.initialMs;
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const onAbort = () => {
      clearTimeout(t);
      resolve();
    };
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

import { type Clock, realClock } from './clock.js';

/**
 * Exponential backoff with jitter and a reset after a quiet period. All durations in ms. The defaults are
 * client-go's reflector backoff (`wait.NewExponentialBackoffManager(800ms, 30s, 2m, 2.0, 1.0)`).
 */
export interface BackoffOptions {
  /** First delay. @defaultValue 800 */
  readonly initialMs?: number;
  /** Largest delay, jitter included. @defaultValue 30 000 */
  readonly maxMs?: number;
  /** Multiplier after each delay. @defaultValue 2 */
  readonly factor?: number;
  /** Extra random fraction of each delay: delay × (1 + jitter × random()). @defaultValue 1 */
  readonly jitter?: number;
  /** A failure this long after the previous one starts again from `initialMs`. @defaultValue 120 000 */
  readonly resetAfterMs?: number;
  /** Random source in [0, 1). @defaultValue `Math.random` */
  readonly random?: () => number;
  /** Time source for `resetAfterMs`. @defaultValue the real clock */
  readonly clock?: Pick<Clock, 'now'>;
}

/** client-go's reflector backoff numbers (see {@link BackoffOptions}). */
export const DEFAULT_REFLECTOR_BACKOFF: Readonly<Required<Omit<BackoffOptions, 'random' | 'clock'>>> =
  Object.freeze({ initialMs: 800, maxMs: 30_000, factor: 2, jitter: 1, resetAfterMs: 120_000 });

/**
 * The one backoff of the stack (client-go `wait.Backoff` driven by an `ExponentialBackoffManager`): each
 * {@link Backoff.nextDelayMs} returns `initialMs × factor^n` with jitter, capped at `maxMs`; a failure more
 * than `resetAfterMs` after the previous one, or {@link Backoff.reset}, starts over.
 * @throws RangeError when an option is negative or not a number, or `factor` is below 1.
 */
export class Backoff {
  readonly #initialMs: number;
  readonly #maxMs: number;
  readonly #factor: number;
  readonly #jitter: number;
  readonly #resetAfterMs: number;
  readonly #random: () => number;
  readonly #clock: Pick<Clock, 'now'>;
  #next: number;
  #lastAt = Number.NEGATIVE_INFINITY;

  constructor(options: BackoffOptions = {}) {
    const d = DEFAULT_REFLECTOR_BACKOFF;
    this.#initialMs = nonNegative('initialMs', options.initialMs ?? d.initialMs);
    this.#maxMs = nonNegative('maxMs', options.maxMs ?? d.maxMs);
    this.#factor = nonNegative('factor', options.factor ?? d.factor);
    if (this.#factor < 1) throw new RangeError(`Backoff: factor must be >= 1, got ${this.#factor}`);
    this.#jitter = nonNegative('jitter', options.jitter ?? d.jitter);
    this.#resetAfterMs = nonNegative('resetAfterMs', options.resetAfterMs ?? d.resetAfterMs);
    this.#random = options.random ?? Math.random;
    this.#clock = options.clock ?? realClock;
    this.#next = this.#initialMs;
  }

  /** The next delay in ms; advances the backoff. */
  nextDelayMs(): number {
    const now = this.#clock.now();
    if (now - this.#lastAt > this.#resetAfterMs) this.#next = this.#initialMs;
    this.#lastAt = now;
    const base = this.#next;
    this.#next = Math.min(this.#maxMs, base * this.#factor);
    return Math.min(this.#maxMs, base * (1 + this.#jitter * this.#random()));
  }

  /** Back to `initialMs` (after a healthy stretch). */
  reset(): void {
    this.#next = this.#initialMs;
  }
}

function nonNegative(name: string, v: number): number {
  if (!(v >= 0)) throw new RangeError(`Backoff: ${name} must be a number >= 0, got ${v}`);
  return v;
}

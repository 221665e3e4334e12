import { type Clock, onAbort, realClock } from '@kubeloop/core';

/** Default of {@link WatchListSupportOptions.reprobeIntervalMs}: 10 minutes. */
export const DEFAULT_WATCH_LIST_REPROBE_MS = 10 * 60_000;

/** Options of {@link WatchListSupport}. */
export interface WatchListSupportOptions {
  /**
   * How long, in ms, a refusal is remembered: the reflectors sharing this record use list + watch until then,
   * and the first relist after it tries WatchList again; `Infinity`: never again (for the rest of their lives).
   * @defaultValue 600000 (10 minutes)
   */
  readonly reprobeIntervalMs?: number;
  /** Time source of the interval. @defaultValue the real clock */
  readonly clock?: Clock;
}

/**
 * What one API server said about streaming lists (WatchList, KEP-3157), shared by every reflector talking to
 * it, so that a server that refuses them costs one refused request (and one warning) per re-probe interval
 * and not one per informer per relist.
 *
 * client-go's reflector falls back to list + watch whenever `watchList` fails with anything but a retriable
 * error (connection refused, 429, 410 / "too large resource version"), and tries WatchList again on its next
 * relist. A kube-apiserver 1.32 on etcd 3.4 refuses every attempt with a 500, so this keeps the refusal for
 * {@link WatchListSupportOptions.reprobeIntervalMs} instead of paying it on every relist. Only answers about the
 * server are kept (the reflector's `watchListFailureOf`: a 400/422 naming the streaming parameters, that 500, no
 * end bookmark in time, resets every time); a failure a plain list would meet too — a 404 of a CRD deleted under
 * its informer, 401/403, any other 5xx — is not, or one missing resource would turn streaming off for every
 * informer of the server. Until the server
 * has answered one streaming list, one reflector at a time tries ({@link WatchListSupport.turn}); the others
 * wait for its answer (its first event, or its refusal) instead of all sending a request the server may refuse.
 */
export class WatchListSupport {
  readonly #reprobeMs: number;
  readonly #clock: Clock;
  #refusedAt: number | undefined;
  #reason: unknown;
  /** The server answered a streaming list since the last refusal: no need to probe. */
  #accepted = false;
  /** A reflector's streaming list is deciding for everyone. */
  #probing = false;
  /** A refusal has been logged at warn since the server last served one (see {@link refused}). */
  #warned = false;
  readonly #waiting = new Set<() => void>();

  /** @throws RangeError for a `reprobeIntervalMs` that is negative or not a number. */
  constructor(options: WatchListSupportOptions = {}) {
    const ms = options.reprobeIntervalMs ?? DEFAULT_WATCH_LIST_REPROBE_MS;
    if (typeof ms !== 'number' || Number.isNaN(ms) || ms < 0)
      throw new RangeError(`WatchListSupport reprobeIntervalMs must be a number >= 0 got ${String(ms)}`);
    this.#reprobeMs = ms;
    this.#clock = options.clock ?? realClock;
  }

  /**
   * Whether a reflector should try a streaming list now, without waiting: never refused, or the refusal is
   * older than the interval.
   */
  shouldTry(): boolean {
    if (this.#refusedAt === undefined) return true;
    if (this.#clock.now() - this.#refusedAt < this.#reprobeMs) return false;
    this.#refusedAt = undefined;
    this.#reason = undefined;
    return true;
  }

  /**
   * Whether a reflector should try a streaming list now: `false` while a refusal is remembered; `true` once
   * the server has served one; otherwise the first caller gets `true` and must report the outcome
   * ({@link served}, {@link refused} or {@link undecided}), and later callers wait for it. Resolves `false`
   * when `signal` aborts.
   */
  async turn(signal: AbortSignal): Promise<boolean> {
    for (;;) {
      if (!this.shouldTry() || signal.aborted) return false;
      if (this.#accepted) return true;
      if (!this.#probing) {
        this.#probing = true;
        return true;
      }
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          this.#waiting.delete(wake);
          off();
          resolve();
        };
        this.#waiting.add(wake);
        const off = onAbort(signal, wake);
      });
    }
  }

  /**
   * Records that the server refused a streaming list with `reason` (it does not serve them). Returns whether this refusal
   * should be logged at warn: the first since the record was made or the server last served one.
   */
  refused(reason: unknown): boolean {
    this.#refusedAt = this.#clock.now();
    this.#reason = reason;
    this.#accepted = false;
    this.#decide();
    const warn = !this.#warned;
    this.#warned = true;
    return warn;
  }

  /** Records that the server served a streaming list (clears any remembered refusal). */
  served(): void {
    this.#refusedAt = undefined;
    this.#reason = undefined;
    this.#accepted = true;
    this.#warned = false;
    this.#decide();
  }

  /**
   * The attempt that {@link turn} allowed ended without saying anything about the server (a retriable or
   * failed request, or its reflector stopped): the next waiting reflector tries.
   */
  undecided(): void {
    this.#decide();
  }

  /** The error of the refusal being remembered, if any. */
  get refusal(): unknown {
    return this.#reason;
  }

  #decide(): void {
    this.#probing = false;
    for (const wake of [...this.#waiting]) wake();
  }
}

import { type Clock, realClock } from '@kubeloop/core';

/** Default of {@link WatchListSupportOptions.reprobeIntervalMs}: 10 minutes. */
export const DEFAULT_WATCH_LIST_REPROBE_MS = 10 * 60_000;

/** Options of {@link WatchListSupport}. */
export interface WatchListSupportOptions {
  /**
   * How long, in ms, a refusal is remembered: the reflectors sharing this record use list + watch until then,
   * and the first relist after it tries WatchList again. @defaultValue 600000 (10 minutes)
   */
  readonly reprobeIntervalMs?: number;
  /** Time source of the interval. @defaultValue the real clock */
  readonly clock?: Clock;
}

/**
 * What one API server said about streaming lists (WatchList, KEP-3157), shared by every reflector talking to
 * it, so that a server that refuses them costs one refused request per re-probe interval and not one per
 * informer per relist.
 *
 * client-go's reflector falls back to list + watch whenever `watchList` fails with anything but a retriable
 * error (connection refused, 429, 410 / "too large resource version"), and tries WatchList again on its next
 * relist. A kube-apiserver 1.32 on etcd 3.4 refuses every attempt with a 500, so this keeps the refusal for
 * {@link WatchListSupportOptions.reprobeIntervalMs} instead of paying it on every relist.
 */
export class WatchListSupport {
  readonly #reprobeMs: number;
  readonly #clock: Clock;
  #refusedAt: number | undefined;
  #reason: unknown;

  /** @throws RangeError for a `reprobeIntervalMs` that is negative or not a number. */
  constructor(options: WatchListSupportOptions = {}) {
    const ms = options.reprobeIntervalMs ?? DEFAULT_WATCH_LIST_REPROBE_MS;
    if (typeof ms !== 'number' || Number.isNaN(ms) || ms < 0)
      throw new RangeError(`WatchListSupport reprobeIntervalMs must be a number >= 0, got ${String(ms)}`);
    this.#reprobeMs = ms;
    this.#clock = options.clock ?? realClock;
  }

  /** Whether a reflector should try a streaming list now: never refused, or the refusal is older than the interval. */
  shouldTry(): boolean {
    if (this.#refusedAt === undefined) return true;
    if (this.#clock.now() - this.#refusedAt < this.#reprobeMs) return false;
    this.#refusedAt = undefined;
    this.#reason = undefined;
    return true;
  }

  /** Records that the server refused (or failed) a streaming list with `reason`. */
  refused(reason: unknown): void {
    this.#refusedAt = this.#clock.now();
    this.#reason = reason;
  }

  /** Records that a streaming list succeeded (clears any remembered refusal). */
  served(): void {
    this.#refusedAt = undefined;
    this.#reason = undefined;
  }

  /** The error of the refusal being remembered, if any. */
  get refusal(): unknown {
    return this.#reason;
  }
}

import { sleep } from '@kubeloop/core';
import { isConflict } from './errors.js';

/**
 * How {@link retryOnConflict} spaces its attempts (apimachinery `wait.Backoff`). Durations in ms.
 */
export interface RetryBackoff {
  /** Attempts in all (the first included). */
  readonly steps: number;
  /** The wait before the second attempt, in ms. */
  readonly durationMs: number;
  /** Multiplier of the wait after each attempt. */
  readonly factor: number;
  /** Extra random fraction of each wait: wait × (1 + jitter × random()). */
  readonly jitter: number;
}

/** client-go `retry.DefaultRetry`: 5 attempts, 10 ms apart, jitter 0.1 — for conflicts between controllers. */
export const DEFAULT_RETRY: RetryBackoff = Object.freeze({
  steps: 5,
  durationMs: 10,
  factor: 1,
  jitter: 0.1,
});

/** client-go `retry.DefaultBackoff`: 4 attempts, 10 ms ×5 each time, jitter 0.1 — for slower contention. */
export const DEFAULT_BACKOFF: RetryBackoff = Object.freeze({
  steps: 4,
  durationMs: 10,
  factor: 5,
  jitter: 0.1,
});

/**
 * Runs `fn` again while it fails with `retriable(err)`, waiting per `backoff` between attempts (client-go
 * `retry.OnError`). `fn` must re-read the object on every attempt, otherwise it repeats the same stale write.
 * @returns what `fn` resolved to.
 * @throws the last error once `backoff.steps` attempts are used up, or at once a non-retriable error, or
 *   the signal's reason when `signal` aborts during a wait.
 */
export async function retryOnError<R>(
  backoff: RetryBackoff,
  retriable: (err: unknown) => boolean,
  fn: () => Promise<R>,
  signal?: AbortSignal,
): Promise<R> {
  let wait = backoff.durationMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= Math.max(1, backoff.steps) || !retriable(err)) throw err;
    }
    const ms = wait * (1 + backoff.jitter * Math.random());
    wait *= backoff.factor;
    await sleep(ms, signal);
  }
}

/**
 * Runs `fn` again while it fails with a 409 Conflict (client-go `retry.RetryOnConflict`): the way to make a
 * read-modify-write stick when another writer may change the object in between. `fn` must get the object
 * fresh, modify it and write it with its `resourceVersion` (an update, or a patch carrying
 * `metadata.resourceVersion`) so the server refuses a write based on a stale read.
 * @throws the last conflict after `backoff.steps` attempts, or any other error at once.
 */
export function retryOnConflict<R>(
  fn: () => Promise<R>,
  backoff: RetryBackoff = DEFAULT_RETRY,
  signal?: AbortSignal,
): Promise<R> {
  return retryOnError(backoff, isConflict, fn, signal);
}

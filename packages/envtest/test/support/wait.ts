import { vi } from 'vitest';

/**
 * Waiting on a condition with a deadline: the only way tests here synchronise (never fixed sleeps).
 */

/**
 * Polls `probe` until it returns a value other than `undefined`/`false`, and returns it.
 * Throws an Error naming `what` when `timeoutMs` passes first; the last probe error, if any, is its cause.
 */
export async function waitFor<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs: number,
  what: string,
  intervalMs = 50,
): Promise<T> {
  let lastError: unknown;
  try {
    return await vi.waitFor(
      async () => {
        let v: T | undefined | false;
        try {
          v = await probe();
        } catch (err) {
          lastError = err;
          throw err;
        }
        if (v === undefined || v === false) throw new Error('not yet');
        return v;
      },
      { timeout: timeoutMs, interval: intervalMs },
    );
  } catch {
    throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`, { cause: lastError });
  }
}

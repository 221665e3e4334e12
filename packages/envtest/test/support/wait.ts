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
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`, { cause: lastError });
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

import { describe, expect, it } from 'vitest';
import { StatusError } from '../src/errors.js';
import { retryOnConflict, retryOnError } from '../src/retry.js';

const conflict = () =>
  new StatusError({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 409, reason: 'Conflict' });
const notFound = () =>
  new StatusError({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 404, reason: 'NotFound' });
const fast = { steps: 5, durationMs: 1, factor: 1, jitter: 0 };

describe('retryOnConflict (client-go util/retry)', () => {
  it('runs fn again after a conflict and resolves with its result', async () => {
    let calls = 0;
    const out = await retryOnConflict(async () => {
      if (++calls < 3) throw conflict();
      return 'ok';
    }, fast);
    expect(out).toBe('ok');
    expect(calls).toBe(3);
  });

  it('throws the last conflict once the steps are used up', async () => {
    let calls = 0;
    const err = await retryOnConflict(async () => {
      calls++;
      throw conflict();
    }, fast).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StatusError);
    expect(calls).toBe(5);
  });

  it('does not retry other errors', async () => {
    let calls = 0;
    await expect(
      retryOnConflict(async () => {
        calls++;
        throw notFound();
      }, fast),
    ).rejects.toBeInstanceOf(StatusError);
    expect(calls).toBe(1);
  });

  it('stops waiting when the signal aborts', async () => {
    const ac = new AbortController();
    const p = retryOnError(
      { steps: 5, durationMs: 60_000, factor: 1, jitter: 0 },
      () => true,
      async () => {
        queueMicrotask(() => ac.abort(new Error('stop')));
        throw conflict();
      },
      ac.signal,
    );
    await expect(p).rejects.toThrow('stop');
  });
});

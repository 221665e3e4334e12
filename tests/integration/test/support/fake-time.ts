import diagnosticsChannel from 'node:diagnostics_channel';
import {
  type RateLimiter,
  type RequestDiagnostic,
  type RetryDiagnostic,
  TokenBucketRateLimiter,
} from '@kubeloop/client/transport';
import { FakeClock } from '@kubeloop/core/testing';
import { vi } from 'vitest';

/**
 * A FakeClock that moves itself to each timer as soon as one is set (on the next turn of the event loop, after
 * the I/O callbacks already due): a wait on it takes its exact length in clock time and next to no real time,
 * with nobody driving the clock. For tests where the waits must happen (a backoff) but their length is not
 * the point; never earlier than the earliest pending timer, so the order of waits is kept.
 */
export class SelfAdvancingClock extends FakeClock {
  override setTimer(fn: () => void, delayMs: number) {
    const timer = super.setTimer(fn, delayMs);
    setImmediate(() => {
      const at = this.nextTimerAt();
      if (at !== undefined) this.setTime(at);
    });
    return timer;
  }
}

/**
 * Moves `clock` from one due timer to the next (never past one) until `done()` holds, while real I/O (the
 * requests to the server) goes on between the steps. Time on the fake clock only passes when something waits
 * on it, so every wait in the run is its exact length in fake ms, and the test spends no real time on it.
 * @throws the last "not yet" error after `timeoutMs` of real time.
 */
export async function runClockUntil(
  clock: FakeClock,
  done: () => boolean | Promise<boolean>,
  what: string | (() => string),
  timeoutMs = 30_000,
): Promise<void> {
  await vi.waitFor(
    async () => {
      if (await done()) return;
      const at = clock.nextTimerAt();
      if (at !== undefined) clock.setTime(at);
      throw new Error(`not yet (fake time ${clock.now()} ms): ${typeof what === 'string' ? what : what()}`);
    },
    { timeout: timeoutMs, interval: 2 },
  );
}

/** {@link runClockUntil} until `work` settles; returns (or throws) what it settled with. */
export async function settleOnClock<T>(
  clock: FakeClock,
  work: Promise<T>,
  what: string,
  timeoutMs = 30_000,
): Promise<T> {
  let settled = false;
  const tracked = work.finally(() => {
    settled = true;
  });
  tracked.catch(() => undefined); // rethrown below, once the clock has run
  await runClockUntil(clock, () => settled, what, timeoutMs);
  return tracked;
}

/** The real token bucket on `clock`, keeping the clock time of every token it hands out (one per attempt). */
export function recordingLimiter(
  qps: number,
  burst: number,
  clock: FakeClock,
): RateLimiter & { readonly granted: number[] } {
  const bucket = new TokenBucketRateLimiter(qps, burst, clock);
  const granted: number[] = [];
  return {
    granted,
    async wait(signal?: AbortSignal) {
      await bucket.wait(signal);
      granted.push(clock.now());
    },
    tryAccept() {
      const ok = bucket.tryAccept();
      if (ok) granted.push(clock.now());
      return ok;
    },
  };
}

/** The most tokens any window of `windowMs` holds among the grant times (sorted or not). */
export function mostInWindow(times: readonly number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= windowMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

/** One finished attempt or retry decision of the transport, stamped with the fake clock's time. */
export type TimedDiagnostic =
  | ({ readonly kind: 'request'; readonly at: number } & RequestDiagnostic)
  | ({ readonly kind: 'retry'; readonly at: number } & RetryDiagnostic);

/**
 * Records the transport's `kubeloop:client:request` and `kubeloop:client:retry` diagnostics whose url
 * contains `urlPart`, each with `clock.now()`. Call `stop()` when done.
 */
export function recordTransport(
  clock: FakeClock,
  urlPart: string,
): { readonly seen: TimedDiagnostic[]; stop(): void } {
  const seen: TimedDiagnostic[] = [];
  const onRequest = (m: unknown) => {
    const d = m as RequestDiagnostic;
    if (d.url.includes(urlPart)) seen.push({ kind: 'request', at: clock.now(), ...d });
  };
  const onRetry = (m: unknown) => {
    const d = m as RetryDiagnostic;
    if (d.url.includes(urlPart)) seen.push({ kind: 'retry', at: clock.now(), ...d });
  };
  diagnosticsChannel.subscribe('kubeloop:client:request', onRequest);
  diagnosticsChannel.subscribe('kubeloop:client:retry', onRetry);
  return {
    seen,
    stop() {
      diagnosticsChannel.unsubscribe('kubeloop:client:request', onRequest);
      diagnosticsChannel.unsubscribe('kubeloop:client:retry', onRetry);
    },
  };
}

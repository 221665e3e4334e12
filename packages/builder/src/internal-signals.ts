import { withDeadline } from '@kubeloop/client';

/**
 * A signal aborted when `parent` aborts or after `ms` milliseconds, whichever comes first: the client's
 * {@link withDeadline} (it holds its timer strongly, unlike `AbortSignal.any` + `AbortSignal.timeout`).
 * Call `clear()` when done; the timer does not keep the process alive.
 * @internal
 */
export function signalWithTimeout(
  parent: AbortSignal,
  ms: number,
): { signal: AbortSignal; clear: () => void } {
  const d = withDeadline(parent, ms);
  return { signal: d.signal, clear: d.dispose };
}

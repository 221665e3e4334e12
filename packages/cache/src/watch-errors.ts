import type { KubeObject } from '@kubeloop/client';
import { asStatusError, isTimeout } from '@kubeloop/client/errors';
import { TransportError } from '@kubeloop/client/transport';

// How the reflector tells apart the ways a list or watch ends (client-go reflector.go's error handling).

/** A list or watch with a resourceVersion the server has not reached (client-go `isTooLargeResourceVersionError`). */
export function isTooLargeResourceVersionError(err: unknown): boolean {
  const se = asStatusError(err);
  if (!se || !isTimeout(se)) return false;
  const causes = se.status.details?.causes ?? [];
  if (causes.some((c) => c.reason === 'ResourceVersionTooLarge')) return true;
  return /too large resource version/i.test(se.message);
}

/** A watch closed within a second without delivering an event: treated as a failure (backoff). Code `'ERR_VERY_SHORT_WATCH'`. */
export class VeryShortWatchError extends Error {
  readonly code = 'ERR_VERY_SHORT_WATCH' as const;
  override readonly name = 'VeryShortWatchError';
}

/** A streaming list that ended before its end bookmark (the reflector then falls back to list and watch). */
export class WatchListEndedError extends Error {
  override readonly name = 'WatchListEndedError';
}

/**
 * The transport's idle watchdog cut the watch: no byte (not even a bookmark) within its bound. A quiet watch is
 * normal on kube-apiserver — its cacher sends no bookmark for a resource type that saw no event since it started —
 * so this is resumed from the last resourceVersion, never relisted.
 */
export function isWatchIdleTimeout(err: unknown): boolean {
  return err instanceof TransportError && err.code === 'IdleTimeout';
}

export function isConnectionError(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return (
    code === 'ECONNREFUSED' ||
    code === 'ECONNRESET' ||
    code === 'UND_ERR_SOCKET' ||
    code === 'UND_ERR_CLOSED' ||
    code === 'EPIPE' ||
    code === 'ConnectionFailed'
  );
}

/** `namespace/name`, or `name` for a cluster-scoped object. */
export function keyOf(o: KubeObject): string {
  const ns = o.metadata?.namespace;
  return ns ? `${ns}/${o.metadata?.name ?? ''}` : (o.metadata?.name ?? '');
}

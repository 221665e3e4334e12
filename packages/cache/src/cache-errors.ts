/**
 * The typed errors of the cache reader and its informer map (controller-runtime `pkg/cache`): each has a
 * stable `code`, and the ones about one kind name its GVK (`Kind.version[.group]`).
 */

import { StatusError } from '@kubeloop/client';

/** Reading from a cache that has not been started (or has stopped). Code `'ERR_CACHE_NOT_STARTED'`. */
export class CacheNotStartedError extends Error {
  readonly code = 'ERR_CACHE_NOT_STARTED' as const;
  override readonly name = 'CacheNotStartedError';
  /** @param kind the GVK that was read, when known. */
  constructor(readonly kind?: string) {
    super(`the cache is not started, can not read ${kind ?? 'objects'}`);
  }
}

/** An option the cache cannot serve (e.g. `continue`, or an unsupported field selector). Code `'ERR_CACHE_UNSUPPORTED'`. */
export class CacheUnsupportedError extends Error {
  /** `'ERR_FIELD_NOT_INDEXED'` for the {@link FieldNotIndexedError} subclass. */
  readonly code: 'ERR_CACHE_UNSUPPORTED' | 'ERR_FIELD_NOT_INDEXED' = 'ERR_CACHE_UNSUPPORTED';
  override readonly name: string = 'CacheUnsupportedError';
}

/**
 * A cached `list` with a field selector on a field that has no index (C34). Code `'ERR_FIELD_NOT_INDEXED'`;
 * also a {@link CacheUnsupportedError}.
 */
export class FieldNotIndexedError extends CacheUnsupportedError {
  override readonly code = 'ERR_FIELD_NOT_INDEXED' as const;
  override readonly name = 'FieldNotIndexedError';
  constructor(
    readonly kind: string,
    readonly field: string,
  ) {
    super(
      `field selector on ${JSON.stringify(field)} of ${kind} can not be answered by the cache: the field has no index; ` +
        `call cache.indexField(${kind}, ${JSON.stringify(field)}, (obj) => [value]) before the first read (mgr.getFieldIndexer().indexField in a manager)`,
    );
  }
}

/** A read of a kind with no informer while `readerFailOnMissingInformer` is set. Code `'ERR_RESOURCE_NOT_CACHED'`. */
export class ResourceNotCachedError extends Error {
  readonly code = 'ERR_RESOURCE_NOT_CACHED' as const;
  override readonly name = 'ResourceNotCachedError';
  constructor(readonly kind: string) {
    super(
      `${kind} is not cached: no informer for it, and readerFailOnMissingInformer is set (call getInformer first)`,
    );
  }
}

/** Invalid cache options. Code `'ERR_CACHE_OPTIONS'`. */
export class CacheOptionsError extends Error {
  readonly code = 'ERR_CACHE_OPTIONS' as const;
  override readonly name = 'CacheOptionsError';
}

/**
 * A kind's informer has not synced, and why. Code `'ERR_INFORMER_SYNC'`. `stopped`: the informer ended
 * before its first sync (it never will); `cause` is the error it ended with, or, while it still runs, the
 * error of its last failed list. The message names the GVK and the cause.
 */
export class InformerSyncError extends Error {
  readonly code = 'ERR_INFORMER_SYNC' as const;
  override readonly name = 'InformerSyncError';
  constructor(
    readonly kind: string,
    readonly stopped: boolean,
    options: { readonly cause?: unknown; readonly reason?: string } = {},
  ) {
    const why = options.cause !== undefined ? describe(options.cause) : options.reason;
    super(
      stopped
        ? `the ${kind} informer stopped before it synced${why ? `: ${why}` : ''}`
        : `the ${kind} informer has not synced${why ? `; last error: ${why}` : ''}`,
      ...(options.cause !== undefined ? [{ cause: options.cause }] : []),
    );
  }
}

/**
 * A `get` or `list` of a namespaced kind in a namespace that a namespace-restricted cache does not watch
 * (controller-runtime's multi-namespace cache refuses it the same way instead of answering NotFound or an
 * empty list). Read it with the API reader, or add the namespace to `defaultNamespaces` /
 * `byObject.namespaces`. Code `'ERR_UNKNOWN_NAMESPACE'`.
 */
export class UnknownNamespaceError extends Error {
  readonly code = 'ERR_UNKNOWN_NAMESPACE' as const;
  override readonly name = 'UnknownNamespaceError';
  constructor(
    readonly kind: string,
    /** The namespace asked for (`''` for a get without one). */
    readonly namespace: string,
    /** The namespaces this cache watches for the kind. */
    readonly watched: readonly string[],
    /** The object name of a `get`. */
    objectName?: string,
  ) {
    const what =
      objectName !== undefined
        ? `get ${kind} ${namespace}/${objectName}`
        : `list ${kind} in ${JSON.stringify(namespace)}`;
    super(
      `unable to ${what}: namespace ${JSON.stringify(namespace)} is unknown to the cache, which watches ${kind} in ${watched.join(', ')} only`,
    );
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * What a read answers when its caller gave up before the kind's informer synced: a `Timeout` StatusError, as
 * controller-runtime's informer cache answers (`NewTimeoutError`), naming the last list error (its `cause`)
 * when there is one.
 */
export function syncTimeoutError(gvk: string, lastListError: unknown): StatusError {
  const last = lastListError;
  const timeout = new StatusError({
    apiVersion: 'v1',
    kind: 'Status',
    status: 'Failure',
    code: 504,
    reason: 'Timeout',
    message: `Timeout: failed waiting for ${gvk} informer to sync${last !== undefined ? `; last error: ${last instanceof Error ? last.message : String(last)}` : ''}`,
    details: { retryAfterSeconds: 0 },
  });
  if (last !== undefined) timeout.cause = last;
  return timeout;
}

/**
 * Finalizers (controller-runtime `controllerutil.AddFinalizer`, `RemoveFinalizer`, `ContainsFinalizer`) and
 * a removal that is safe against concurrent writers (case C20).
 */

import type { DeepReadonly } from '../deep-readonly.js';
import { isConflict, isInvalid, isNotFound } from '../errors.js';
import type { Reader, Writer } from '../interfaces.js';
import type { Kind, KubeObject, ObjectKey } from '../kinds.js';
import type { CallOptions } from '../options.js';
import { DEFAULT_RETRY, type RetryBackoff, retryOnError } from '../retry.js';
import { assertMutable } from './frozen.js';

/**
 * Adds `finalizer` to `obj.metadata.finalizers` unless present. Returns whether it changed `obj` (persist it then).
 * @throws FrozenObjectError when a change is needed and `obj` is frozen (read from a cache: change a copy).
 */
export function addFinalizer(obj: KubeObject, finalizer: string): boolean {
  if (containsFinalizer(obj, finalizer)) return false;
  assertMutable(obj, 'addFinalizer');
  obj.metadata ??= {};
  obj.metadata.finalizers = [...(obj.metadata.finalizers ?? []), finalizer];
  return true;
}

/**
 * Removes every occurrence of `finalizer`. Returns whether it changed `obj` (persist it then).
 * @throws FrozenObjectError when a change is needed and `obj` is frozen (read from a cache: change a copy).
 */
export function removeFinalizer(obj: KubeObject, finalizer: string): boolean {
  const list = obj.metadata?.finalizers;
  if (!list?.includes(finalizer)) return false;
  assertMutable(obj, 'removeFinalizer');
  obj.metadata!.finalizers = list.filter((f) => f !== finalizer);
  return true;
}

/** Whether `obj` carries `finalizer`. */
export function containsFinalizer(obj: DeepReadonly<KubeObject>, finalizer: string): boolean {
  return obj.metadata?.finalizers?.includes(finalizer) ?? false;
}

/** Options of {@link removeFinalizerWithPatch}. */
export interface RemoveFinalizerOptions extends CallOptions {
  /** Attempts and waits (ms) when a concurrent writer moved the list. @defaultValue DEFAULT_RETRY (5 × 10 ms) */
  readonly backoff?: RetryBackoff;
  /** Field manager of the patch. */
  readonly fieldManager?: string;
}

/**
 * Removes `finalizer` from the live object with a JSON patch that first tests the finalizer's position
 * (`[{op:'test', path:'/metadata/finalizers/i', value}, {op:'remove', path:'/metadata/finalizers/i'}]`):
 * a concurrent edit of other fields never conflicts, and a concurrent change of the finalizer list makes
 * the test fail (422), after which the object is read again and the patch recomputed — so two controllers
 * removing their own finalizers at once both succeed and nobody's edit is overwritten (case C20). Reads
 * go to `client.get`: pass a live reader, not a cache.
 * @returns `true` when this call removed the finalizer; `false` when the object is gone or never had it.
 * @throws StatusError when the patch keeps failing after the backoff's attempts, or for other errors.
 */
export async function removeFinalizerWithPatch<T extends KubeObject>(
  client: Pick<Reader, 'get'> & Pick<Writer, 'patch'>,
  kind: Kind<T>,
  key: ObjectKey,
  finalizer: string,
  options: RemoveFinalizerOptions = {},
): Promise<boolean> {
  const signalOpt = options.signal ? { signal: options.signal } : {};
  return retryOnError(
    options.backoff ?? DEFAULT_RETRY,
    (err) => isInvalid(err) || isConflict(err),
    async () => {
      let obj: T;
      try {
        obj = await client.get(kind, key, signalOpt);
      } catch (err) {
        if (isNotFound(err)) return false;
        throw err;
      }
      const i = obj.metadata?.finalizers?.indexOf(finalizer) ?? -1;
      if (i < 0) return false;
      const path = `/metadata/finalizers/${i}`;
      try {
        await client.patch(
          kind,
          key,
          {
            type: 'json',
            data: [
              { op: 'test', path, value: finalizer },
              { op: 'remove', path },
            ],
          },
          { ...signalOpt, ...(options.fieldManager ? { fieldManager: options.fieldManager } : {}) },
        );
      } catch (err) {
        if (isNotFound(err)) return false;
        throw err;
      }
      return true;
    },
    options.signal,
  );
}

import type { Kind, KubeObject, Writer } from '@kubeloop/client';
import { addFinalizer, containsFinalizer, removeFinalizer } from '@kubeloop/client/controllerutil';
import type { Result } from './reconcile.js';

/** What {@link finalizer} runs: `apply` while the object lives, `cleanup` once it is being deleted. */
export interface FinalizerHandlers<T extends KubeObject> {
  /** Reconcile a live object; it carries the finalizer when this runs. */
  // biome-ignore lint/suspicious/noConfusingVoidType: a handler with nothing to ask for may return nothing
  apply(obj: T): Promise<Result | undefined | void>;
  /**
   * Release what the object owns outside the cluster. The finalizer is removed only when this resolves; a
   * throw keeps it (the reconcile is retried with backoff and the object stays until cleanup succeeds).
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: a handler with nothing to ask for may return nothing
  cleanup(obj: T): Promise<Result | undefined | void>;
}

/**
 * One call for the finalizer pattern (kube-rs `runtime::finalizer`, controller-runtime's documented
 * `controllerutil.AddFinalizer` / `RemoveFinalizer` pattern): give it the object a reconcile read.
 *
 * - Live object without `name` in `metadata.finalizers`: adds it with an update (optimistic: a 409 Conflict
 *   is thrown and the controller requeues quietly) and then runs `apply` **in the same call** on the updated
 *   object. Adding a finalizer does not bump `metadata.generation`, so under `generationChangedPredicate`
 *   the update event of the add is filtered out; nothing here waits for it (kube-rs returns after the add and
 *   relies on that event, which a generation predicate drops).
 * - Live object with the finalizer: runs `apply`.
 * - Object being deleted (`deletionTimestamp` set) with the finalizer: runs `cleanup`, then removes the
 *   finalizer with an update; the server then deletes the object. kube-apiserver bumps `generation` when it
 *   sets `deletionTimestamp` on an object with finalizers, so that update passes `generationChangedPredicate`.
 * - Object being deleted without the finalizer: nothing (not ours to hold).
 *
 * Objects from the cache are frozen: the helper works on a copy. Resolves with what the handler returned.
 * @throws what the update or a handler throws.
 */
export async function finalizer<T extends KubeObject>(
  client: Pick<Writer, 'update'>,
  kind: Kind<T>,
  name: string,
  obj: T,
  handlers: FinalizerHandlers<T>,
): Promise<Result | undefined> {
  if (typeof name !== 'string' || name === '')
    throw new TypeError('finalizer: name must be a non-empty string (e.g. "example.com/cleanup")');
  const deleting = !!obj.metadata?.deletionTimestamp;
  const has = containsFinalizer(obj, name);
  if (deleting) {
    if (!has) return undefined;
    const result = (await handlers.cleanup(obj)) ?? undefined;
    const copy = structuredClone(obj);
    removeFinalizer(copy, name);
    await client.update(kind, copy);
    return result;
  }
  let live = obj;
  if (!has) {
    const copy = structuredClone(obj);
    addFinalizer(copy, name);
    live = await client.update(kind, copy);
  }
  return (await handlers.apply(live)) ?? undefined;
}

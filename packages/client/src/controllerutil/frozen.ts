/**
 * The guard the controllerutil mutators run before they change an object: objects read from an informer cache
 * (the manager's client, a cache reader) are deep-frozen and shared by every reader, where controller-runtime's
 * cached `Get` hands out a deep copy. Changing one would throw a bare `TypeError` from deep inside a helper.
 */
import type { KubeObject } from '../kinds.js';

/**
 * A controllerutil helper (or a status-condition helper, on a `status.conditions` array) was asked to change an
 * object that is frozen — almost always one read from an informer cache. Copy it first (`structuredClone(obj)`),
 * change the copy and write that. Code `'ERR_FROZEN_OBJECT'`.
 */
export class FrozenObjectError extends Error {
  readonly code: string = 'ERR_FROZEN_OBJECT';
  override readonly name: string = 'FrozenObjectError';
}

/** @throws FrozenObjectError when `obj` or its `metadata` is frozen; `helper` names the caller in the message. */
export function assertMutable(obj: KubeObject, helper: string): void {
  if (Object.isFrozen(obj) || (obj.metadata !== undefined && Object.isFrozen(obj.metadata))) {
    const m = obj.metadata;
    const name = m?.name ? ` ${m.namespace ? `${m.namespace}/` : ''}${m.name}` : '';
    throw new FrozenObjectError(
      `${helper}: ${obj.kind ?? 'object'}${name} is frozen (objects read from an informer cache are shared and read-only); ` +
        'change a copy instead: structuredClone(obj)',
    );
  }
}

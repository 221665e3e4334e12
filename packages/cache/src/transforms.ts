import type { KubeObject } from '@kubeloop/client';

/** A transform applied to each object version before an informer stores it. */
export type TransformFunc<T extends KubeObject = KubeObject> = (obj: T) => T;

/** The annotation `kubectl apply` writes (client-side apply); often the largest field of an object. */
export const LAST_APPLIED_CONFIG_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

function withMetadata<T extends KubeObject>(obj: T, edit: (m: Record<string, unknown>) => void): T {
  const m = obj.metadata as Record<string, unknown> | undefined;
  if (!m) return obj;
  if (!Object.isFrozen(obj) && !Object.isFrozen(m)) {
    edit(m);
    return obj;
  }
  const copy = { ...m };
  edit(copy);
  return { ...obj, metadata: copy } as T;
}

/**
 * Drops `metadata.managedFields` (controller-runtime `cache.TransformStripManagedFields`), which often holds
 * half of an object's bytes and is rarely read by controllers. Edits the object in place unless it is frozen.
 */
export function stripManagedFields<T extends KubeObject>(obj: T): T {
  if (obj.metadata?.managedFields === undefined) return obj;
  return withMetadata(obj, (m) => {
    delete m.managedFields;
  });
}

/** Drops the `kubectl.kubernetes.io/last-applied-configuration` annotation (a copy of the whole applied object). */
export function stripLastAppliedConfiguration<T extends KubeObject>(obj: T): T {
  const ann = obj.metadata?.annotations;
  if (!ann || !(LAST_APPLIED_CONFIG_ANNOTATION in ann)) return obj;
  return withMetadata(obj, (m) => {
    const { [LAST_APPLIED_CONFIG_ANNOTATION]: _, ...rest } = ann;
    m.annotations = rest;
  });
}

/** Applies `transforms` left to right. */
export function composeTransforms<T extends KubeObject>(
  ...transforms: readonly TransformFunc<T>[]
): TransformFunc<T> {
  return (obj) => {
    let out = obj;
    for (const t of transforms) out = t(out);
    return out;
  };
}

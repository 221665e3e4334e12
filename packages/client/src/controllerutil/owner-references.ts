/**
 * Owner and controller references (controller-runtime `pkg/controller/controllerutil`: SetControllerReference,
 * SetOwnerReference, RemoveOwnerReference, RemoveControllerReference, HasControllerReference,
 * HasOwnerReference). Owners are matched by API group, kind and name — not version — so an owner whose
 * apiVersion moved (v1beta1 → v1) is updated in place rather than added a second time.
 */

import type { DeepReadonly } from '../deep-readonly.js';
import { type Kind, type KubeObject, parseApiVersion } from '../kinds.js';
import type { V1OwnerReference } from '../models/generated.js';
import { assertMutable } from './frozen.js';

/** A bad owner or object for an owner reference (missing identity, wrong scope). Code `'ERR_OWNER_REFERENCE'`. */
export class OwnerReferenceError extends Error {
  readonly code: string = 'ERR_OWNER_REFERENCE';
  override readonly name: string = 'OwnerReferenceError';
}

/**
 * The object already has a controller reference to another owner (controller-runtime `AlreadyOwnedError`).
 * Code `'ERR_ALREADY_OWNED'`; `owner` is the existing controller reference.
 */
export class AlreadyOwnedError extends OwnerReferenceError {
  override readonly code = 'ERR_ALREADY_OWNED';
  override readonly name = 'AlreadyOwnedError';
  constructor(
    readonly object: { readonly namespace?: string; readonly name: string; readonly kind?: string },
    readonly owner: V1OwnerReference,
  ) {
    const where = object.namespace ? `${object.namespace}/${object.name}` : object.name;
    super(
      `${object.kind ?? 'object'} ${where} is already owned by another ${owner.kind} controller ${owner.name} (uid ${owner.uid})`,
    );
  }
}

/** Options of {@link setControllerReference} and {@link setOwnerReference}. */
export interface OwnerReferenceOptions {
  /** The owner's kind when the owner object carries no `apiVersion`/`kind` (e.g. a typed object you built). */
  readonly ownerKind?: Kind;
  /** Set `blockOwnerDeletion` (foreground deletion waits for this object). @defaultValue true for a controller reference, unset otherwise */
  readonly blockOwnerDeletion?: boolean;
}

function groupOf(apiVersion: string): string {
  return parseApiVersion(apiVersion).group;
}

/** Whether two references name the same owner: group (not version), kind and name. */
function sameOwner(a: V1OwnerReference, b: V1OwnerReference): boolean {
  return groupOf(a.apiVersion) === groupOf(b.apiVersion) && a.kind === b.kind && a.name === b.name;
}

function describe(obj: KubeObject): { namespace?: string; name: string; kind?: string } {
  const m = obj.metadata ?? {};
  return {
    name: m.name ?? m.generateName ?? '',
    ...(m.namespace ? { namespace: m.namespace } : {}),
    ...(obj.kind ? { kind: obj.kind } : {}),
  };
}

/** The reference that names `owner`. @throws OwnerReferenceError when apiVersion, kind, name or uid is missing. */
function referenceTo(
  owner: DeepReadonly<KubeObject>,
  options: OwnerReferenceOptions | undefined,
): V1OwnerReference {
  const apiVersion = owner.apiVersion || options?.ownerKind?.apiVersion;
  const kind = owner.kind || options?.ownerKind?.kind;
  const name = owner.metadata?.name;
  const uid = owner.metadata?.uid;
  const missing = [
    !apiVersion && 'apiVersion',
    !kind && 'kind',
    !name && 'metadata.name',
    !uid && 'metadata.uid',
  ].filter(Boolean);
  if (missing.length)
    throw new OwnerReferenceError(
      `owner ${kind ?? ''} ${name ?? ''}`.replace(/\s+/g, ' ').trim() +
        `: ${missing.join(', ')} missing (read the owner from the server, or pass options.ownerKind)`,
    );
  return { apiVersion: apiVersion!, kind: kind!, name: name!, uid: uid! };
}

/**
 * A namespaced owner must be in the object's namespace; a cluster-scoped owner may own anything
 * (controller-runtime `validateOwner`). Scope is read from `metadata.namespace`.
 */
function validateOwner(owner: DeepReadonly<KubeObject>, object: KubeObject): void {
  const ownerNs = owner.metadata?.namespace ?? '';
  if (!ownerNs) return;
  const objNs = object.metadata?.namespace ?? '';
  if (!objNs)
    throw new OwnerReferenceError(
      `cluster-scoped resource must not have a namespace-scoped owner, owner's namespace ${ownerNs}`,
    );
  if (ownerNs !== objNs)
    throw new OwnerReferenceError(
      `cross-namespace owner references are disallowed, owner's namespace ${ownerNs}, obj's namespace ${objNs}`,
    );
}

/**
 * The reference to `owner` with `flags`, once the owner may own `object`.
 * @throws OwnerReferenceError as {@link referenceTo} and {@link validateOwner}.
 */
function checkedReference(
  owner: DeepReadonly<KubeObject>,
  object: KubeObject,
  options: OwnerReferenceOptions | undefined,
  flags: Pick<V1OwnerReference, 'blockOwnerDeletion' | 'controller'>,
): V1OwnerReference {
  const ref = { ...referenceTo(owner, options), ...flags };
  validateOwner(owner, object);
  return ref;
}

function upsert(object: KubeObject, ref: V1OwnerReference): void {
  object.metadata ??= {};
  const refs = [...(object.metadata.ownerReferences ?? [])];
  const i = refs.findIndex((r) => sameOwner(r, ref));
  if (i >= 0) refs[i] = ref;
  else refs.push(ref);
  object.metadata.ownerReferences = refs;
}

/**
 * Makes `owner` the controller of `object`: adds (or updates in place) an owner reference with
 * `controller: true` and `blockOwnerDeletion: true`. Changes `object` only; persist it with a write.
 * @throws AlreadyOwnedError when another owner is already the controller (naming it);
 *   OwnerReferenceError when the owner lacks apiVersion/kind/name/uid, or is namespaced and `object` is
 *   cluster-scoped or in another namespace; FrozenObjectError when `object` is frozen (read from a cache:
 *   change a copy). Nothing is changed when it throws.
 */
export function setControllerReference(
  owner: DeepReadonly<KubeObject>,
  object: KubeObject,
  options?: OwnerReferenceOptions,
): void {
  const ref = checkedReference(owner, object, options, {
    blockOwnerDeletion: options?.blockOwnerDeletion ?? true,
    controller: true,
  });
  const existing = (object.metadata?.ownerReferences ?? []).find((r) => r.controller);
  if (existing && !sameOwner(existing, ref)) throw new AlreadyOwnedError(describe(object), existing);
  assertMutable(object, 'setControllerReference');
  upsert(object, ref);
}

/**
 * Adds (or updates in place) a non-controller owner reference to `owner` (controller-runtime
 * `SetOwnerReference`: an existing reference to the same owner is replaced, so a controller reference
 * becomes a plain one). Changes `object` only.
 * @throws OwnerReferenceError as {@link setControllerReference}.
 */
export function setOwnerReference(
  owner: DeepReadonly<KubeObject>,
  object: KubeObject,
  options?: OwnerReferenceOptions,
): void {
  const flags =
    options?.blockOwnerDeletion !== undefined ? { blockOwnerDeletion: options.blockOwnerDeletion } : {};
  const ref = checkedReference(owner, object, options, flags);
  assertMutable(object, 'setOwnerReference');
  upsert(object, ref);
}

/**
 * Removes the owner reference to `owner` (matched by group, kind and name). Changes `object` only.
 * @throws OwnerReferenceError when `object` has no reference to `owner`.
 */
export function removeOwnerReference(
  owner: DeepReadonly<KubeObject>,
  object: KubeObject,
  options?: OwnerReferenceOptions,
): void {
  const ref = referenceTo(owner, options);
  const refs = object.metadata?.ownerReferences ?? [];
  const left = refs.filter((r) => !sameOwner(r, ref));
  if (left.length === refs.length)
    throw new OwnerReferenceError(
      `${describe(object).name} does not have an owner reference for ${ref.kind} ${ref.name}`,
    );
  assertMutable(object, 'removeOwnerReference');
  object.metadata!.ownerReferences = left;
}

/**
 * Removes the controller reference if it points at `owner`.
 * @throws OwnerReferenceError when `object` has no controller reference, or another owner is its controller.
 */
export function removeControllerReference(
  owner: DeepReadonly<KubeObject>,
  object: KubeObject,
  options?: OwnerReferenceOptions,
): void {
  const ref = referenceTo(owner, options);
  const refs = object.metadata?.ownerReferences ?? [];
  const controller = refs.find((r) => r.controller);
  if (!controller) throw new OwnerReferenceError(`${describe(object).name} has no controller reference`);
  if (!sameOwner(controller, ref))
    throw new OwnerReferenceError(
      `${describe(object).name} is controlled by ${controller.kind} ${controller.name}, not ${ref.kind} ${ref.name}`,
    );
  assertMutable(object, 'removeControllerReference');
  object.metadata!.ownerReferences = refs.filter((r) => r !== controller);
}

/** Whether `object` has a controller reference (to any owner). */
export function hasControllerReference(object: DeepReadonly<KubeObject>): boolean {
  return (object.metadata?.ownerReferences ?? []).some((r) => r.controller === true);
}

/**
 * Whether `object` has an owner reference to `owner` (group, kind and name; any version).
 * @throws OwnerReferenceError when the owner lacks apiVersion/kind/name/uid.
 */
export function hasOwnerReference(
  owner: DeepReadonly<KubeObject>,
  object: DeepReadonly<KubeObject>,
  options?: OwnerReferenceOptions,
): boolean {
  const ref = referenceTo(owner, options);
  return (object.metadata?.ownerReferences ?? []).some((r) => sameOwner(r, ref));
}

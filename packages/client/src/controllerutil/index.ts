/**
 * @packageDocumentation
 * `@kubeloop/client/controllerutil`: controller-runtime's `pkg/controller/controllerutil` — createOrUpdate
 * and createOrPatch (no write when nothing changed), owner and controller references (matched by group and
 * kind, not version), and finalizers, including a removal that cannot overwrite a concurrent edit.
 */
export {
  type CreateOrUpdateOptions,
  type CreateOrUpdateResult,
  createOrPatch,
  createOrUpdate,
  type MutateFn,
  type OperationResult,
} from './create-or-update.js';
export { createMergePatch, isUnchanged } from './equality.js';
export {
  addFinalizer,
  containsFinalizer,
  type RemoveFinalizerOptions,
  removeFinalizer,
  removeFinalizerWithPatch,
} from './finalizers.js';
export { FrozenObjectError } from './frozen.js';
export {
  AlreadyOwnedError,
  hasControllerReference,
  hasOwnerReference,
  OwnerReferenceError,
  type OwnerReferenceOptions,
  removeControllerReference,
  removeOwnerReference,
  setControllerReference,
  setOwnerReference,
} from './owner-references.js';

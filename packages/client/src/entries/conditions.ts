/**
 * @packageDocumentation
 * `@kubeloop/client/conditions`: `status.conditions` helpers (apimachinery `meta.SetStatusCondition`,
 * `FindStatusCondition`, `IsStatusConditionTrue`, …) on `metav1.Condition` lists.
 */
export {
  type Condition,
  type ConditionInput,
  type ConditionStatus,
  type Conditions,
  type ConditionTypeStatus,
  findStatusCondition,
  formatConditionTime,
  InvalidConditionError,
  isStatusConditionFalse,
  isStatusConditionPresentAndEqual,
  isStatusConditionTrue,
  removeStatusCondition,
  type SetStatusConditionOptions,
  setStatusCondition,
} from '../conditions.js';

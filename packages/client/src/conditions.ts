/**
 * Status condition helpers: apimachinery `k8s.io/apimachinery/pkg/api/meta` `SetStatusCondition`,
 * `RemoveStatusCondition`, `FindStatusCondition`, `IsStatusConditionTrue`, `IsStatusConditionFalse` and
 * `IsStatusConditionPresentAndEqual`, on `metav1.Condition`-shaped entries of a `status.conditions` array.
 */

import { FrozenObjectError } from './controllerutil/frozen.js';
import type { V1Condition } from './models/generated.js';

/** `metav1.ConditionStatus`. */
export type ConditionStatus = 'True' | 'False' | 'Unknown';

/**
 * One entry of `status.conditions`, as `metav1.Condition` is written on the wire.
 * `lastTransitionTime` is the RFC 3339 string the server sends (`2026-12-01T05:50:17Z`).
 */
export interface Condition {
  /** CamelCase type, unique in the array (`Ready`, `Available`, `example.com/Synced`). */
  type: string;
  status: ConditionStatus;
  /** `metadata.generation` the condition was computed from; absent means 0 (unset). */
  observedGeneration?: number;
  /** RFC 3339 time of the last change of `status`. */
  lastTransitionTime: string;
  /** CamelCase machine-readable reason of the last transition. */
  reason: string;
  /** Human-readable detail; may be empty. */
  message: string;
}

/**
 * What {@link setStatusCondition} takes: a {@link Condition} whose `reason` and `message` may be left out
 * (they mean `''`, as Go's zero string), whose `lastTransitionTime` may be left out (it means "now" when one
 * is needed) or be a `Date` (written as RFC 3339 in UTC with whole seconds, as `metav1.Time` marshals).
 */
export interface ConditionInput {
  type: string;
  status: ConditionStatus;
  /** `metadata.generation` the condition was computed from (`obj.metadata?.generation` may be passed as is). */
  observedGeneration?: number | undefined;
  lastTransitionTime?: string | Date | undefined;
  reason?: string | undefined;
  message?: string | undefined;
}

/**
 * A `status.conditions` array the helpers change: {@link Condition}s, or `V1Condition`s of
 * `@kubeloop/client/models` (whose `lastTransitionTime` is the RFC 3339 string, as read from the server and as
 * written by these helpers, like every timestamp in this client).
 */
export type Conditions = Condition[] | V1Condition[];

/** What the read-only helpers look at: any entry with a `type` and a `status`. */
export interface ConditionTypeStatus {
  readonly type: string;
  readonly status: string;
}

/** Options of {@link setStatusCondition}. */
export interface SetStatusConditionOptions {
  /** Wall-clock time used for a `lastTransitionTime` that has to be set and was not given. @defaultValue `() => new Date()` */
  readonly now?: (() => Date) | undefined;
}

/**
 * A condition helper was given something that is not a conditions array or a valid condition (an empty
 * `type`, a `status` other than `'True' | 'False' | 'Unknown'`, an unparsable `lastTransitionTime`, a
 * negative or fractional `observedGeneration`). Code `'ERR_INVALID_CONDITION'`.
 */
export class InvalidConditionError extends TypeError {
  readonly code: string = 'ERR_INVALID_CONDITION';
  override readonly name: string = 'InvalidConditionError';
}

/** RFC 3339 date-time (`metav1.Time` parses this layout; `Date.parse` alone takes much more). */
const RFC3339 = /^\d{4}-\d\d-\d\d[Tt]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)$/;

const STATUSES: ReadonlySet<string> = new Set(['True', 'False', 'Unknown']);

/**
 * A time as `metav1.Time` writes it: UTC, RFC 3339, whole seconds (`2026-12-01T05:50:17Z`).
 * @throws InvalidConditionError for an invalid `Date`.
 */
export function formatConditionTime(date: Date): string {
  const ms = date.getTime();
  if (Number.isNaN(ms)) throw new InvalidConditionError('lastTransitionTime: invalid Date');
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

function assertArray(conditions: unknown, helper: string): asserts conditions is Condition[] {
  if (!Array.isArray(conditions)) {
    throw new InvalidConditionError(
      `${helper}: conditions must be an array (set status.conditions ??= [] first), got ${conditions === null ? 'null' : typeof conditions}`,
    );
  }
}

function assertMutableArray(conditions: Condition[], helper: string, type: string): void {
  if (Object.isFrozen(conditions)) {
    throw new FrozenObjectError(
      `${helper}: cannot change condition ${JSON.stringify(type)}: the conditions array is frozen (objects read ` +
        'from an informer cache are shared and read-only); change a copy instead: structuredClone(obj)',
    );
  }
}

function timeOf(value: string | Date, helper: string, type: string): string {
  if (value instanceof Date) return formatConditionTime(value);
  if (typeof value !== 'string' || !RFC3339.test(value) || Number.isNaN(Date.parse(value))) {
    throw new InvalidConditionError(
      `${helper}: condition ${JSON.stringify(type)}: lastTransitionTime ${JSON.stringify(value)} is not an RFC 3339 time or a Date`,
    );
  }
  return value;
}

function validate(input: ConditionInput, helper: string): void {
  if (typeof input !== 'object' || input === null) {
    throw new InvalidConditionError(`${helper}: condition must be an object`);
  }
  if (typeof input.type !== 'string' || input.type === '') {
    throw new InvalidConditionError(`${helper}: condition type must be a non-empty string`);
  }
  if (!STATUSES.has(input.status)) {
    throw new InvalidConditionError(
      `${helper}: condition ${JSON.stringify(input.type)}: status ${JSON.stringify(input.status)} is not 'True', 'False' or 'Unknown'`,
    );
  }
  const g = input.observedGeneration;
  if (g !== undefined && !(Number.isSafeInteger(g) && g >= 0)) {
    throw new InvalidConditionError(
      `${helper}: condition ${JSON.stringify(input.type)}: observedGeneration ${String(g)} is not a whole number ≥ 0`,
    );
  }
  for (const field of ['reason', 'message'] as const) {
    const v = input[field];
    if (v !== undefined && typeof v !== 'string') {
      throw new InvalidConditionError(
        `${helper}: condition ${JSON.stringify(input.type)}: ${field} must be a string`,
      );
    }
  }
}

/**
 * Adds `condition` to `conditions`, or updates the entry of the same `type`, in place — apimachinery
 * `meta.SetStatusCondition`:
 * - a new type is appended (order of the others kept) with the given `lastTransitionTime`, or now;
 * - for an existing type, `lastTransitionTime` changes only when `status` changes (to the given time, or now);
 *   with the same `status` the stored time is kept even if another one is given (an entry stored without a
 *   time gets one, where apimachinery would leave it empty and the server refuse the write);
 * - `reason`, `message` and `observedGeneration` are set to the given values (left out: `''`, `''` and unset,
 *   as Go's zero values: an update without `observedGeneration` clears it).
 *
 * The updated entry is replaced by a new object, never changed in place, so only the array needs to be
 * mutable (a shallow copy of a cached array is enough); the array must be the caller's own copy.
 * @param conditions - `status.conditions` (set `status.conditions ??= []` first); changed in place.
 * @returns whether anything in `conditions` changed (write the status then).
 * @throws FrozenObjectError when a change is needed and `conditions` is frozen (read from a cache: change a copy).
 * @throws InvalidConditionError when `conditions` is not an array or `condition` is invalid.
 */
export function setStatusCondition(
  conditions: Conditions,
  condition: ConditionInput,
  options: SetStatusConditionOptions = {},
): boolean {
  const helper = 'setStatusCondition';
  const list = conditions as Condition[];
  assertArray(list, helper);
  validate(condition, helper);
  const now = () => formatConditionTime((options.now ?? (() => new Date()))());
  const given = condition.lastTransitionTime;
  const next: Condition = {
    type: condition.type,
    status: condition.status,
    ...(condition.observedGeneration ? { observedGeneration: condition.observedGeneration } : {}),
    lastTransitionTime: '',
    reason: condition.reason ?? '',
    message: condition.message ?? '',
  };
  const i = list.findIndex((c) => c?.type === condition.type);
  if (i < 0) {
    next.lastTransitionTime = given !== undefined ? timeOf(given, helper, condition.type) : now();
    assertMutableArray(list, helper, condition.type);
    list.push(next);
    return true;
  }
  const existing = list[i]!;
  let changed = false;
  if (existing.status !== next.status || !existing.lastTransitionTime) {
    // an entry stored without a time (invalid for metav1.Condition) gets one, so the write passes validation
    next.lastTransitionTime = given !== undefined ? timeOf(given, helper, condition.type) : now();
    changed = true;
  } else {
    next.lastTransitionTime = existing.lastTransitionTime;
  }
  if ((existing.reason ?? '') !== next.reason) changed = true;
  if ((existing.message ?? '') !== next.message) changed = true;
  if ((existing.observedGeneration ?? 0) !== (next.observedGeneration ?? 0)) changed = true;
  if (!changed) return false;
  assertMutableArray(list, helper, condition.type);
  list[i] = next;
  return true;
}

/**
 * Removes every entry of type `type` from `conditions`, in place, keeping the order of the others —
 * apimachinery `meta.RemoveStatusCondition`.
 * @returns whether an entry was removed.
 * @throws FrozenObjectError when an entry is to be removed and `conditions` is frozen.
 * @throws InvalidConditionError when `conditions` is not an array.
 */
export function removeStatusCondition(conditions: Conditions, type: string): boolean {
  const helper = 'removeStatusCondition';
  const list = conditions as Condition[];
  assertArray(list, helper);
  if (!list.some((c) => c?.type === type)) return false;
  assertMutableArray(list, helper, type);
  let kept = 0;
  for (let i = 0; i < list.length; i++) {
    const c = list[i]!;
    if (c?.type !== type) list[kept++] = c;
  }
  list.length = kept;
  return true;
}

/**
 * The first entry of type `type`, or `undefined` (also for `undefined` conditions, so
 * `findStatusCondition(obj.status?.conditions, 'Ready')` works) — apimachinery `meta.FindStatusCondition`.
 * The entry is the array's own object: do not change it when the array came from a cache.
 */
export function findStatusCondition<C extends { readonly type: string } = Condition>(
  conditions: readonly C[] | undefined,
  type: string,
): C | undefined {
  if (!Array.isArray(conditions)) return undefined;
  return conditions.find((c) => c?.type === type);
}

/**
 * Whether the entry of type `type` exists and has status `status` — apimachinery
 * `meta.IsStatusConditionPresentAndEqual`. `false` when absent or `conditions` is `undefined`.
 */
export function isStatusConditionPresentAndEqual(
  conditions: readonly ConditionTypeStatus[] | undefined,
  type: string,
  status: ConditionStatus,
): boolean {
  return findStatusCondition(conditions, type)?.status === status;
}

/** Whether the entry of type `type` exists with status `'True'` — apimachinery `meta.IsStatusConditionTrue`. */
export function isStatusConditionTrue(
  conditions: readonly ConditionTypeStatus[] | undefined,
  type: string,
): boolean {
  return isStatusConditionPresentAndEqual(conditions, type, 'True');
}

/**
 * Whether the entry of type `type` exists with status `'False'` — apimachinery `meta.IsStatusConditionFalse`
 * (absent is neither true nor false).
 */
export function isStatusConditionFalse(
  conditions: readonly ConditionTypeStatus[] | undefined,
  type: string,
): boolean {
  return isStatusConditionPresentAndEqual(conditions, type, 'False');
}

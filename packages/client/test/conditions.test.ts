import type { V1Condition } from '@kubeloop/client/models';
import { describe, expect, it } from 'vitest';
import { FrozenObjectError } from '../src/controllerutil/index.js';
import {
  type Condition,
  findStatusCondition,
  formatConditionTime,
  isStatusConditionFalse,
  isStatusConditionPresentAndEqual,
  isStatusConditionTrue,
  removeStatusCondition,
  setStatusCondition,
} from '../src/entries/conditions.js';
import { InvalidConditionError } from '../src/entries/errors.js';

const T0 = '2026-01-01T00:00:00Z';
const NOW = new Date('2026-12-01T05:50:17.912Z');
const NOW_STR = '2026-12-01T05:50:17Z';
const now = () => NOW;

function ready(status: Condition['status'], extra: Partial<Condition> = {}): Condition {
  return { type: 'Ready', status, lastTransitionTime: T0, reason: 'R', message: 'm', ...extra };
}

describe('setStatusCondition (apimachinery meta.SetStatusCondition)', () => {
  it('appends a new type with lastTransitionTime = now (whole seconds, UTC), reason/message defaulting to ""', () => {
    const conditions: Condition[] = [];
    expect(setStatusCondition(conditions, { type: 'Ready', status: 'True' }, { now })).toBe(true);
    expect(conditions).toEqual([
      { type: 'Ready', status: 'True', lastTransitionTime: NOW_STR, reason: '', message: '' },
    ]);
  });

  it('keeps a lastTransitionTime given for a new type; a Date is written as RFC 3339 in whole seconds', () => {
    const conditions: Condition[] = [];
    setStatusCondition(
      conditions,
      { type: 'A', status: 'True', lastTransitionTime: T0, reason: 'X' },
      { now },
    );
    setStatusCondition(
      conditions,
      { type: 'B', status: 'False', lastTransitionTime: new Date('2026-03-04T05:06:07.999+02:00') },
      { now },
    );
    expect(conditions.map((c) => c.lastTransitionTime)).toEqual([T0, '2026-03-04T03:06:07Z']);
  });

  it('keeps lastTransitionTime when only reason or message change, and reports the change', () => {
    const conditions = [ready('True')];
    expect(
      setStatusCondition(
        conditions,
        { type: 'Ready', status: 'True', reason: 'Other', message: 'm' },
        { now },
      ),
    ).toBe(true);
    expect(conditions[0]).toEqual(ready('True', { reason: 'Other' }));
    expect(
      setStatusCondition(
        conditions,
        { type: 'Ready', status: 'True', reason: 'Other', message: 'new' },
        { now },
      ),
    ).toBe(true);
    expect(conditions[0]).toEqual(ready('True', { reason: 'Other', message: 'new' }));
  });

  it('keeps the stored lastTransitionTime with the same status even when another one is given', () => {
    const conditions = [ready('True')];
    expect(
      setStatusCondition(
        conditions,
        { type: 'Ready', status: 'True', reason: 'R', message: 'm', lastTransitionTime: NOW },
        { now },
      ),
    ).toBe(false);
    expect(conditions[0]!.lastTransitionTime).toBe(T0);
  });

  it('sets lastTransitionTime to now when status changes, or to the time given with the change', () => {
    const conditions = [ready('True')];
    expect(
      setStatusCondition(conditions, { type: 'Ready', status: 'False', reason: 'R', message: 'm' }, { now }),
    ).toBe(true);
    expect(conditions[0]).toEqual(ready('False', { lastTransitionTime: NOW_STR }));
    const given = '2026-06-01T00:00:00Z';
    setStatusCondition(conditions, { type: 'Ready', status: 'Unknown', lastTransitionTime: given }, { now });
    expect(conditions[0]).toEqual({
      type: 'Ready',
      status: 'Unknown',
      lastTransitionTime: given,
      reason: '',
      message: '',
    });
  });

  it('updates observedGeneration; leaving it out clears it (Go zero value), 0 and absent are the same', () => {
    const conditions = [ready('True', { observedGeneration: 1 })];
    expect(
      setStatusCondition(conditions, {
        type: 'Ready',
        status: 'True',
        reason: 'R',
        message: 'm',
        observedGeneration: 2,
      }),
    ).toBe(true);
    expect(conditions[0]).toEqual(ready('True', { observedGeneration: 2 }));
    expect(setStatusCondition(conditions, { type: 'Ready', status: 'True', reason: 'R', message: 'm' })).toBe(
      true,
    );
    expect(conditions[0]).toEqual(ready('True'));
    expect('observedGeneration' in conditions[0]!).toBe(false);
    expect(
      setStatusCondition(conditions, {
        type: 'Ready',
        status: 'True',
        reason: 'R',
        message: 'm',
        observedGeneration: 0,
      }),
    ).toBe(false);
  });

  it('returns false and changes nothing (same array, same entry object) when all fields are equal', () => {
    const entry = ready('True', { observedGeneration: 3 });
    const conditions = [entry];
    expect(
      setStatusCondition(
        conditions,
        { type: 'Ready', status: 'True', reason: 'R', message: 'm', observedGeneration: 3 },
        { now },
      ),
    ).toBe(false);
    expect(conditions[0]).toBe(entry);
  });

  it('keeps the order of the other entries and replaces (never mutates) the updated entry', () => {
    const a = { ...ready('True'), type: 'A' };
    const b = Object.freeze({ ...ready('True'), type: 'B' });
    const c = { ...ready('True'), type: 'C' };
    const conditions: Condition[] = [a, b, c];
    expect(setStatusCondition(conditions, { type: 'B', status: 'False' }, { now })).toBe(true);
    expect(conditions.map((x) => `${x.type}=${x.status}`)).toEqual(['A=True', 'B=False', 'C=True']);
    expect(b.status).toBe('True'); // a frozen entry in a shallow-copied array is fine
    setStatusCondition(conditions, { type: 'D', status: 'Unknown' }, { now });
    expect(conditions.map((x) => x.type)).toEqual(['A', 'B', 'C', 'D']);
  });

  it('gives a stored entry without lastTransitionTime one, even with unchanged status', () => {
    const conditions = [{ type: 'Ready', status: 'True', reason: 'R', message: 'm' } as Condition];
    expect(
      setStatusCondition(conditions, { type: 'Ready', status: 'True', reason: 'R', message: 'm' }, { now }),
    ).toBe(true);
    expect(conditions[0]!.lastTransitionTime).toBe(NOW_STR);
  });

  it('a frozen (cached) array throws FrozenObjectError when a change is needed, and not when none is', () => {
    const conditions = Object.freeze([ready('True')]) as unknown as Condition[];
    expect(() => setStatusCondition(conditions, { type: 'Ready', status: 'False' }, { now })).toThrow(
      FrozenObjectError,
    );
    expect(() => setStatusCondition(conditions, { type: 'Other', status: 'False' }, { now })).toThrow(
      /setStatusCondition: cannot change condition "Other".*structuredClone/,
    );
    expect(setStatusCondition(conditions, { type: 'Ready', status: 'True', reason: 'R', message: 'm' })).toBe(
      false,
    );
    try {
      setStatusCondition(conditions, { type: 'Ready', status: 'False' });
    } catch (err) {
      expect((err as FrozenObjectError).code).toBe('ERR_FROZEN_OBJECT');
    }
  });

  it('bad input throws InvalidConditionError naming the helper, the condition and the field', () => {
    const list: Condition[] = [];
    const bad: Array<[unknown, unknown, RegExp]> = [
      [undefined, { type: 'Ready', status: 'True' }, /conditions must be an array.*got undefined/],
      [null, { type: 'Ready', status: 'True' }, /got null/],
      [list, { type: '', status: 'True' }, /type must be a non-empty string/],
      [list, { type: 'Ready', status: 'true' }, /"Ready": status "true" is not 'True', 'False' or 'Unknown'/],
      [list, { type: 'Ready', status: 'True', observedGeneration: -1 }, /observedGeneration -1/],
      [list, { type: 'Ready', status: 'True', observedGeneration: 1.5 }, /observedGeneration 1.5/],
      [list, { type: 'Ready', status: 'True', reason: 7 }, /reason must be a string/],
      [
        list,
        { type: 'Ready', status: 'True', lastTransitionTime: 'yesterday' },
        /lastTransitionTime "yesterday"/,
      ],
      [
        list,
        { type: 'Ready', status: 'True', lastTransitionTime: 'Dec 1 2026' },
        /lastTransitionTime "Dec 1 2026"/,
      ],
      [list, { type: 'Ready', status: 'True', lastTransitionTime: '2026-12-01' }, /is not an RFC 3339 time/],
      [list, { type: 'Ready', status: 'True', lastTransitionTime: new Date(Number.NaN) }, /invalid Date/],
      [list, null, /condition must be an object/],
    ];
    for (const [conditions, condition, msg] of bad) {
      const call = () => setStatusCondition(conditions as Condition[], condition as Condition);
      expect(call).toThrow(InvalidConditionError);
      expect(call).toThrow(msg);
    }
    expect(list).toEqual([]);
    try {
      setStatusCondition(list, { type: '', status: 'True' });
    } catch (err) {
      expect(err).toBeInstanceOf(TypeError);
      expect((err as InvalidConditionError).code).toBe('ERR_INVALID_CONDITION');
    }
  });

  it('uses the real clock without options', () => {
    const conditions: Condition[] = [];
    const before = Math.floor(Date.now() / 1000) * 1000;
    setStatusCondition(conditions, { type: 'Ready', status: 'True' });
    const t = Date.parse(conditions[0]!.lastTransitionTime);
    expect(t).toBeGreaterThanOrEqual(before);
    expect(conditions[0]!.lastTransitionTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });
});

describe('removeStatusCondition (apimachinery meta.RemoveStatusCondition)', () => {
  it('removes every entry of the type in place, keeps the order of the others, returns whether removed', () => {
    const t = (type: string) => ({ ...ready('True'), type });
    const conditions = [t('A'), t('B'), t('C'), t('B'), t('D')];
    const same = conditions;
    expect(removeStatusCondition(conditions, 'B')).toBe(true);
    expect(same.map((c) => c.type)).toEqual(['A', 'C', 'D']);
    expect(removeStatusCondition(conditions, 'B')).toBe(false);
    expect(removeStatusCondition([], 'B')).toBe(false);
    expect(removeStatusCondition(conditions, 'A')).toBe(true);
    expect(removeStatusCondition(conditions, 'D')).toBe(true);
    expect(conditions.map((c) => c.type)).toEqual(['C']);
  });

  it('a frozen array throws FrozenObjectError only when something is to be removed; a non-array is InvalidConditionError', () => {
    const conditions = Object.freeze([ready('True')]) as unknown as Condition[];
    expect(removeStatusCondition(conditions, 'Other')).toBe(false);
    expect(() => removeStatusCondition(conditions, 'Ready')).toThrow(FrozenObjectError);
    expect(() => removeStatusCondition(undefined as unknown as Condition[], 'Ready')).toThrow(
      InvalidConditionError,
    );
  });
});

describe('findStatusCondition and the is* predicates', () => {
  const conditions: readonly Condition[] = Object.freeze([
    ready('True'),
    { ...ready('False'), type: 'Degraded' },
    { ...ready('Unknown'), type: 'Progressing' },
  ]);

  it('findStatusCondition returns the entry of the type (first one), undefined when absent or no array', () => {
    expect(findStatusCondition(conditions, 'Degraded')).toBe(conditions[1]);
    expect(findStatusCondition(conditions, 'Missing')).toBeUndefined();
    expect(findStatusCondition(undefined, 'Ready')).toBeUndefined();
    const dup = [ready('True', { reason: 'first' }), ready('False', { reason: 'second' })];
    expect(findStatusCondition(dup, 'Ready')?.reason).toBe('first');
  });

  it('isStatusConditionTrue / False / PresentAndEqual: absent is neither true nor false', () => {
    expect(isStatusConditionTrue(conditions, 'Ready')).toBe(true);
    expect(isStatusConditionFalse(conditions, 'Ready')).toBe(false);
    expect(isStatusConditionTrue(conditions, 'Degraded')).toBe(false);
    expect(isStatusConditionFalse(conditions, 'Degraded')).toBe(true);
    expect(isStatusConditionTrue(conditions, 'Progressing')).toBe(false);
    expect(isStatusConditionFalse(conditions, 'Progressing')).toBe(false);
    expect(isStatusConditionPresentAndEqual(conditions, 'Progressing', 'Unknown')).toBe(true);
    expect(isStatusConditionPresentAndEqual(conditions, 'Missing', 'Unknown')).toBe(false);
    expect(isStatusConditionTrue(conditions, 'Missing')).toBe(false);
    expect(isStatusConditionFalse(conditions, 'Missing')).toBe(false);
    expect(isStatusConditionTrue(undefined, 'Ready')).toBe(false);
  });
});

describe('client-node V1Condition arrays', () => {
  it('are accepted by every helper (typed with Date times; strings are written, as the server sends them)', () => {
    const conditions: V1Condition[] = [];
    expect(setStatusCondition(conditions, { type: 'Ready', status: 'True', reason: 'R' }, { now })).toBe(
      true,
    );
    expect(conditions[0]!.lastTransitionTime).toBe(NOW_STR);
    expect(isStatusConditionTrue(conditions, 'Ready')).toBe(true);
    expect(findStatusCondition(conditions, 'Ready')?.reason).toBe('R');
    expect(removeStatusCondition(conditions, 'Ready')).toBe(true);
    expect(conditions).toEqual([]);
  });
});

describe('formatConditionTime', () => {
  it('writes UTC RFC 3339 with whole seconds (metav1.Time), truncating milliseconds', () => {
    expect(formatConditionTime(new Date('2026-12-01T05:50:17.999Z'))).toBe('2026-12-01T05:50:17Z');
    expect(formatConditionTime(new Date('2026-12-01T07:00:00+02:00'))).toBe('2026-12-01T05:00:00Z');
    expect(() => formatConditionTime(new Date('nope'))).toThrow(InvalidConditionError);
  });
});

// StatusConditions() against what controller-gen emits for `Conditions []metav1.Condition` with `+listType=map`
// and `+listMapKey=type`, and validate() against metav1.Condition's kubebuilder markers.
import type { ObjectOf } from '@kubeloop/client';
import { type Condition, setStatusCondition } from '@kubeloop/client/conditions';
import { Type } from 'typebox';
import { describe, expect, expectTypeOf, it, vi } from 'vitest';
import {
  customResourceDefinition,
  defineKind,
  type JSONSchemaProps,
  type StatusConditionObject,
  StatusConditions,
  validate,
} from '../src/index.js';

/**
 * controller-gen's `status.conditions` for `[]metav1.Condition` (+listType=map, +listMapKey=type), from a CRD it
 * generated (the microshift tree's assets/components/lvms/lvm.topolvm.io_lvmclusters.yaml, whose list markers are
 * the only difference), descriptions left out: they are prose, not validation.
 */
const CONTROLLER_GEN: JSONSchemaProps = {
  type: 'array',
  'x-kubernetes-list-type': 'map',
  'x-kubernetes-list-map-keys': ['type'],
  items: {
    type: 'object',
    required: ['lastTransitionTime', 'message', 'reason', 'status', 'type'],
    properties: {
      lastTransitionTime: { type: 'string', format: 'date-time' },
      message: { type: 'string', maxLength: 32768 },
      observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
      reason: {
        type: 'string',
        maxLength: 1024,
        minLength: 1,
        pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
      },
      status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
      type: {
        type: 'string',
        maxLength: 316,
        pattern:
          '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
      },
    },
  },
};

const Gadget = defineKind({
  group: 'example.com',
  version: 'v1',
  kind: 'Gadget',
  spec: Type.Object({ size: Type.Integer() }),
  status: Type.Object({ conditions: Type.Optional(StatusConditions()) }),
});
type GadgetObject = ObjectOf<typeof Gadget>;

/** The schema without descriptions, `required` sorted (controller-gen sorts it; the order means nothing). */
function validations(s: unknown): unknown {
  if (Array.isArray(s)) return s.map(validations);
  if (typeof s !== 'object' || s === null) return s;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === 'description') continue;
    out[k] = k === 'required' ? [...(v as string[])].sort() : validations(v);
  }
  return out;
}

const good = {
  type: 'Ready',
  status: 'True',
  observedGeneration: 3,
  lastTransitionTime: '2026-12-02T05:00:00Z',
  reason: 'AllReplicasReady',
  message: '',
} as const;

function gadget(conditions: unknown[]): unknown {
  return {
    apiVersion: 'example.com/v1',
    kind: 'Gadget',
    metadata: { name: 'g', namespace: 'default' },
    spec: { size: 1 },
    status: { conditions },
  };
}

describe('StatusConditions', () => {
  it("generates controller-gen's schema for []metav1.Condition: same fields, validations, list-type map by type", () => {
    const crd = customResourceDefinition(Gadget);
    const conditions =
      crd.spec.versions[0]?.schema?.openAPIV3Schema?.properties?.status?.properties?.conditions;
    expect(validations(conditions)).toEqual(CONTROLLER_GEN);
    // every field is documented in the CRD, as controller-gen documents them
    for (const [name, field] of Object.entries(conditions?.items?.properties ?? {}))
      expect(field.description, name).toBeTruthy();
  });

  it('has the static type the client condition helpers write', () => {
    expectTypeOf<StatusConditionObject>().toEqualTypeOf<{
      type: string;
      status: 'True' | 'False' | 'Unknown';
      observedGeneration?: number;
      lastTransitionTime: string;
      reason: string;
      message: string;
    }>();
    expectTypeOf<StatusConditionObject>().toExtend<Condition>();
    expectTypeOf<Condition>().toExtend<StatusConditionObject>();
    const g = gadget([]) as GadgetObject;
    g.status = { conditions: [] };
    expect(setStatusCondition(g.status.conditions!, { ...good, type: 'Synced' })).toBe(true);
    expect(validate(Gadget, g)).toEqual([]);
  });

  it("validates without logging: format int64 (controller-gen's on every Go integer) is a known format", () => {
    const warn = vi.spyOn(console, 'warn');
    try {
      const Counter = defineKind({
        group: 'example.com',
        version: 'v1',
        kind: 'Counter',
        spec: Type.Object({
          count: Type.Integer({ format: 'int64' }),
          ratio: Type.Number({ format: 'double' }),
        }),
      });
      expect(
        validate(Counter, { ...(gadget([]) as object), kind: 'Counter', spec: { count: 1, ratio: 0.5 } }),
      ).toEqual([]);
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });

  it('accepts a valid condition, an empty message and a domain-prefixed type', () => {
    expect(validate(Gadget, gadget([good]))).toEqual([]);
    const { observedGeneration: _, ...noGeneration } = good;
    expect(validate(Gadget, gadget([noGeneration, { ...good, type: 'example.com/Synced' }]))).toEqual([]);
  });

  it.each([
    ['status outside True/False/Unknown', { status: 'Maybe' }, 'status: Unsupported value: "Maybe"'],
    ['an empty reason', { reason: '' }, 'reason in body should be at least 1 chars long'],
    ['a reason not starting with a letter', { reason: '1Up' }, 'reason in body should match'],
    ['a reason ending in a colon', { reason: 'Up:' }, 'reason in body should match'],
    ['a reason over 1024 characters', { reason: 'A'.repeat(1025) }, 'reason: Too long'],
    ['a type with a space', { type: 'Not Ready' }, 'type in body should match'],
    ['a type over 316 characters', { type: 'A'.repeat(317) }, 'type: Too long'],
    ['a message over 32768 characters', { message: 'x'.repeat(32769) }, 'message: Too long'],
    ['a negative observedGeneration', { observedGeneration: -1 }, 'should be greater than or equal to 0'],
    [
      'a lastTransitionTime that is no date-time',
      { lastTransitionTime: 'yesterday' },
      'must be of type date-time',
    ],
  ])('refuses %s', (_what, change, message) => {
    const errors = validate(Gadget, gadget([{ ...good, ...change }])).map((e) => e.message);
    expect(errors.join('\n')).toContain(message);
    expect(errors.every((m) => m.startsWith('status.conditions[0].'))).toBe(true);
  });

  it.each(['type', 'status', 'lastTransitionTime', 'reason', 'message'])('requires %s', (field) => {
    const { [field as keyof typeof good]: _, ...rest } = good;
    expect(validate(Gadget, gadget([rest])).map((e) => e.message)).toContain(
      `status.conditions[0].${field}: Required value`,
    );
  });

  it('refuses two conditions of one type (list-type map keyed by type)', () => {
    expect(validate(Gadget, gadget([good, { ...good, status: 'False' }])).map((e) => e.message)).toEqual([
      'status.conditions[1]: Duplicate value: map[string]interface {}{"type":"Ready"}',
    ]);
  });
});

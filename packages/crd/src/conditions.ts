import { type Static, Type } from 'typebox';
import { ListMap, type ListOptions, type NodeOptions } from './builders.js';

/**
 * A status condition: apimachinery's `metav1.Condition`, with the validations its kubebuilder markers give the
 * schema controller-gen emits (k8s.io/apimachinery/pkg/apis/meta/v1/types.go):
 * - `type`: required, at most 316 characters, `CamelCase` or `example.com/CamelCase` (a DNS-1123 subdomain
 *   prefix, then a qualified name);
 * - `status`: required, one of `True`, `False`, `Unknown`;
 * - `observedGeneration`: optional int64, at least 0;
 * - `lastTransitionTime`: required, an RFC 3339 `date-time` string (`metav1.Time` on the wire);
 * - `reason`: required, 1 to 1024 characters, a letter first, then letters, digits, `_`, `,` or `:`, not
 *   ending in `,` or `:`;
 * - `message`: required (may be empty), at most 32768 characters.
 *
 * Its static type is the shape `@kubeloop/client/conditions` writes (`setStatusCondition` takes an array of them).
 * Use {@link StatusConditions} for the `status.conditions` list itself.
 */
export function StatusCondition(options: NodeOptions = {}) {
  return Type.Object(
    {
      type: Type.String({
        description: 'The aspect of the object this condition is about: CamelCase, or example.com/CamelCase.',
        maxLength: 316,
        pattern:
          '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
      }),
      status: Type.Unsafe<'True' | 'False' | 'Unknown'>({
        description: 'Whether the condition holds: True, False or Unknown.',
        type: 'string',
        enum: ['True', 'False', 'Unknown'],
      }),
      observedGeneration: Type.Optional(
        Type.Integer({
          description: 'The metadata.generation of the object this condition was computed from.',
          format: 'int64',
          minimum: 0,
        }),
      ),
      lastTransitionTime: Type.String({
        description: 'When status last changed to its current value (RFC 3339).',
        format: 'date-time',
      }),
      reason: Type.String({
        description: 'Why status last changed, as a CamelCase identifier for programs.',
        maxLength: 1024,
        minLength: 1,
        pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
      }),
      message: Type.String({
        description: 'Details of the last change for humans; may be empty.',
        maxLength: 32768,
      }),
    },
    { description: 'One aspect of the state of the object.', ...options },
  );
}

/** The static type of a {@link StatusCondition}: `metav1.Condition` as it is on the wire. */
export type StatusConditionObject = Static<ReturnType<typeof StatusCondition>>;

/**
 * A `status.conditions` list as controller-gen emits it for `[]metav1.Condition` with `+listType=map` and
 * `+listMapKey=type`: {@link StatusCondition} items, one per `type` (`x-kubernetes-list-type: map` keyed by `type`,
 * so server-side apply merges them by type and the server refuses two of the same type). Static type
 * {@link StatusConditionObject}`[]`; make it optional in the status (`Type.Optional(StatusConditions())`).
 */
export function StatusConditions(options: ListOptions = {}) {
  return ListMap(StatusCondition(), ['type'], {
    description: 'The latest observations of the state of the object, one per condition type.',
    ...options,
  });
}

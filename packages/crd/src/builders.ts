import type { KubeObject } from '@kubeloop/client';
import { type Static, type TSchema, type TUnion, Type } from 'typebox';
import type { ValidationRule } from './types.js';

/**
 * Schema builders for what Kubernetes adds to OpenAPI v3, as TypeBox schemas with the right static type. Use them
 * beside TypeBox's own `Type.Object`, `Type.String`, … in a kind's `spec`/`status`; the CRD generator turns them
 * into the `x-kubernetes-*` extensions kube-apiserver reads.
 */

/** Options every builder takes and copies onto the node (description, default, CEL rules). */
export interface NodeOptions {
  readonly description?: string;
  readonly default?: unknown;
  readonly 'x-kubernetes-validations'?: readonly ValidationRule[];
}

/**
 * An int-or-string (`x-kubernetes-int-or-string: true`): an integer or a string such as a port name or
 * `25%` (Kubernetes `intstr.IntOrString`). Static type `number | string`.
 */
export function IntOrString(options: NodeOptions & { readonly pattern?: string } = {}) {
  return Type.Unsafe<number | string>({ ...options, 'x-kubernetes-int-or-string': true });
}

/**
 * A resource quantity such as `500m`, `1Gi` or `2` (`resource.Quantity`): an int-or-string that only admits the
 * quantity syntax, as the built-in kinds' quantities do. Static type `number | string`.
 */
export function Quantity(options: NodeOptions = {}) {
  return Type.Unsafe<number | string>({
    ...options,
    'x-kubernetes-int-or-string': true,
    // the quantity grammar of apimachinery's resource.ParseQuantity: sign, digits, optional fraction, suffix
    pattern:
      '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$',
  });
}

/**
 * An object whose unknown fields the server keeps (`x-kubernetes-preserve-unknown-fields: true`): free-form
 * configuration. With `properties`, the named fields are still typed and validated. Static type: the properties
 * plus `Record<string, unknown>`.
 */
export function PreserveUnknownFields<P extends Record<string, TSchema> = Record<never, TSchema>>(
  properties?: P,
  options: NodeOptions = {},
) {
  const schema = properties
    ? Type.Object(properties, { ...options, 'x-kubernetes-preserve-unknown-fields': true })
    : { ...options, type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  return Type.Unsafe<Static<ReturnType<typeof Type.Object<P>>> & Record<string, unknown>>(schema);
}

/**
 * A whole Kubernetes object embedded in this one (`x-kubernetes-embedded-resource: true`), like a Deployment's pod
 * template or a `RawExtension`: `apiVersion`, `kind` and `metadata` are validated as an object's, the rest is kept.
 * Static type {@link KubeObject} with any further fields.
 */
export function EmbeddedResource(options: NodeOptions = {}) {
  return Type.Unsafe<KubeObject & Record<string, unknown>>({
    ...options,
    type: 'object',
    'x-kubernetes-embedded-resource': true,
    'x-kubernetes-preserve-unknown-fields': true,
  });
}

/** A value that may also be `null` (`nullable: true`). Static type `T | null`. */
export function Nullable<T extends TSchema>(schema: T): TUnion<[T, ReturnType<typeof Type.Null>]> {
  return Type.Union([schema, Type.Null()]);
}

/** Options of the list builders. */
export interface ListOptions extends NodeOptions {
  readonly minItems?: number;
  readonly maxItems?: number;
}

/**
 * A list whose items are unique scalars, merged as a set by server-side apply (`x-kubernetes-list-type: set`).
 * The server refuses duplicates. Static type `T[]`.
 */
export function ListSet<T extends TSchema>(items: T, options: ListOptions = {}) {
  return Type.Array(items, { ...options, 'x-kubernetes-list-type': 'set' });
}

/**
 * A list of objects keyed by `keys` (`x-kubernetes-list-type: map` + `x-kubernetes-list-map-keys`), merged per key
 * by server-side apply, like a Pod's `containers` by `name`. Each key must be a required (or defaulted) scalar
 * property of the items; the server refuses two items with the same keys. Static type `Static<T>[]`.
 */
export function ListMap<T extends TSchema, K extends keyof Static<T> & string>(
  items: T,
  keys: readonly [K, ...K[]],
  options: ListOptions = {},
) {
  return Type.Array(items, {
    ...options,
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': [...keys],
  });
}

/** A list replaced as a whole by server-side apply (`x-kubernetes-list-type: atomic`). Static type `T[]`. */
export function ListAtomic<T extends TSchema>(items: T, options: ListOptions = {}) {
  return Type.Array(items, { ...options, 'x-kubernetes-list-type': 'atomic' });
}

/**
 * Adds CEL rules (`x-kubernetes-validations`) to a schema node and returns it (same static type). `self` is the
 * node's value; a rule that mentions `oldSelf` is a transition rule, checked on update only (unless
 * `optionalOldSelf`). Rules are compiled at CRD generation; one that does not compile fails it.
 */
export function WithRules<T extends TSchema>(schema: T, rules: readonly ValidationRule[]): T {
  const existing =
    (schema as { 'x-kubernetes-validations'?: ValidationRule[] })['x-kubernetes-validations'] ?? [];
  return Type.Unsafe<Static<T>>({
    ...schema,
    'x-kubernetes-validations': [...existing, ...rules],
  }) as unknown as T;
}

/**
 * Pruning and defaulting of custom resources by their structural schema, as apiextensions-apiserver does when it
 * decodes a request body and when it reads an object from storage (`structuralpruning.Prune`,
 * `structuraldefaulting.PruneNonNullableNullsWithoutDefaults`, `structuraldefaulting.Default`):
 * - unknown fields are dropped unless the node has `x-kubernetes-preserve-unknown-fields: true` (then only
 *   declared properties are walked) or an `additionalProperties` schema; `x-kubernetes-int-or-string` values are
 *   left alone; an `x-kubernetes-embedded-resource` keeps `apiVersion`, `kind` and `metadata`;
 * - a `null` for a non-nullable field without a default is removed;
 * - a missing property (or a `null` one that is not nullable) with a `default` gets a deep copy of it, and
 *   defaulting recurses into what it set, into `items` and into `additionalProperties` values.
 * The root's `apiVersion`, `kind` and `metadata` are never pruned here (ObjectMeta has its own rules).
 */
import type { SchemaNode } from './cr-validation.js';

function node(v: unknown): SchemaNode | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as SchemaNode) : undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

const META_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

/**
 * Remove fields `schema` does not declare, in place. Returns the dotted paths it removed (`spec.foo`,
 * `spec.items[0].bar`), as field validation reports unknown fields.
 */
export function prune(value: unknown, schema: SchemaNode | undefined, isRoot = true): string[] {
  const pruned: string[] = [];
  pruneNode(value, schema, '', isRoot, pruned);
  return pruned;
}

function pruneNode(
  value: unknown,
  s: SchemaNode | undefined,
  path: string,
  isResource: boolean,
  out: string[],
): void {
  if (!s || s['x-kubernetes-int-or-string'] === true) return;
  if (Array.isArray(value)) {
    const items = node(s.items);
    value.forEach((x, i) => {
      pruneNode(x, items, `${path}[${i}]`, items?.['x-kubernetes-embedded-resource'] === true, out);
    });
    return;
  }
  if (!isObject(value)) return;
  const props = node(s.properties) ?? {};
  const addl = node(s.additionalProperties);
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true || s.additionalProperties === true;
  const embedded = isResource || s['x-kubernetes-embedded-resource'] === true;
  for (const k of Object.keys(value)) {
    const sub = path === '' ? k : `${path}.${k}`;
    // ObjectMeta and type meta of a resource (the root or an embedded one) follow their own rules
    if (embedded && META_FIELDS.has(k)) continue;
    const p = node(props[k]);
    if (p) pruneNode(value[k], p, sub, p['x-kubernetes-embedded-resource'] === true, out);
    else if (addl) pruneNode(value[k], addl, sub, addl['x-kubernetes-embedded-resource'] === true, out);
    else if (!preserve) {
      delete value[k];
      out.push(sub);
    }
  }
}

function isNonNullableNull(v: unknown, s: SchemaNode | undefined): boolean {
  return v === null && s?.nullable !== true;
}

/** Remove `null` values of non-nullable fields that have no default, in place. */
export function pruneNonNullableNulls(value: unknown, s: SchemaNode | undefined): void {
  if (Array.isArray(value)) {
    const items = node(s?.items);
    for (const x of value) pruneNonNullableNulls(x, items);
    return;
  }
  if (!isObject(value)) return;
  for (const k of Object.keys(value)) {
    const sub = s ? (node(node(s.properties)?.[k]) ?? node(s.additionalProperties)) : undefined;
    if (isNonNullableNull(value[k], sub) && (sub === undefined || sub.default === undefined)) {
      // a field the schema does not know is left to pruning; only schema-typed nulls are dropped here
      if (sub !== undefined) delete value[k];
    } else pruneNonNullableNulls(value[k], sub);
  }
}

/** Apply `default`s in place. */
export function applyDefaults(value: unknown, s: SchemaNode | undefined): void {
  if (!s) return;
  if (Array.isArray(value)) {
    const items = node(s.items);
    if (!items) return;
    for (let i = 0; i < value.length; i++) {
      if (isNonNullableNull(value[i], items) && items.default !== undefined)
        value[i] = structuredClone(items.default);
      applyDefaults(value[i], items);
    }
    return;
  }
  if (!isObject(value)) return;
  const props = node(s.properties) ?? {};
  for (const [k, ps] of Object.entries(props)) {
    const p = node(ps);
    if (!p || p.default === undefined) continue;
    if (!Object.hasOwn(value, k) || isNonNullableNull(value[k], p)) value[k] = structuredClone(p.default);
  }
  const addl = node(s.additionalProperties);
  for (const k of Object.keys(value)) {
    const p = node(props[k]);
    if (p) applyDefaults(value[k], p);
    else if (addl) {
      if (isNonNullableNull(value[k], addl) && addl.default !== undefined)
        value[k] = structuredClone(addl.default);
      applyDefaults(value[k], addl);
    }
  }
}

/**
 * What the server does to a custom resource it decodes (request or storage): prune unknown fields, drop
 * non-nullable nulls without defaults, apply defaults. `obj` is changed in place; returns the pruned paths.
 */
export function pruneAndDefault(obj: Record<string, unknown>, schema: SchemaNode): string[] {
  const pruned = prune(obj, schema, true);
  pruneNonNullableNulls(obj, schema);
  applyDefaults(obj, schema);
  return pruned;
}

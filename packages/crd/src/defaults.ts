import type { CustomResourceKind } from './kind.js';
import type { JSONSchemaProps } from './types.js';

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function defaultNode(node: JSONSchemaProps, value: unknown): void {
  if (isObj(value)) {
    for (const [k, s] of Object.entries(node.properties ?? {})) {
      const absent = !(k in value) || (value[k] === null && !s.nullable);
      if (absent && s.default !== undefined) value[k] = structuredClone(s.default);
      if (k in value) defaultNode(s, value[k]);
    }
    if (typeof node.additionalProperties === 'object')
      for (const v of Object.values(value)) defaultNode(node.additionalProperties, v);
  } else if (Array.isArray(value) && node.items) {
    for (const item of value) defaultNode(node.items, item);
  }
}

/**
 * Returns a copy of `obj` with the schema's defaults applied, as kube-apiserver applies them on create, update and
 * read from storage (apiextensions-apiserver `structuraldefaulting.Default`): a missing property with a `default`
 * gets a copy of it, so does a `null` one that is not `nullable`; defaulting recurses into objects, maps, list
 * items and into the defaulted values. `obj` itself is not changed.
 */
export function applyDefaults<T>(kind: CustomResourceKind, obj: T): T {
  const copy = structuredClone(obj);
  defaultNode(kind.schema, copy);
  return copy;
}

function pruneNode(
  node: JSONSchemaProps,
  value: unknown,
  isRoot: boolean,
  pruned: string[],
  path: string,
): void {
  if (isObj(value)) {
    if (
      node['x-kubernetes-preserve-unknown-fields'] &&
      !node.properties &&
      typeof node.additionalProperties !== 'object'
    )
      return;
    const keep = new Set(Object.keys(node.properties ?? {}));
    if (isRoot || node['x-kubernetes-embedded-resource'])
      for (const k of ['apiVersion', 'kind', 'metadata']) keep.add(k);
    for (const k of Object.keys(value)) {
      const at = path ? `${path}.${k}` : k;
      // object meta is the server's own (not pruned by the schema) at the root and in embedded resources
      if (k === 'metadata' && keep.has('metadata') && (isRoot || node['x-kubernetes-embedded-resource']))
        continue;
      const s =
        node.properties?.[k] ??
        (typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined);
      if (s) pruneNode(s, value[k], false, pruned, at);
      else if (
        !keep.has(k) &&
        !node['x-kubernetes-preserve-unknown-fields'] &&
        node.additionalProperties !== true
      ) {
        delete value[k];
        pruned.push(at);
      }
    }
  } else if (Array.isArray(value) && node.items) {
    for (const [i, item] of value.entries()) pruneNode(node.items, item, false, pruned, `${path}[${i}]`);
  }
}

/**
 * Returns a copy of `obj` without the fields its schema does not specify, as kube-apiserver prunes a custom resource
 * before storing it (apiextensions-apiserver `pruning.Prune`): unknown fields go, except under
 * `x-kubernetes-preserve-unknown-fields`; `apiVersion`, `kind` and `metadata` stay at the root and in embedded
 * resources. `removed` lists the pruned paths (`spec.colour`), the fields the server names in its
 * `unknown field "spec.colour"` warning (or error with `fieldValidation=Strict`).
 */
export function prune<T>(kind: CustomResourceKind, obj: T): { object: T; removed: string[] } {
  const copy = structuredClone(obj);
  const removed: string[] = [];
  pruneNode(kind.schema, copy, true, removed, '');
  return { object: copy, removed };
}

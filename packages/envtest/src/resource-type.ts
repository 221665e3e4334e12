import type { FieldError } from './errors.js';

/** A plain Kubernetes object as JSON. */
export type KObject = Record<string, unknown> & { metadata?: Record<string, unknown> };

/** A column of a server-side Table (meta.k8s.io/v1). */
export interface TableColumn {
  readonly name: string;
  readonly type: string;
  readonly format: string;
  readonly description: string;
  readonly priority: number;
  /** The cell for one object. */
  cell(obj: KObject, now: number): unknown;
}

/** The `/scale` subresource of a resource: where replicas live in the parent object. */
export interface ScaleSpec {
  /** e.g. `.spec.replicas` */
  readonly specReplicasPath: string;
  readonly statusReplicasPath: string;
  readonly labelSelectorPath?: string;
}

/**
 * Everything the server knows about one served resource (one group/version/resource).
 * Built-in kinds are declared in `builtin-resources.ts`; CRDs produce these at runtime (`crd.ts`).
 */
export interface ResourceType {
  readonly group: string;
  readonly version: string;
  /** Plural, lower case (`pods`). */
  readonly resource: string;
  readonly kind: string;
  readonly listKind: string;
  readonly singular: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  readonly verbs: readonly string[];
  readonly statusSubresource: boolean;
  readonly scale?: ScaleSpec;
  /** Whether `metadata.generation` is maintained. */
  readonly hasGeneration: boolean;
  /** PUT without resourceVersion is allowed (true for built-ins, false for CRs). */
  readonly allowUnconditionalUpdate: boolean;
  /** PUT on a missing object creates it (Events, Leases). */
  readonly allowCreateOnUpdate: boolean;
  /** DELETE answers with the deleted object (pods) instead of a Success Status. */
  readonly returnDeletedObject: boolean;
  /** Selectable fields beyond metadata.name/metadata.namespace: field → value getter. */
  readonly fieldSelectors: Readonly<Record<string, (obj: KObject) => string>>;
  /** Unsupported field selector message style: built-in (`field label not supported`) or default/CR. */
  readonly fieldSelectorStyle: 'builtin' | 'default';
  /** List merge keys for strategic merge patch, by dotted path (`spec.containers` → `name`); undefined = SMP unsupported (CRs). */
  readonly strategicMergeKeys?: Readonly<Record<string, string>>;
  /** Lists merged as sets of primitives under SMP (dotted paths). */
  readonly strategicSetLists?: readonly string[];
  /**
   * Server-side apply only (not SMP): lists merged per element by this key, by dotted path — a CRD schema's
   * `x-kubernetes-list-type: map` with one `x-kubernetes-list-map-keys` key, as structured-merge-diff reads it.
   */
  readonly applyListKeys?: Readonly<Record<string, string>>;
  /** Server-side apply only: lists merged as sets of values (a CRD schema's `x-kubernetes-list-type: set`). */
  readonly applySetLists?: readonly string[];
  /** Scheme defaulting on create/update (fields counted in managedFields). */
  defaults?(obj: KObject): void;
  /** Final normalisation before storing (drop zero-valued omitempty fields, as typed encoding does). */
  canonicalize?(obj: KObject): void;
  /** A /status write also takes labels and annotations from the body (pods' status strategy). */
  readonly statusWritesMetadata?: boolean;
  /** Extra subresources listed in discovery only (pods/exec, …); requests to them answer 404. */
  readonly discoveryOnlySubresources?: readonly {
    readonly name: string;
    readonly verbs: readonly string[];
    readonly kind?: string;
    readonly group?: string;
    readonly version?: string;
  }[];
  /** Not stored: a create answers with the object and keeps nothing (TokenReview, SubjectAccessReview, …). */
  readonly ephemeral?: boolean;
  /** Admission mutation on create (not counted in managedFields). */
  admit?(obj: KObject): void;
  /** Validation; return field errors. */
  validate?(obj: KObject, old: KObject | undefined): FieldError[];
  /** Known top-level fields and their children for strict field validation; undefined = no check. */
  unknownFields?(obj: KObject): string[];
  /** Table columns (besides the Name column, which always comes first). */
  readonly tableColumns?: readonly TableColumn[];
  /** Storage key shared by resources that are the same objects in another group (events). */
  readonly storageKey: string;
  /** Storage converters when storageKey is shared: from storage shape into this resource's shape and back. */
  fromStorage?(obj: KObject): KObject;
  toStorage?(obj: KObject): KObject;
  /** Whether list items carry kind/apiVersion (true for CRs, as unstructured lists do upstream). */
  readonly listItemsHaveTypeMeta: boolean;
  readonly storageVersionHash: string;
  /** A custom resource's openAPIV3Schema (from its CRD version), served in the OpenAPI v3 document. */
  readonly openApiSchema?: Readonly<Record<string, unknown>>;
  /** Set for custom resources: the CRD name. */
  readonly crdName?: string;
  /**
   * Set on every served version of a CRD whose `spec.conversion.strategy` is `Webhook`: other versions are
   * converted through that webhook (see admission/conversion.ts).
   */
  readonly conversion?: {
    readonly crdUid: string;
    readonly kind: string;
    readonly group: string;
    readonly storageVersion: string;
    readonly servedVersions: readonly string[];
    /** `spec.conversion.webhook`: `clientConfig` and `conversionReviewVersions`. */
    readonly webhook: Readonly<Record<string, unknown>>;
  };
  readonly singularFallback?: string;
}

/** ObjectMeta's fields, in the order kube-apiserver writes them (unknown metadata keys follow these). */
export const OBJECT_META_FIELDS: readonly string[] = [
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
];

export function apiVersionOf(rt: Pick<ResourceType, 'group' | 'version'>): string {
  return rt.group ? `${rt.group}/${rt.version}` : rt.version;
}

/** Read a dotted JSON path like `.spec.replicas` or `spec.replicas`. */
export function getPath(obj: unknown, path: string): unknown {
  const parts = path.replace(/^\./, '').split('.').filter(Boolean);
  let cur: unknown = obj;
  for (const p of parts) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[p];
  }
  return cur;
}

/** Set a dotted JSON path, creating objects along the way. */
export function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.replace(/^\./, '').split('.').filter(Boolean);
  let cur: Record<string, unknown> = obj;
  for (let i = 0; i < parts.length - 1; i++) {
    const p = parts[i]!;
    const next = cur[p];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) {
      const fresh: Record<string, unknown> = {};
      cur[p] = fresh;
      cur = fresh;
    } else {
      cur = next as Record<string, unknown>;
    }
  }
  const last = parts[parts.length - 1];
  if (last !== undefined) cur[last] = value;
}

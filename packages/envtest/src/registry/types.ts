import type { FieldError } from '../errors.js';
import type { FieldSelector } from '../field-selector.js';
import type { LabelSelector } from '../label-selector.js';
import type { KObject, ResourceType } from '../resource-type.js';
import type { Entry, Store } from '../store.js';

// The registry's shapes, apart from the Registry class, so that the registry/* operations take the registry
// they run on without importing the module that imports them.

/** Options shared by writes. */
export interface WriteOptions {
  readonly dryRun?: boolean;
  /** Manager name for managedFields (from `?fieldManager=` or the User-Agent). */
  readonly fieldManager: string;
  readonly subresource?: string;
}

/** Options of a list. */
export interface ListOptions {
  readonly namespace?: string;
  readonly labelSelector?: string | null;
  readonly fieldSelector?: string | null;
  readonly limit?: number;
  readonly continueToken?: string | null;
  readonly resourceVersion?: string | null;
  readonly resourceVersionMatch?: string | null;
}

export interface ListResult {
  readonly rv: number;
  readonly entries: readonly Entry[];
  readonly continueToken?: string;
  readonly remainingItemCount?: number;
}

/** DeleteOptions (body or query). */
export interface DeleteOptions {
  readonly preconditions?: { uid?: string; resourceVersion?: string };
  readonly propagationPolicy?: string;
  readonly gracePeriodSeconds?: number;
  readonly dryRun?: boolean;
}

/** Result of a delete: the object (pods, or terminating objects) or a Success Status. */
export interface DeleteResult {
  readonly object?: KObject;
  readonly status?: Record<string, unknown>;
}

/** Hooks for kinds with lifecycle beyond the generic store (namespaces, CRDs). */
export interface RegistryHooks {
  afterCreate?(rt: ResourceType, obj: Readonly<KObject>): void;
  /** After an object is removed; `opts` are the DeleteOptions when a delete request removed it. */
  afterDelete?(rt: ResourceType, obj: Readonly<KObject>, opts?: DeleteOptions): void;
  afterUpdate?(rt: ResourceType, obj: Readonly<KObject>): void;
  /** Validate a create/update beyond the kind's own validation. */
  validate?(rt: ResourceType, obj: KObject, old: KObject | undefined): FieldError[];
  /** Validating admission after validation (ValidatingAdmissionPolicy); throws an ApiStatusError to deny. */
  validatingAdmission?(rt: ResourceType, obj: KObject, old: KObject | undefined, subresource: string): void;
  /** All served resource types (for namespace cleanup). */
  allTypes(): readonly ResourceType[];
  /**
   * A garbage collector runs: a delete with `propagationPolicy: Foreground` keeps the object, marked for deletion
   * with the `foregroundDeletion` finalizer, until the collector has removed its blocking dependents (as the
   * apiserver's registry does when garbage collection is enabled).
   */
  readonly foregroundDeletion?: boolean;
}

/** Validated label and field selectors of a list or watch (see `Registry.selectors`). */
export interface Selectors {
  readonly empty: boolean;
  readonly label: LabelSelector;
  readonly field: FieldSelector;
  matches(o: KObject): boolean;
}

/** What the registry/* operations use of the registry they run on (the `Registry` class implements it). */
export interface RegistryOps {
  readonly store: Store;
  readonly hooks: RegistryHooks;
  view(rt: ResourceType, entry: Entry): Readonly<KObject>;
  get(rt: ResourceType, namespace: string | undefined, name: string): Entry;
  selectors(rt: ResourceType, labelSelector?: string | null, fieldSelector?: string | null): Selectors;
  list(rt: ResourceType, opts: ListOptions): Promise<ListResult>;
}

import { badRequest, conflict, invalid, notFound, OPTIMISTIC_LOCK_MSG } from './errors.js';
import { type FieldSelector, parseFieldSelector } from './field-selector.js';
import { type LabelSelector, parseLabelSelector } from './label-selector.js';
import { applyObject } from './registry/apply.js';
import { deleteCollection, deleteObject } from './registry/delete.js';
import { listObjects, waitForRv } from './registry/list.js';
import { isObj, meta, storageKeyOf } from './registry/object-meta.js';
import type {
  DeleteOptions,
  DeleteResult,
  ListOptions,
  ListResult,
  RegistryHooks,
  RegistryOps,
  Selectors,
  WriteOptions,
} from './registry/types.js';
import { createObject, writeExisting } from './registry/write.js';
import type { KObject, ResourceType } from './resource-type.js';
import type { Entry, Store } from './store.js';

export { parseRv } from './registry/list.js';
export { generateName, nowTimestamp, storageKeyOf } from './registry/object-meta.js';
export type {
  DeleteOptions,
  DeleteResult,
  ListOptions,
  ListResult,
  RegistryHooks,
  WriteOptions,
} from './registry/types.js';

/** The parameters of a registry/* operation after the registry it runs on. */
type AfterRegistry<F> = F extends (reg: RegistryOps, ...rest: infer R) => unknown ? R : never;

/** The generic registry over one store. */
export class Registry implements RegistryOps {
  readonly store: Store;
  readonly hooks: RegistryHooks;
  constructor(store: Store, hooks: RegistryHooks) {
    this.store = store;
    this.hooks = hooks;
  }

  /** The stored object converted to `rt`'s shape (events.k8s.io), shared and frozen when no conversion applies. */
  view(rt: ResourceType, entry: Entry): Readonly<KObject> {
    return rt.fromStorage ? rt.fromStorage(entry.obj as KObject) : entry.obj;
  }

  get(rt: ResourceType, namespace: string | undefined, name: string): Entry {
    const e = this.store.get(rt.storageKey, storageKeyOf(rt, namespace, name));
    if (!e) throw notFound(rt.resource, rt.group, name);
    return e;
  }

  /** Validated label/field selectors of a list or watch. */
  selectors(rt: ResourceType, labelSelector?: string | null, fieldSelector?: string | null): Selectors {
    const ls: LabelSelector = parseLabelSelector(labelSelector);
    const fs: FieldSelector = parseFieldSelector(rt, fieldSelector);
    const empty = ls.requirements.length === 0 && fs.requirements.length === 0;
    return {
      empty,
      label: ls,
      field: fs,
      matches: (o: KObject) => {
        const labels = (o.metadata as { labels?: Record<string, string> } | undefined)?.labels;
        if (!ls.matches(labels)) return false;
        return fs.matches(rt.fromStorage ? rt.fromStorage(o) : o);
      },
    };
  }

  /** Wait (up to 3 s like the API server) until the store reaches `rv`, else 504 Too large resource version. */
  waitForRv(rv: number): Promise<void> {
    return waitForRv(this.store, rv);
  }

  /**
   * List with selectors, paging and resourceVersion semantics (see registry/list.ts).
   * @throws ApiStatusError 400 (selectors, continue), 410 (expired RV/continue), 422 (option validation), 504.
   */
  list(rt: ResourceType, opts: ListOptions): Promise<ListResult> {
    return listObjects(this, rt, opts);
  }

  /**
   * Delete one object (see registry/delete.ts).
   * @throws ApiStatusError 404, 409 precondition failures.
   */
  delete(rt: ResourceType, namespace: string | undefined, name: string, opts: DeleteOptions): DeleteResult {
    return deleteObject(this, rt, namespace, name, opts);
  }

  /** deletecollection: delete every match; returns the deleted (or now terminating) objects. */
  deleteCollection(
    rt: ResourceType,
    opts: ListOptions,
    del: DeleteOptions,
  ): Promise<{ rv: number; items: KObject[] }> {
    return deleteCollection(this, rt, opts, del);
  }

  /** Create (POST): `createObject` (registry/write.ts) on this registry. */
  create(...args: AfterRegistry<typeof createObject>): KObject {
    return createObject(this, ...args);
  }

  /**
   * Update (PUT) of the main resource or of `/status`. `body` is consumed.
   * Returns `{object, created}`; `created` when AllowCreateOnUpdate created it.
   * @throws ApiStatusError 400, 404, 409 Conflict, 422.
   */
  update(
    rt: ResourceType,
    namespace: string | undefined,
    name: string,
    body: KObject,
    opts: WriteOptions,
  ): { object: KObject; created: boolean } {
    const m = meta(body);
    if (m.name !== undefined && m.name !== name)
      throw badRequest(
        `the name of the object (${String(m.name)}) does not match the name on the URL (${name})`,
      );
    if (rt.namespaced) {
      if (m.namespace && namespace && m.namespace !== namespace)
        throw badRequest(
          'the namespace of the provided object does not match the namespace sent on the request',
        );
    }
    const key = storageKeyOf(rt, namespace, name);
    const cur = this.store.get(rt.storageKey, key);
    if (!cur) {
      if (rt.allowCreateOnUpdate && !opts.subresource) {
        m.name = name;
        return { object: this.create(rt, namespace, body, opts), created: true };
      }
      throw notFound(rt.resource, rt.group, name);
    }
    const rv = m.resourceVersion;
    if (rv === undefined || rv === '' || rv === null) {
      if (!rt.allowUnconditionalUpdate)
        throw invalid(
          rt.resource,
          rt.group,
          name,
          [
            {
              type: 'FieldValueInvalid',
              field: 'metadata.resourceVersion',
              detail: 'Invalid value: 0x0: must be specified for an update',
            },
          ],
          rt.resource,
        );
    } else if (String(rv) !== String(cur.rv)) {
      throw conflict(rt.resource, rt.group, name, OPTIMISTIC_LOCK_MSG);
    }
    return { object: writeExisting(this, rt, namespace, name, cur, body, opts), created: false };
  }

  /**
   * Patch: `apply` computes the patched object from the current one. If the patched object carries a
   * resourceVersion it is a precondition (409 on mismatch).
   */
  patch(
    rt: ResourceType,
    namespace: string | undefined,
    name: string,
    apply: (current: KObject) => KObject,
    opts: WriteOptions,
  ): KObject {
    const cur = this.get(rt, namespace, name);
    const current = structuredClone(this.view(rt, cur)) as KObject;
    const patched = apply(current);
    if (!isObj(patched)) throw badRequest('the patch produced a non-object');
    const m = meta(patched);
    if (
      m.resourceVersion !== undefined &&
      m.resourceVersion !== null &&
      m.resourceVersion !== '' &&
      String(m.resourceVersion) !== String(cur.rv)
    )
      throw conflict(rt.resource, rt.group, name, OPTIMISTIC_LOCK_MSG);
    if (m.name !== undefined && m.name !== name)
      throw badRequest(
        `the name of the object (${String(m.name)}) does not match the name on the URL (${name})`,
      );
    delete patched.kind;
    delete patched.apiVersion;
    return writeExisting(this, rt, namespace, name, cur, patched, opts);
  }

  /** Server-side apply: `applyObject` (registry/apply.ts) on this registry. */
  apply(...args: AfterRegistry<typeof applyObject>): { object: KObject; created: boolean } {
    return applyObject(this, ...args);
  }
}

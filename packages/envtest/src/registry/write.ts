/**
 * The write path of the generic registry (apiserver `registry/generic/registry/store.go` Create and
 * Update with the kinds' strategies): server-owned metadata, defaults, validation, generation, managedFields,
 * no-op writes that keep the resourceVersion, and the last finalizer's removal completing a delete.
 */
import { randomUUID } from 'node:crypto';
import {
  ApiStatusError,
  alreadyExists,
  badRequest,
  conflict,
  forbiddenBy,
  invalid,
  notFound,
} from '../errors.js';
import { type ManagedFieldsEntry, updateManagedFields } from '../managed-fields/entries.js';
import { apiVersionOf, type KObject, type ResourceType } from '../resource-type.js';
import type { Entry, Store } from '../store.js';
import { sameIgnoringManagedTimes, specChanged } from './compare.js';
import {
  generateName,
  meta,
  normalize,
  nowTimestamp,
  storageKeyOf,
  toStorage,
  validateMeta,
} from './object-meta.js';
import type { RegistryHooks, RegistryOps, WriteOptions } from './types.js';

/**
 * NamespaceLifecycle admission on create: 404 when the namespace is missing, 403 NamespaceTerminating while it
 * is being deleted. `name` is the object's `metadata.name` as sent (none with only generateName), which the
 * plugin's Forbidden names. It runs before name generation, validation and storage, as admission does upstream.
 */
export function checkNamespace(
  store: Store,
  rt: ResourceType,
  namespace: string | undefined,
  name?: string,
): void {
  if (!rt.namespaced || !namespace) return;
  const ns = store.get('/namespaces', namespace);
  if (!ns) throw notFound('namespaces', '', namespace);
  if ((ns.obj.metadata as Record<string, unknown>).deletionTimestamp)
    throw forbiddenBy(
      rt.resource,
      rt.group,
      name || undefined,
      `unable to create new content in namespace ${namespace} because it is being terminated`,
      [
        {
          reason: 'NamespaceTerminating',
          message: `namespace ${namespace} is being terminated`,
          field: 'metadata.namespace',
        },
      ],
    );
}

/**
 * ObjectMeta, the kind's own and the server's extra validation; 422 Invalid listing every error. Then validating
 * admission policies, which kube-apiserver runs after validation (`subresource` is the written subresource).
 */
export function validateObject(
  hooks: RegistryHooks,
  rt: ResourceType,
  o: KObject,
  old: KObject | undefined,
  subresource?: string,
): void {
  const errs = [
    ...validateMeta(rt, o, old),
    ...(rt.validate?.(o, old) ?? []),
    ...(hooks.validate?.(rt, o, old) ?? []),
  ];
  if (errs.length > 0) throw invalid(rt.kind, rt.group, String(meta(o).name ?? ''), errs);
  hooks.validatingAdmission?.(rt, o, old, subresource ?? '');
}

/**
 * Create (POST). `body` is consumed (mutated). Returns the stored object in `rt`'s shape.
 * @throws ApiStatusError 400 (namespace mismatch), 404 (namespace missing), 409 AlreadyExists, 422 Invalid.
 */
export function createObject(
  reg: RegistryOps,
  rt: ResourceType,
  namespace: string | undefined,
  body: KObject,
  opts: WriteOptions,
  managed?: (obj: KObject, time: string) => ManagedFieldsEntry[],
): KObject {
  const m = meta(body);
  if (rt.namespaced) {
    if (m.namespace && namespace && m.namespace !== namespace)
      throw badRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    m.namespace = namespace;
  } else delete m.namespace;
  checkNamespace(reg.store, rt, namespace, typeof m.name === 'string' ? m.name : undefined);
  if (
    m.resourceVersion !== undefined &&
    m.resourceVersion !== '' &&
    /^\d+$/.test(String(m.resourceVersion)) &&
    String(m.resourceVersion) !== '0'
  )
    throw new ApiStatusError({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'resourceVersion should not be set on objects to be created',
      code: 500,
    });
  delete m.resourceVersion;
  if ((!m.name || m.name === '') && typeof m.generateName === 'string' && m.generateName) {
    m.name = generateName(m.generateName);
    for (
      let tries = 0;
      tries < 8 && reg.store.get(rt.storageKey, storageKeyOf(rt, namespace, m.name as string));
      tries++
    )
      m.name = generateName(m.generateName);
  }
  delete m.uid;
  delete m.deletionTimestamp;
  delete m.deletionGracePeriodSeconds;
  delete m.managedFields;
  delete m.selfLink;
  const now = nowTimestamp();
  m.creationTimestamp = now;
  if (rt.hasGeneration) m.generation = 1;
  else delete m.generation;
  if (rt.statusSubresource && rt.crdName !== undefined) delete body.status;
  rt.defaults?.(body);
  validateObject(reg.hooks, rt, body, undefined);
  rt.canonicalize?.(body);
  const name = m.name as string;
  const key = storageKeyOf(rt, namespace, name);
  const existing = reg.store.get(rt.storageKey, key);
  if (existing)
    throw alreadyExists(
      rt.resource,
      rt.group,
      name,
      !!(existing.obj.metadata as Record<string, unknown>).deletionTimestamp,
    );
  m.uid = randomUUID();
  m.managedFields = managed
    ? managed(body, now)
    : updateManagedFields(rt, undefined, body, opts.fieldManager, apiVersionOf(rt), now, opts.subresource);
  if ((m.managedFields as unknown[]).length === 0) delete m.managedFields;
  rt.admit?.(body);
  const obj = normalize(rt, body);
  if (opts.dryRun) return obj;
  const entry = reg.store.put(rt.storageKey, key, toStorage(rt, obj));
  reg.hooks.afterCreate?.(rt, entry.obj);
  return reg.view(rt, entry) as KObject;
}

/**
 * @internal The common tail of update/patch/apply: merge server-owned fields, validate, generation, store.
 */
export function writeExisting(
  reg: RegistryOps,
  rt: ResourceType,
  namespace: string | undefined,
  name: string,
  cur: Entry,
  body: KObject,
  opts: WriteOptions,
  managed?: (next: KObject, time: string) => ManagedFieldsEntry[],
): KObject {
  const old = reg.view(rt, cur) as KObject;
  const oldMeta = old.metadata as Record<string, unknown>;
  let next: KObject;
  const now = nowTimestamp();
  if (opts.subresource === 'status') {
    next = structuredClone(old) as KObject;
    if (body.status !== undefined) next.status = structuredClone(body.status);
    else delete next.status;
    if (rt.statusWritesMetadata) {
      const bm = meta(body);
      const nm = meta(next);
      for (const k of ['labels', 'annotations']) {
        if (bm[k] !== undefined && bm[k] !== null) nm[k] = structuredClone(bm[k]);
        else delete nm[k];
      }
    }
  } else {
    next = body;
    const m = meta(next);
    if (rt.namespaced) m.namespace = namespace;
    else delete m.namespace;
    m.name = name;
    if (rt.statusSubresource) {
      if (old.status !== undefined) next.status = structuredClone(old.status);
      else delete next.status;
    }
    if (m.uid !== undefined && m.uid !== '' && m.uid !== oldMeta.uid)
      throw conflict(
        rt.resource,
        rt.group,
        name,
        `Precondition failed: UID in precondition: ${String(m.uid)}, UID in object meta: ${String(oldMeta.uid)}`,
      );
    rt.defaults?.(next);
  }
  const m = meta(next);
  m.uid = oldMeta.uid;
  m.creationTimestamp = oldMeta.creationTimestamp;
  m.name = name;
  if (oldMeta.generateName !== undefined && m.generateName === undefined)
    m.generateName = oldMeta.generateName;
  if (oldMeta.deletionTimestamp !== undefined) {
    m.deletionTimestamp = oldMeta.deletionTimestamp;
    m.deletionGracePeriodSeconds = oldMeta.deletionGracePeriodSeconds;
  } else {
    delete m.deletionTimestamp;
    delete m.deletionGracePeriodSeconds;
  }
  if (rt.hasGeneration) {
    let gen = Number(oldMeta.generation ?? 1);
    if (opts.subresource !== 'status' && specChanged(rt, old, next)) gen += 1;
    m.generation = gen;
  } else delete m.generation;
  m.resourceVersion = oldMeta.resourceVersion;
  validateObject(reg.hooks, rt, next, old, opts.subresource);
  rt.canonicalize?.(next);
  const mf = managed
    ? managed(next, now)
    : updateManagedFields(rt, old, next, opts.fieldManager, apiVersionOf(rt), now, opts.subresource);
  m.managedFields = mf;
  if (mf.length === 0) delete m.managedFields;
  const normalized = normalize(rt, next);
  if (sameIgnoringManagedTimes(old, normalized)) return old;
  const fins = (normalized.metadata as Record<string, unknown>).finalizers;
  const finishing = !!oldMeta.deletionTimestamp && (!Array.isArray(fins) || fins.length === 0);
  if (opts.dryRun) return normalized;
  if (finishing) {
    const last = reg.store.remove(
      rt.storageKey,
      storageKeyOf(rt, namespace, name),
      toStorage(rt, normalized),
    );
    if (last) reg.hooks.afterDelete?.(rt, last.obj);
    return last ? (reg.view(rt, last) as KObject) : normalized;
  }
  const entry = reg.store.put(rt.storageKey, storageKeyOf(rt, namespace, name), toStorage(rt, normalized));
  reg.hooks.afterUpdate?.(rt, entry.obj);
  return reg.view(rt, entry) as KObject;
}

/**
 * Server-side apply on top of the registry's writes: plan field ownership (managed-fields.ts), refuse
 * conflicts with the server's 409 message and FieldManagerConflict causes unless forced, merge, store.
 */
import { ApiStatusError, badRequest, failureStatus } from '../errors.js';
import { conflictMessage, planApply, printManager } from '../managed-fields/apply.js';
import { removePath } from '../managed-fields/field-set.js';
import { applyMerge } from '../patch.js';
import { apiVersionOf, type KObject, type ResourceType } from '../resource-type.js';
import { isObj, meta, storageKeyOf } from './object-meta.js';
import type { RegistryOps, WriteOptions } from './types.js';
import { createObject, writeExisting } from './write.js';

/**
 * Server-side apply (protocol §7.4): create when missing (201), else merge with field ownership.
 * @throws ApiStatusError 409 with FieldManagerConflict causes when not forced.
 */
export function applyObject(
  reg: RegistryOps,
  rt: ResourceType,
  namespace: string | undefined,
  name: string,
  config: KObject,
  opts: WriteOptions & { force: boolean },
): { object: KObject; created: boolean } {
  const cm = isObj(config.metadata) ? config.metadata : {};
  if (config.apiVersion !== apiVersionOf(rt) || config.kind !== rt.kind)
    throw badRequest(
      `the API version in the data (${String(config.apiVersion ?? '')}) does not match the expected API version (${apiVersionOf(rt)})`,
    );
  if (cm.name !== undefined && cm.name !== name)
    throw badRequest(
      `the name of the object (${String(cm.name)}) does not match the name on the URL (${name})`,
    );
  if (rt.namespaced && cm.namespace && namespace && cm.namespace !== namespace)
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  const key = storageKeyOf(rt, namespace, name);
  const cur = reg.store.get(rt.storageKey, key);
  const cfg = structuredClone(config);
  const cfgMeta = meta(cfg);
  for (const k of ['resourceVersion', 'uid', 'creationTimestamp', 'managedFields', 'generation'])
    delete cfgMeta[k];
  if (!cur) {
    const plan = planApply(rt, undefined, cfg, opts.fieldManager, opts.force, opts.subresource);
    const body = structuredClone(cfg);
    meta(body).name = name;
    // one write: the create records the Apply entry directly (watchers see a single ADDED)
    const object = createObject(reg, rt, namespace, body, opts, (obj, time) =>
      plan.finish(obj, apiVersionOf(rt), time),
    );
    return { object, created: true };
  }
  const live = structuredClone(reg.view(rt, cur)) as KObject;
  const plan = planApply(rt, live, cfg, opts.fieldManager, opts.force, opts.subresource);
  if (plan.conflicts.length > 0) {
    // apiserver NewConflictError: the message lists the managers, one FieldManagerConflict cause per field
    throw new ApiStatusError(
      failureStatus(409, 'Conflict', conflictMessage(plan.conflicts), {
        causes: plan.conflicts.map((c) => ({
          reason: 'FieldManagerConflict',
          message: `conflict with ${printManager(c)}`,
          field: c.field,
        })),
      }),
    );
  }
  let merged: KObject;
  if (opts.subresource === 'status')
    merged = { ...live, status: applyMerge(rt, live.status, cfg.status, 'status') };
  else {
    const cfgNoStatus = rt.statusSubresource ? (({ status: _s, ...r }) => r)(cfg) : cfg;
    merged = applyMerge(rt, live, cfgNoStatus) as KObject;
  }
  for (const p of plan.removed) removePath(merged, p);
  delete merged.kind;
  delete merged.apiVersion;
  const object = writeExisting(reg, rt, namespace, name, cur, merged, opts, (next, time) =>
    plan.finish(next, apiVersionOf(rt), time),
  );
  return { object, created: false };
}

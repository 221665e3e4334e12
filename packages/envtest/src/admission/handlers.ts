/**
 * Where the write handlers call admission, in kube-apiserver's order: decode, mutating webhooks, the
 * registry's defaulting and validation (run as a dry-run write, so schema validation sees the mutated
 * object), validating webhooks on the object as it would be stored, then the write itself. Only used when
 * a webhook configuration exists; without one the handlers write as before.
 */
import { isObj, type ResourceRequest } from '../handlers/context.js';
import type { WriteOptions } from '../registry.js';
import { apiVersionOf, type KObject } from '../resource-type.js';
import { convertForAllVersions, convertObject, withConversions } from './conversion.js';
import type { AdmissionAttributes } from './webhook-admission.js';

type Op = AdmissionAttributes['operation'];

function typed(r: ResourceRequest, o: KObject | undefined): KObject | undefined {
  if (!o) return undefined;
  return { ...o, apiVersion: apiVersionOf(r.rt), kind: r.rt.kind };
}

function attrs(
  r: ResourceRequest,
  operation: Op,
  name: string,
  object: KObject | undefined,
  oldObject: KObject | undefined,
  dryRun: boolean,
  fieldManager?: string,
): AdmissionAttributes {
  const kind =
    operation === 'CREATE' ? 'CreateOptions' : operation === 'UPDATE' ? 'UpdateOptions' : 'DeleteOptions';
  return {
    rt: r.rt,
    operation,
    namespace: r.ns,
    name,
    subResource: r.sub,
    object: typed(r, object),
    oldObject: typed(r, oldObject),
    dryRun,
    user: r.env.user,
    // a webhook whose rule names another version of a CRD gets the object through the CRD's conversion
    convert: (o, apiVersion) => convertObject(r, o, apiVersion),
    options: {
      apiVersion: 'meta.k8s.io/v1',
      kind,
      ...(dryRun ? { dryRun: ['All'] } : {}),
      // only a fieldManager the client gave: the real server's options carry no defaulted one (recorded, 1.32)
      ...(fieldManager && r.q.has('fieldManager') && operation !== 'DELETE' ? { fieldManager } : {}),
    },
  };
}

/** Whether this request goes through webhook admission. */
export function admissionActive(r: ResourceRequest): boolean {
  return r.env.admission?.active(r.rt) === true || r.rt.conversion !== undefined;
}

function metaOf(o: KObject): Record<string, unknown> {
  if (!isObj(o.metadata)) o.metadata = {};
  return o.metadata as Record<string, unknown>;
}

/** create: returns the body to store (mutated; with the generated name the validating webhooks saw). */
export async function admitCreate(r: ResourceRequest, body: KObject, opts: WriteOptions): Promise<KObject> {
  const adm = r.env.admission;
  if (!adm) return body;
  const m = metaOf(body);
  if (r.rt.namespaced && r.ns && !m.namespace) m.namespace = r.ns;
  // kube-apiserver defaults at decode, before mutating admission
  r.rt.defaults?.(body);
  const name = String(m.name ?? '');
  const mutated =
    (await adm.mutate(
      attrs(r, 'CREATE', name, body, undefined, !!opts.dryRun, opts.fieldManager),
      r.warnings,
    )) ?? body;
  const candidate = await withConversions(r, () =>
    r.env.registry.create(r.rt, r.ns, structuredClone(mutated), { ...opts, dryRun: true }),
  );
  await convertForAllVersions(r, candidate);
  const finalName = String(metaOf(candidate).name ?? name);
  await adm.validate(
    attrs(r, 'CREATE', finalName, candidate, undefined, !!opts.dryRun, opts.fieldManager),
    r.warnings,
  );
  const out = structuredClone(mutated);
  if (!metaOf(out).name) metaOf(out).name = finalName;
  return out;
}

/** update (PUT): returns the body to store. A missing object that the kind creates on update is a CREATE. */
export async function admitUpdate(
  r: ResourceRequest,
  name: string,
  body: KObject,
  opts: WriteOptions,
): Promise<KObject> {
  const adm = r.env.admission;
  if (!adm) return body;
  const { registry } = r.env;
  let old: KObject | undefined;
  try {
    old = structuredClone(registry.view(r.rt, registry.get(r.rt, r.ns, name))) as KObject;
  } catch {
    old = undefined;
  }
  const op: Op = old ? 'UPDATE' : 'CREATE';
  const m = metaOf(body);
  if (r.rt.namespaced && r.ns && !m.namespace) m.namespace = r.ns;
  r.rt.defaults?.(body);
  const mutated =
    (await adm.mutate(attrs(r, op, name, body, old, !!opts.dryRun, opts.fieldManager), r.warnings)) ?? body;
  const candidate = (
    await withConversions(r, () =>
      registry.update(r.rt, r.ns, name, structuredClone(mutated), { ...opts, dryRun: true }),
    )
  ).object;
  await convertForAllVersions(r, candidate);
  await adm.validate(attrs(r, op, name, candidate, old, !!opts.dryRun, opts.fieldManager), r.warnings);
  return structuredClone(mutated);
}

/**
 * patch (JSON, merge, strategic): the patched object goes through admission as an UPDATE and is stored as an
 * update conditioned on the resourceVersion it was computed from; a write in between retries the whole
 * sequence, as the API server's GuaranteedUpdate loop does.
 */
export async function admitPatch(
  r: ResourceRequest,
  name: string,
  applyPatch: (current: KObject) => KObject,
  opts: WriteOptions,
): Promise<KObject> {
  const adm = r.env.admission;
  const { registry } = r.env;
  for (let attempt = 0; ; attempt++) {
    const entry = registry.get(r.rt, r.ns, name);
    const old = structuredClone(registry.view(r.rt, entry)) as KObject;
    const patched = await withConversions(r, () =>
      registry.patch(r.rt, r.ns, name, applyPatch, { ...opts, dryRun: true }),
    );
    const mutated =
      (await adm?.mutate(
        attrs(r, 'UPDATE', name, patched, old, !!opts.dryRun, opts.fieldManager),
        r.warnings,
      )) ?? patched;
    const body = structuredClone(mutated);
    const m = metaOf(body);
    m.resourceVersion = String(entry.rv);
    delete m.managedFields;
    const candidate = (
      await withConversions(r, () =>
        registry.update(r.rt, r.ns, name, structuredClone(body), { ...opts, dryRun: true }),
      )
    ).object;
    await convertForAllVersions(r, candidate);
    await adm?.validate(
      attrs(r, 'UPDATE', name, candidate, old, !!opts.dryRun, opts.fieldManager),
      r.warnings,
    );
    if (opts.dryRun) return candidate;
    try {
      return registry.update(r.rt, r.ns, name, body, opts).object;
    } catch (e) {
      const code = (e as { httpCode?: number }).httpCode;
      if (code !== 409 || attempt >= 4) throw e;
    }
  }
}

/**
 * server-side apply: the applied object goes through admission (CREATE when it creates). A mutating
 * webhook's change is written as a second update after the apply (envtest cannot fold it into the apply's
 * field ownership), so such an apply produces two watch events where the real server produces one.
 */
export async function admitApply(
  r: ResourceRequest,
  name: string,
  doApply: (dryRun: boolean) => { object: KObject; created: boolean },
  opts: WriteOptions,
): Promise<{ object: KObject; created: boolean }> {
  const adm = r.env.admission;
  const { registry } = r.env;
  let old: KObject | undefined;
  try {
    old = structuredClone(registry.view(r.rt, registry.get(r.rt, r.ns, name))) as KObject;
  } catch {
    old = undefined;
  }
  const dry = await withConversions(r, () => doApply(true));
  const op: Op = dry.created ? 'CREATE' : 'UPDATE';
  const mutated =
    (await adm?.mutate(attrs(r, op, name, dry.object, old, !!opts.dryRun, opts.fieldManager), r.warnings)) ??
    dry.object;
  const changed = JSON.stringify(typed(r, mutated)) !== JSON.stringify(typed(r, dry.object));
  await convertForAllVersions(r, mutated);
  await adm?.validate(attrs(r, op, name, mutated, old, !!opts.dryRun, opts.fieldManager), r.warnings);
  if (opts.dryRun) return { object: mutated, created: dry.created };
  const applied = doApply(false);
  if (!changed) return applied;
  const body = structuredClone(mutated);
  const m = metaOf(body);
  m.resourceVersion = String(metaOf(applied.object).resourceVersion);
  delete m.managedFields;
  return { object: registry.update(r.rt, r.ns, name, body, opts).object, created: applied.created };
}

/** delete: the object being deleted goes to the webhooks as `oldObject` (mutating webhooks cannot change it). */
export async function admitDelete(r: ResourceRequest, name: string, dryRun: boolean): Promise<void> {
  const adm = r.env.admission;
  if (!adm) return;
  const { registry } = r.env;
  const old = structuredClone(registry.view(r.rt, registry.get(r.rt, r.ns, name))) as KObject;
  const a = attrs(r, 'DELETE', name, undefined, old, dryRun);
  await adm.mutate(a, r.warnings);
  await adm.validate(a, r.warnings);
}

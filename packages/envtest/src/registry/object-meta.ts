/**
 * ObjectMeta as every kind's storage strategy treats it: timestamps, generated names, storage keys, the
 * server's key order, and the metadata validation common to all kinds (apimachinery
 * `api/validation/objectmeta.go`).
 */
import { Buffer } from 'node:buffer';
import { type NameRule, nameErrors } from '../builtin-resources.js';
import { type FieldError, fieldForbidden, fieldInvalid, fieldRequired, fieldTooLong } from '../errors.js';
import { validateLabelValue, validateQualifiedName } from '../label-selector.js';
import { apiVersionOf, type KObject, OBJECT_META_FIELDS, type ResourceType } from '../resource-type.js';

/** RFC 3339 UTC with second precision, as Kubernetes timestamps are. */
export function nowTimestamp(ms = Date.now()): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** generateName: prefix (≤58) + 5 random chars from the apiserver alphabet. */
export function generateName(prefix: string): string {
  let s = prefix.length > 58 ? prefix.slice(0, 58) : prefix;
  for (let i = 0; i < 5; i++) s += NAME_ALPHABET[Math.floor(Math.random() * NAME_ALPHABET.length)];
  return s;
}

export function storageKeyOf(rt: ResourceType, namespace: string | undefined, name: string): string {
  return rt.namespaced ? `${namespace ?? ''}/${name}` : name;
}

export function isObj(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * ObjectMeta's maps and lists are `omitempty` upstream: an empty `labels`, `annotations`, `ownerReferences` or
 * `finalizers` left by a patch is not stored or returned (kubectl diff patches `annotations: {}` in).
 */
function emptyOmitted(key: string, v: unknown): boolean {
  if (key !== 'labels' && key !== 'annotations' && key !== 'ownerReferences' && key !== 'finalizers')
    return false;
  if (Array.isArray(v)) return v.length === 0;
  return isObj(v) && Object.keys(v).length === 0;
}

export function meta(o: KObject): Record<string, unknown> {
  if (!isObj(o.metadata)) o.metadata = {};
  return o.metadata as Record<string, unknown>;
}

/** Put kind/apiVersion first and metadata keys in the server's order. */
export function normalize(rt: ResourceType, o: KObject): KObject {
  const m = meta(o);
  const order = OBJECT_META_FIELDS;
  const nm: Record<string, unknown> = {};
  for (const k of order) if (m[k] !== undefined && !emptyOmitted(k, m[k])) nm[k] = m[k];
  for (const [k, v] of Object.entries(m)) if (!(k in nm) && !order.includes(k) && v !== undefined) nm[k] = v;
  const { kind: _k, apiVersion: _a, metadata: _m, ...rest } = o;
  return { kind: rt.kind, apiVersion: apiVersionOf(rt), metadata: nm, ...rest };
}

/** The stored form of an object (events.k8s.io Events are stored as core Events). */
export function toStorage(rt: ResourceType, o: KObject): KObject {
  return rt.toStorage ? rt.toStorage(o) : o;
}

/** Validate metadata common to all kinds. */
export function validateMeta(rt: ResourceType, o: KObject, old: KObject | undefined): FieldError[] {
  const m = meta(o);
  const errs: FieldError[] = [];
  const name = m.name;
  // the name function each kind's ValidateObjectMeta call gets upstream: Service ValidateServiceName
  // (DNS-1035 label), Namespace ValidateNamespaceName (DNS-1123 label), RBAC kinds ValidateRBACName (a path
  // segment: system:controller:... is valid), most kinds and custom resources a DNS-1123 subdomain; CRDs
  // check their name against spec.names themselves. One cause per message.
  const checked = rt.crdName !== undefined || rt.resource !== 'customresourcedefinitions';
  const rule: NameRule =
    rt.crdName === undefined && rt.group === '' && rt.resource === 'services'
      ? 'dns1035'
      : rt.crdName === undefined && rt.group === '' && rt.resource === 'namespaces'
        ? 'label'
        : rt.crdName === undefined && rt.group === 'rbac.authorization.k8s.io'
          ? 'path'
          : 'subdomain';
  const generateName = m.generateName;
  if (!old && checked && typeof generateName === 'string' && generateName !== '') {
    // the name function's prefix form, reported before the generated name's own errors
    for (const msg of nameErrors(generateName, rule, true))
      errs.push(fieldInvalid('metadata.generateName', generateName, msg));
  }
  if (typeof name !== 'string' || name === '') {
    errs.push(fieldRequired('metadata.name', 'name or generateName is required'));
  } else if (!old && checked) {
    for (const msg of nameErrors(name, rule)) errs.push(fieldInvalid('metadata.name', name, msg));
  }
  const labels = m.labels;
  if (labels !== undefined && labels !== null) {
    if (!isObj(labels)) errs.push(fieldInvalid('metadata.labels', labels, 'must be a map'));
    else
      for (const [k, v] of Object.entries(labels)) {
        for (const msg of validateQualifiedName(k)) errs.push(fieldInvalid('metadata.labels', k, msg));
        if (typeof v !== 'string') errs.push(fieldInvalid(`metadata.labels`, v, 'must be a string'));
        else for (const msg of validateLabelValue(v)) errs.push(fieldInvalid('metadata.labels', v, msg));
      }
  }
  const ann = m.annotations;
  if (isObj(ann)) {
    let total = 0;
    for (const [k, v] of Object.entries(ann)) {
      for (const msg of validateQualifiedName(k.toLowerCase()))
        errs.push(fieldInvalid('metadata.annotations', k, msg));
      // Go's len() counts UTF-8 bytes (apimachinery ValidateAnnotationsSize).
      total += Buffer.byteLength(k, 'utf8') + Buffer.byteLength(String(v), 'utf8');
    }
    if (total > 262144) errs.push(fieldTooLong('metadata.annotations', 262144));
  }
  const fins = m.finalizers;
  if (fins !== undefined && fins !== null) {
    if (!Array.isArray(fins)) errs.push(fieldInvalid('metadata.finalizers', fins, 'must be a list'));
    else {
      fins.forEach((f, i) => {
        if (typeof f !== 'string')
          errs.push(fieldInvalid(`metadata.finalizers[${i}]`, f, 'must be a string'));
        else
          for (const msg of validateQualifiedName(f))
            errs.push(fieldInvalid(`metadata.finalizers[${i}]`, f, msg));
      });
      const oldFins = old ? ((meta(old).finalizers as string[] | undefined) ?? []) : [];
      if (old && meta(old).deletionTimestamp) {
        const added = fins.filter((f) => !oldFins.includes(f as string));
        if (added.length > 0)
          errs.push(
            fieldForbidden(
              'metadata.finalizers',
              `no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((a) => JSON.stringify(a)).join(', ')}}`,
            ),
          );
      }
    }
  }
  const owners = m.ownerReferences;
  if (Array.isArray(owners)) {
    if (owners.filter((r) => isObj(r) && r.controller === true).length > 1)
      errs.push(
        fieldInvalid(
          'metadata.ownerReferences',
          owners,
          'Only one reference can have Controller set to true',
        ),
      );
    owners.forEach((r, i) => {
      const ro = isObj(r) ? r : {};
      for (const f of ['apiVersion', 'kind', 'name', 'uid'])
        if (!ro[f])
          errs.push(
            fieldInvalid(`metadata.ownerReferences[${i}].${f}`, ro[f] ?? '', `${f} must not be empty`),
          );
    });
  }
  return errs;
}

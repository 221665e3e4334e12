/**
 * The generic registry: create / get / list / update / patch / delete semantics over the store, as
 * apiserver's `pkg/registry/generic/registry/store.go` and the per-kind strategies define them
 * (protocol §3, §4, §5, §8, §9).
 */
import { randomUUID } from 'node:crypto';
import { DNS1123_SUBDOMAIN_MSG, validateName } from './builtin-resources.js';
import {
  ApiStatusError,
  alreadyExists,
  badRequest,
  conflict,
  expired,
  type FieldError,
  failureStatus,
  fieldForbidden,
  fieldInvalid,
  fieldRequired,
  fieldTooLong,
  invalid,
  notFound,
  OPTIMISTIC_LOCK_MSG,
  timeoutError,
} from './errors.js';
import { type FieldSelector, parseFieldSelector } from './field-selector.js';
import {
  type LabelSelector,
  parseLabelSelector,
  validateLabelValue,
  validateQualifiedName,
} from './label-selector.js';
import { type ManagedFieldsEntry, planApply, removePath, updateManagedFields } from './managed-fields.js';
import { applyMerge } from './patch.js';
import { apiVersionOf, type KObject, OBJECT_META_FIELDS, type ResourceType } from './resource-type.js';
import { compareKeys, type Entry, ExpiredError, type Snapshot, type Store } from './store.js';

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

function isObj(v: unknown): v is Record<string, unknown> {
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

function meta(o: KObject): Record<string, unknown> {
  if (!isObj(o.metadata)) o.metadata = {};
  return o.metadata as Record<string, unknown>;
}

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
  afterDelete?(rt: ResourceType, obj: Readonly<KObject>): void;
  afterUpdate?(rt: ResourceType, obj: Readonly<KObject>): void;
  /** Validate a create/update beyond the kind's own validation. */
  validate?(rt: ResourceType, obj: KObject, old: KObject | undefined): FieldError[];
  /** All served resource types (for namespace cleanup). */
  allTypes(): readonly ResourceType[];
}

function encodeContinue(rv: number, start: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start: `${start}\u0000` })).toString(
    'base64url',
  );
}

function decodeContinue(token: string): { rv: number; start: string } {
  try {
    const raw = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as {
      v?: string;
      rv?: number;
      start?: string;
    };
    if (raw.v !== 'meta.k8s.io/v1' || typeof raw.rv !== 'number' || typeof raw.start !== 'string')
      throw new Error('bad');
    return { rv: raw.rv, start: raw.start };
  } catch {
    throw badRequest(
      'continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)',
    );
  }
}

function lowerBound(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareKeys(keys[mid]!, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function listOptionsInvalid(
  field: string,
  value: unknown,
  detail: string,
  forbidden = false,
): ApiStatusError {
  const err: FieldError = forbidden
    ? { type: 'FieldValueForbidden', field, detail: `Forbidden: ${detail}` }
    : fieldInvalid(field, value, detail);
  return invalid('ListOptions', 'meta.k8s.io', '', [err]);
}

const CONTINUE_EXPIRED =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

/** Parse a numeric resourceVersion or answer 400 like the API server. */
export function parseRv(rv: string): number {
  if (!/^\d+$/.test(rv)) throw badRequest(`invalid resource version: ${JSON.stringify(rv)}`);
  return Number(rv);
}

/** The generic registry over one store. */
export class Registry {
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
  selectors(rt: ResourceType, labelSelector?: string | null, fieldSelector?: string | null) {
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
  async waitForRv(rv: number): Promise<void> {
    const deadline = Date.now() + 3000;
    while (this.store.rv < rv) {
      if (Date.now() >= deadline)
        throw timeoutError(`Too large resource version: ${rv}, current: ${this.store.rv}`, 1, [
          { reason: 'ResourceVersionTooLarge', message: 'Too large resource version' },
        ]);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /**
   * List with selectors, paging and resourceVersion semantics.
   * @throws ApiStatusError 400 (selectors, continue), 410 (expired RV/continue), 422 (option validation), 504.
   */
  async list(rt: ResourceType, opts: ListOptions): Promise<ListResult> {
    const rvParam = opts.resourceVersion ?? '';
    const match = opts.resourceVersionMatch ?? '';
    if (match) {
      if (!rvParam)
        throw listOptionsInvalid(
          'resourceVersionMatch',
          match,
          'resourceVersionMatch is forbidden unless resourceVersion is provided',
          true,
        );
      if (opts.continueToken)
        throw listOptionsInvalid(
          'resourceVersionMatch',
          match,
          'resourceVersionMatch is forbidden when continue is provided',
          true,
        );
      if (match !== 'Exact' && match !== 'NotOlderThan')
        throw listOptionsInvalid('resourceVersionMatch', match, 'must be one of "Exact", "NotOlderThan"');
      if (match === 'Exact' && rvParam === '0')
        throw listOptionsInvalid(
          'resourceVersionMatch',
          match,
          'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
          true,
        );
    }
    if (opts.continueToken && rvParam && rvParam !== '0')
      throw listOptionsInvalid(
        'resourceVersion',
        rvParam,
        'specifying resource version is not allowed when using continue',
        true,
      );
    const sel = this.selectors(rt, opts.labelSelector, opts.fieldSelector);

    let snap: Snapshot;
    let startKey = '';
    if (opts.continueToken) {
      const tok = decodeContinue(opts.continueToken);
      startKey = tok.start;
      try {
        snap = this.store.snapshot(rt.storageKey, tok.rv < 0 ? undefined : tok.rv);
      } catch (e) {
        if (e instanceof ExpiredError)
          throw expired(
            CONTINUE_EXPIRED,
            encodeContinue(-1, tok.start.endsWith('\u0000') ? tok.start.slice(0, -1) : tok.start),
          );
        throw e;
      }
    } else if (rvParam && rvParam !== '0') {
      const n = parseRv(rvParam);
      // kube-apiserver's legacy paging rule: a resourceVersion with a limit and no resourceVersionMatch is an
      // exact read (storage/cacher delegates it to etcd at that revision), so it returns the old state at N
      // with list RV N, or 410 when N was compacted (protocol §5, measured on 1.32).
      const limited = opts.limit !== undefined && opts.limit > 0;
      if (match === 'Exact' || (match === '' && limited)) {
        if (n > this.store.rv) await this.waitForRv(n);
        try {
          snap = this.store.snapshot(rt.storageKey, n);
        } catch (e) {
          if (e instanceof ExpiredError)
            throw expired('The resourceVersion for the provided list is too old.');
          throw e;
        }
      } else {
        if (n > this.store.rv) await this.waitForRv(n);
        snap = this.store.snapshot(rt.storageKey);
      }
    } else {
      snap = this.store.snapshot(rt.storageKey);
    }

    const keys = snap.keys;
    const prefix = rt.namespaced && opts.namespace ? `${opts.namespace}/` : '';
    let i = lowerBound(keys, prefix);
    if (startKey) i = Math.max(i, lowerBound(keys, startKey));
    const end = prefix ? lowerBound(keys, `${prefix.slice(0, -1)}0`) : keys.length;
    const limit = opts.limit && opts.limit > 0 && rvParam !== '0' ? opts.limit : Number.POSITIVE_INFINITY;
    const out: Entry[] = [];
    for (; i < end; i++) {
      const e = snap.get(keys[i]!);
      if (!e) continue;
      if (!sel.empty && !sel.matches(e.obj as KObject)) continue;
      if (out.length >= limit) break;
      out.push(e);
    }
    if (out.length >= limit && i < end) {
      // is there any further match?
      let more = false;
      let j = i;
      if (sel.empty) more = true;
      else
        for (; j < end; j++) {
          const e = snap.get(keys[j]!);
          if (e && sel.matches(e.obj as KObject)) {
            more = true;
            break;
          }
        }
      if (more) {
        const last = out[out.length - 1]!;
        return {
          rv: snap.rv,
          entries: out,
          continueToken: encodeContinue(snap.rv, last.key),
          ...(sel.empty ? { remainingItemCount: end - i } : {}),
        };
      }
    }
    return { rv: snap.rv, entries: out };
  }

  #checkNamespace(rt: ResourceType, namespace: string | undefined): void {
    if (!rt.namespaced || !namespace) return;
    const ns = this.store.get('/namespaces', namespace);
    if (!ns) throw notFound('namespaces', '', namespace);
    if ((ns.obj.metadata as Record<string, unknown>).deletionTimestamp)
      throw new ApiStatusError(
        failureStatus(
          403,
          'Forbidden',
          `${rt.resource}${rt.group ? `.${rt.group}` : ''} is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`,
          {
            kind: rt.resource,
            group: rt.group,
            causes: [
              {
                reason: 'NamespaceTerminating',
                message: `namespace ${namespace} is being terminated`,
                field: 'metadata.namespace',
              },
            ],
          },
        ),
      );
  }

  /** Validate metadata common to all kinds. */
  #validateMeta(rt: ResourceType, o: KObject, old: KObject | undefined): FieldError[] {
    const m = meta(o);
    const errs: FieldError[] = [];
    const name = m.name;
    if (typeof name !== 'string' || name === '') {
      errs.push(fieldRequired('metadata.name', 'name or generateName is required'));
    } else if (!old) {
      const style = rt.resource === 'namespaces' || rt.resource === 'services' ? 'label' : 'subdomain';
      if (rt.crdName === undefined && rt.resource !== 'customresourcedefinitions') {
        const bad = validateName(name, style);
        if (bad) errs.push(fieldInvalid('metadata.name', name, bad));
      } else if (rt.crdName !== undefined) {
        const bad = validateName(name, 'subdomain');
        if (bad) errs.push(fieldInvalid('metadata.name', name, bad));
      }
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
        total += k.length + String(v).length;
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

  #validate(rt: ResourceType, o: KObject, old: KObject | undefined): void {
    const errs = [
      ...this.#validateMeta(rt, o, old),
      ...(rt.validate?.(o, old) ?? []),
      ...(this.hooks.validate?.(rt, o, old) ?? []),
    ];
    if (errs.length > 0) throw invalid(rt.kind, rt.group, String(meta(o).name ?? ''), errs);
  }

  /** Put kind/apiVersion first and metadata keys in the server's order. */
  #normalize(rt: ResourceType, o: KObject): KObject {
    const m = meta(o);
    const order = OBJECT_META_FIELDS;
    const nm: Record<string, unknown> = {};
    for (const k of order) if (m[k] !== undefined && !emptyOmitted(k, m[k])) nm[k] = m[k];
    for (const [k, v] of Object.entries(m))
      if (!(k in nm) && !order.includes(k) && v !== undefined) nm[k] = v;
    const { kind: _k, apiVersion: _a, metadata: _m, ...rest } = o;
    return { kind: rt.kind, apiVersion: apiVersionOf(rt), metadata: nm, ...rest };
  }

  #toStorage(rt: ResourceType, o: KObject): KObject {
    return rt.toStorage ? rt.toStorage(o) : o;
  }

  /**
   * Create (POST). `body` is consumed (mutated). Returns the stored object in `rt`'s shape.
   * @throws ApiStatusError 400 (namespace mismatch), 404 (namespace missing), 409 AlreadyExists, 422 Invalid.
   */
  create(
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
        tries < 8 && this.store.get(rt.storageKey, storageKeyOf(rt, namespace, m.name as string));
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
    this.#validate(rt, body, undefined);
    rt.canonicalize?.(body);
    this.#checkNamespace(rt, namespace);
    const name = m.name as string;
    const key = storageKeyOf(rt, namespace, name);
    const existing = this.store.get(rt.storageKey, key);
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
    const obj = this.#normalize(rt, body);
    if (opts.dryRun) return obj;
    const entry = this.store.put(rt.storageKey, key, this.#toStorage(rt, obj));
    this.hooks.afterCreate?.(rt, entry.obj);
    return this.view(rt, entry) as KObject;
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
    return { object: this.#write(rt, namespace, name, cur, body, opts), created: false };
  }

  /** The common tail of update/patch/apply: merge server-owned fields, validate, generation, store. */
  #write(
    rt: ResourceType,
    namespace: string | undefined,
    name: string,
    cur: Entry,
    body: KObject,
    opts: WriteOptions,
    managed?: (next: KObject, time: string) => ManagedFieldsEntry[],
  ): KObject {
    const old = this.view(rt, cur) as KObject;
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
    this.#validate(rt, next, old);
    rt.canonicalize?.(next);
    const mf = managed
      ? managed(next, now)
      : updateManagedFields(rt, old, next, opts.fieldManager, apiVersionOf(rt), now, opts.subresource);
    m.managedFields = mf;
    if (mf.length === 0) delete m.managedFields;
    const normalized = this.#normalize(rt, next);
    if (sameIgnoringManagedTimes(old, normalized)) return old;
    const fins = (normalized.metadata as Record<string, unknown>).finalizers;
    const finishing = !!oldMeta.deletionTimestamp && (!Array.isArray(fins) || fins.length === 0);
    if (opts.dryRun) return normalized;
    if (finishing) {
      const last = this.store.remove(
        rt.storageKey,
        storageKeyOf(rt, namespace, name),
        this.#toStorage(rt, normalized),
      );
      if (last) this.hooks.afterDelete?.(rt, last.obj);
      return last ? (this.view(rt, last) as KObject) : normalized;
    }
    const entry = this.store.put(
      rt.storageKey,
      storageKeyOf(rt, namespace, name),
      this.#toStorage(rt, normalized),
    );
    this.hooks.afterUpdate?.(rt, entry.obj);
    return this.view(rt, entry) as KObject;
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
    return this.#write(rt, namespace, name, cur, patched, opts);
  }

  /**
   * Server-side apply (protocol §7.4): create when missing (201), else merge with field ownership.
   * @throws ApiStatusError 409 with FieldManagerConflict causes when not forced.
   */
  apply(
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
      throw badRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    const key = storageKeyOf(rt, namespace, name);
    const cur = this.store.get(rt.storageKey, key);
    const cfg = structuredClone(config);
    const cfgMeta = meta(cfg);
    for (const k of ['resourceVersion', 'uid', 'creationTimestamp', 'managedFields', 'generation'])
      delete cfgMeta[k];
    if (!cur) {
      const plan = planApply(rt, undefined, cfg, opts.fieldManager, opts.force, opts.subresource);
      const body = structuredClone(cfg);
      meta(body).name = name;
      // one write: the create records the Apply entry directly (watchers see a single ADDED)
      const object = this.create(rt, namespace, body, opts, (obj, time) =>
        plan.finish(obj, apiVersionOf(rt), time),
      );
      return { object, created: true };
    }
    const live = structuredClone(this.view(rt, cur)) as KObject;
    const plan = planApply(rt, live, cfg, opts.fieldManager, opts.force, opts.subresource);
    if (plan.conflicts.length > 0) {
      const n = plan.conflicts.length;
      const byMgr = new Map<string, string[]>();
      for (const c of plan.conflicts) {
        const k = `"${c.manager}" using ${c.apiVersion}`;
        byMgr.set(k, [...(byMgr.get(k) ?? []), c.field]);
      }
      let msg: string;
      if (n === 1) {
        const c = plan.conflicts[0]!;
        msg = `Apply failed with 1 conflict: conflict with "${c.manager}" using ${c.apiVersion}: ${c.field}`;
      } else {
        msg = `Apply failed with ${n} conflicts: ${[...byMgr.entries()]
          .map(([k, fields]) => `conflicts with ${k}:\n${fields.map((f) => `- ${f}`).join('\n')}`)
          .join('\n')}`;
      }
      throw new ApiStatusError(
        failureStatus(409, 'Conflict', msg, {
          causes: plan.conflicts.map((c) => ({
            reason: 'FieldManagerConflict',
            message: `conflict with "${c.manager}" using ${c.apiVersion}`,
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
    const object = this.#write(rt, namespace, name, cur, merged, opts, (next, time) =>
      plan.finish(next, apiVersionOf(rt), time),
    );
    return { object, created: false };
  }

  /**
   * Delete one object (protocol §8): preconditions, finalizers (deletionTimestamp, MODIFIED), immediate
   * removal (DELETED). No garbage collection of dependents (like upstream envtest, which runs no
   * controller-manager).
   * @throws ApiStatusError 404, 409 precondition failures.
   */
  delete(rt: ResourceType, namespace: string | undefined, name: string, opts: DeleteOptions): DeleteResult {
    const key = storageKeyOf(rt, namespace, name);
    const cur = this.get(rt, namespace, name);
    const om = cur.obj.metadata as Record<string, unknown>;
    const pre = opts.preconditions;
    // the store's precondition check words it with the Kind (apiserver registry/generic/registry/store.go)
    if (pre?.uid && pre.uid !== om.uid)
      throw conflict(
        rt.kind,
        rt.group,
        name,
        `the UID in the precondition (${pre.uid}) does not match the UID in record (${String(om.uid)}). The object might have been deleted and then recreated`,
      );
    if (pre?.resourceVersion && pre.resourceVersion !== om.resourceVersion)
      throw conflict(
        rt.kind,
        rt.group,
        name,
        `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${String(om.resourceVersion)}). The object might have been modified`,
      );
    if (om.deletionTimestamp) return { object: this.view(rt, cur) as KObject };
    const fins = om.finalizers;
    const now = nowTimestamp();
    const next = structuredClone(this.view(rt, cur)) as KObject;
    const nm = meta(next);
    if (Array.isArray(fins) && fins.length > 0) {
      nm.deletionTimestamp = now;
      nm.deletionGracePeriodSeconds = 0;
      if (rt.hasGeneration && typeof nm.generation === 'number') nm.generation += 1;
      const obj = this.#normalize(rt, next);
      if (opts.dryRun) return { object: obj };
      const entry = this.store.put(rt.storageKey, key, this.#toStorage(rt, obj));
      this.hooks.afterUpdate?.(rt, entry.obj);
      return { object: this.view(rt, entry) as KObject };
    }
    if (rt.returnDeletedObject) {
      nm.deletionTimestamp = now;
      nm.deletionGracePeriodSeconds = 0;
    }
    const finalObj = this.#normalize(rt, next);
    if (!opts.dryRun) {
      if (rt.resource === 'namespaces' && rt.group === '') this.#deleteNamespaceContents(name);
      if (rt.returnDeletedObject) {
        // graceful deletion with period 0: the object is first marked (MODIFIED), then removed (DELETED)
        const marked = this.store.put(rt.storageKey, key, this.#toStorage(rt, finalObj));
        this.hooks.afterUpdate?.(rt, marked.obj);
      }
      const last = this.store.remove(rt.storageKey, key, this.#toStorage(rt, structuredClone(finalObj)));
      if (last) this.hooks.afterDelete?.(rt, last.obj);
      if (rt.returnDeletedObject && last) return { object: this.view(rt, last) as KObject };
    }
    if (rt.returnDeletedObject) return { object: finalObj };
    return {
      status: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Success',
        details: { name, ...(rt.group ? { group: rt.group } : {}), kind: rt.resource, uid: om.uid },
      },
    };
  }

  /** Remove everything inside a namespace (objects with finalizers get a deletionTimestamp instead). */
  #deleteNamespaceContents(ns: string): void {
    const seen = new Set<string>();
    for (const rt of this.hooks.allTypes()) {
      if (!rt.namespaced || seen.has(rt.storageKey)) continue;
      seen.add(rt.storageKey);
      const snap = this.store.snapshot(rt.storageKey);
      const prefix = `${ns}/`;
      const keys = snap.keys.filter((k) => k.startsWith(prefix));
      for (const k of keys) {
        const e = snap.get(k);
        if (!e) continue;
        try {
          this.delete(rt, ns, e.name, {});
        } catch {
          // already gone
        }
      }
    }
  }

  /** deletecollection: delete every match; returns the deleted (or now terminating) objects. */
  async deleteCollection(
    rt: ResourceType,
    opts: ListOptions,
    del: DeleteOptions,
  ): Promise<{ rv: number; items: KObject[] }> {
    const res = await this.list(rt, { ...opts, limit: undefined, continueToken: undefined });
    const items: KObject[] = [];
    for (const e of res.entries) {
      try {
        const r = this.delete(rt, e.namespace, e.name, del);
        items.push(r.object ?? (this.view(rt, e) as KObject));
      } catch (err) {
        if (!(err instanceof ApiStatusError && err.httpCode === 404)) throw err;
      }
    }
    return { rv: this.store.rv, items };
  }
}

/** Did anything outside metadata (and status, when it is a subresource) change? */
export function specChanged(rt: ResourceType, a: KObject, b: KObject): boolean {
  const strip = (o: KObject) => {
    const { metadata: _m, kind: _k, apiVersion: _a, ...rest } = o;
    if (rt.statusSubresource) delete (rest as Record<string, unknown>).status;
    return rest;
  };
  return !deepEqual(strip(a), strip(b));
}

function sameIgnoringManagedTimes(a: KObject, b: KObject): boolean {
  const norm = (o: KObject) => {
    const m = { ...(o.metadata as Record<string, unknown>) };
    delete m.resourceVersion;
    if (Array.isArray(m.managedFields))
      m.managedFields = (m.managedFields as Record<string, unknown>[]).map(({ time: _t, ...r }) => r);
    return { ...o, metadata: m };
  };
  return deepEqual(norm(a), norm(b));
}

/** Structural JSON equality (key order ignored). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => deepEqual(x, bb[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
  if (ak.length !== bk.length) return false;
  return ak.every((k) => deepEqual(ao[k], bo[k]));
}

export { DNS1123_SUBDOMAIN_MSG };

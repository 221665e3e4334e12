/**
 * Serving resource requests: get / list / watch / create / update / patch / delete / deletecollection,
 * the status and scale subresources, content negotiation (JSON, YAML, Table, PartialObjectMetadata),
 * dryRun, fieldManager and fieldValidation (protocol §1, §5–§9, §11).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  ApiStatusError,
  badRequest,
  failureStatus,
  invalid,
  methodNotSupported,
  unsupportedMediaType,
} from './errors.js';
import type { RequestContext, WatchFaults, WatchWriter } from './faults.js';
import {
  baseHeaders,
  contentTypeOf,
  decodeBody,
  negotiate,
  type OutputFormat,
  readBody,
  sendBody,
  sendText,
} from './http.js';
import { jsonPatch, mergePatch, strategicMergePatch } from './patch.js';
import { decodeProtobufObject, ProtobufDecodeError } from './protobuf.js';
import type { DeleteOptions, Registry } from './registry.js';
import type { RequestInfo } from './request-info.js';
import {
  apiVersionOf,
  getPath,
  type KObject,
  OBJECT_META_FIELDS,
  type ResourceType,
  setPath,
} from './resource-type.js';
import type { Entry } from './store.js';
import { buildTable, type IncludeObject } from './table.js';
import { prepareWatch, serveWatch, type WatchSet } from './watch.js';

/** What the resource handler needs from the server. */
export interface HandlerEnv {
  readonly registry: Registry;
  readonly faults: { onWatchStart(ctx: RequestContext, writer: WatchWriter): WatchFaults };
  readonly watches: WatchSet;
  readonly bookmarkIntervalMs: number;
  readonly defaultWatchTimeoutMs: number;
}

const PATCH_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
];

function isObj(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Field manager of a write: `?fieldManager=` or the User-Agent up to the first `/`. */
function fieldManagerOf(req: IncomingMessage, q: URLSearchParams): string {
  const fm = q.get('fieldManager');
  if (fm) {
    if (fm.length > 128 || !/^[\x20-\x7e]+$/.test(fm))
      throw invalid('PatchOptions', 'meta.k8s.io', '', [
        {
          type: 'FieldValueInvalid',
          field: 'fieldManager',
          detail: `Invalid value: ${JSON.stringify(fm)}: must consist of printable characters and be at most 128 characters long`,
        },
      ]);
    return fm;
  }
  const ua = String(req.headers['user-agent'] ?? '');
  const m = ua.split('/')[0] ?? '';
  return m || 'unknown';
}

function dryRunOf(q: URLSearchParams): boolean {
  const all = q.getAll('dryRun');
  if (all.length === 0) return false;
  for (const v of all)
    if (v !== 'All') throw badRequest(`Invalid dry run value: ${JSON.stringify(v)}; supported values: "All"`);
  return true;
}

/** Decode a create/update body, check its type meta against the resource, apply fieldValidation. */
function decodeObject(
  rt: ResourceType,
  req: IncomingMessage,
  body: Buffer,
  q: URLSearchParams,
  warnings: string[],
): KObject {
  const ct = contentTypeOf(req);
  const accepted = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];
  let v: unknown;
  if (ct === 'application/vnd.kubernetes.protobuf') {
    // kubectl's generator commands (create namespace|configmap|secret) send protobuf
    try {
      v = decodeProtobufObject(body);
    } catch (e) {
      if (e instanceof ProtobufDecodeError) throw unsupportedMediaType(accepted);
      throw e;
    }
  } else {
    if (ct !== '' && ct !== 'application/json' && ct !== 'application/yaml' && ct !== '*/*')
      throw unsupportedMediaType(accepted);
    v = decodeBody(body, ct, `${rt.kind} in version "${rt.version}" cannot be handled as a ${rt.kind}`);
  }
  if (!isObj(v))
    throw badRequest(
      `${rt.kind} in version "${rt.version}" cannot be handled as a ${rt.kind}: Object 'Kind' is missing in '${body.toString('utf8').slice(0, 200)}'`,
    );
  const o = v as KObject;
  if (o.kind !== undefined && o.kind !== rt.kind && !(rt.fromStorage && o.kind === rt.kind))
    throw badRequest(
      `${rt.kind} in version "${rt.version}" cannot be handled as a ${rt.kind}: no kind "${String(o.kind)}" is registered for version "${String(o.apiVersion)}" in scheme`,
    );
  if (o.apiVersion !== undefined && o.apiVersion !== apiVersionOf(rt))
    throw badRequest(
      `the API version in the data (${String(o.apiVersion)}) does not match the expected API version (${apiVersionOf(rt)})`,
    );
  applyFieldValidation(rt, o, q, warnings);
  return o;
}

function fieldValidationMode(q: URLSearchParams): 'Strict' | 'Warn' | 'Ignore' {
  const v = q.get('fieldValidation');
  if (v === null || v === '') return 'Warn';
  if (v === 'Strict' || v === 'Warn' || v === 'Ignore') return v;
  throw badRequest(`fieldValidation parameter unsupported: ${JSON.stringify(v)}`);
}

function applyFieldValidation(rt: ResourceType, o: KObject, q: URLSearchParams, warnings: string[]): void {
  const mode = fieldValidationMode(q);
  const unknown = rt.unknownFields ? rt.unknownFields(o) : builtinUnknownFields(rt, o);
  if (unknown.length === 0) return;
  // decoding drops unknown fields unless Strict refuses them
  if (mode !== 'Strict') for (const u of unknown) deletePath(o, u.replace(/^\./, ''));
  if (mode === 'Ignore') return;
  if (mode === 'Strict') {
    const list = unknown.map((u) => `unknown field "${u.replace(/^\./, '')}"`);
    throw badRequest(
      `${rt.kind} in version "${rt.version}" cannot be handled as a ${rt.kind}: strict decoding error: ${list.join(', ')}`,
    );
  }
  for (const u of unknown)
    warnings.push(
      rt.crdName !== undefined
        ? `unknown field "${u.replace(/^\./, '')}"`
        : `unknown field "${u.replace(/^\./, '')}"`,
    );
}

const KNOWN_TOP: Record<string, readonly string[]> = {
  Pod: ['spec', 'status'],
  Namespace: ['spec', 'status'],
  ConfigMap: ['data', 'binaryData', 'immutable'],
  Secret: ['data', 'stringData', 'type', 'immutable'],
  Service: ['spec', 'status'],
  Deployment: ['spec', 'status'],
  Lease: ['spec'],
  CustomResourceDefinition: ['spec', 'status'],
};
const KNOWN_META = new Set(OBJECT_META_FIELDS);
const KNOWN_POD_SPEC = new Set([
  'volumes',
  'initContainers',
  'containers',
  'ephemeralContainers',
  'restartPolicy',
  'terminationGracePeriodSeconds',
  'activeDeadlineSeconds',
  'dnsPolicy',
  'nodeSelector',
  'serviceAccountName',
  'serviceAccount',
  'automountServiceAccountToken',
  'nodeName',
  'hostNetwork',
  'hostPID',
  'hostIPC',
  'shareProcessNamespace',
  'securityContext',
  'imagePullSecrets',
  'hostname',
  'subdomain',
  'affinity',
  'schedulerName',
  'tolerations',
  'hostAliases',
  'priorityClassName',
  'priority',
  'dnsConfig',
  'readinessGates',
  'runtimeClassName',
  'enableServiceLinks',
  'preemptionPolicy',
  'overhead',
  'topologySpreadConstraints',
  'setHostnameAsFQDN',
  'os',
  'hostUsers',
  'schedulingGates',
  'resourceClaims',
  'resources',
]);
const KNOWN_DEPLOY_SPEC = new Set([
  'replicas',
  'selector',
  'template',
  'strategy',
  'minReadySeconds',
  'revisionHistoryLimit',
  'paused',
  'progressDeadlineSeconds',
]);

function deletePath(o: Record<string, unknown>, dotted: string): void {
  // segments like `containers[0]` index into lists
  const parts = dotted.split('.');
  let cur: unknown = o;
  for (let i = 0; i < parts.length - 1; i++) {
    const m = /^(.*)\[(\d+)\]$/.exec(parts[i]!);
    if (!isObj(cur)) return;
    cur = m ? (cur[m[1]!] as unknown[] | undefined)?.[Number(m[2])] : cur[parts[i]!];
  }
  if (isObj(cur)) delete cur[parts[parts.length - 1]!];
}

const KNOWN_CONTAINER = new Set([
  'name',
  'image',
  'command',
  'args',
  'workingDir',
  'ports',
  'envFrom',
  'env',
  'resources',
  'resizePolicy',
  'restartPolicy',
  'volumeMounts',
  'volumeDevices',
  'livenessProbe',
  'readinessProbe',
  'startupProbe',
  'lifecycle',
  'terminationMessagePath',
  'terminationMessagePolicy',
  'imagePullPolicy',
  'securityContext',
  'stdin',
  'stdinOnce',
  'tty',
  'targetContainerName',
]);

function unknownContainerFields(podSpec: Record<string, unknown>, prefix: string): string[] {
  const out: string[] = [];
  for (const list of ['containers', 'initContainers', 'ephemeralContainers']) {
    const cs = podSpec[list];
    if (!Array.isArray(cs)) continue;
    cs.forEach((c, i) => {
      if (isObj(c))
        for (const k of Object.keys(c)) if (!KNOWN_CONTAINER.has(k)) out.push(`${prefix}.${list}[${i}].${k}`);
    });
  }
  return out;
}

/** Unknown top-level (and a few nested) fields of built-in kinds, for fieldValidation. */
function builtinUnknownFields(rt: ResourceType, o: KObject): string[] {
  const out: string[] = [];
  const top = KNOWN_TOP[rt.kind];
  if (top)
    for (const k of Object.keys(o)) if (!['kind', 'apiVersion', 'metadata', ...top].includes(k)) out.push(k);
  if (isObj(o.metadata))
    for (const k of Object.keys(o.metadata)) if (!KNOWN_META.has(k)) out.push(`metadata.${k}`);
  if (rt.kind === 'Pod' && isObj(o.spec)) {
    for (const k of Object.keys(o.spec)) if (!KNOWN_POD_SPEC.has(k)) out.push(`spec.${k}`);
    out.push(...unknownContainerFields(o.spec, 'spec'));
  }
  if (rt.kind === 'Deployment' && isObj(o.spec)) {
    for (const k of Object.keys(o.spec)) if (!KNOWN_DEPLOY_SPEC.has(k)) out.push(`spec.${k}`);
    const ps = getPath(o, 'spec.template.spec');
    if (isObj(ps))
      for (const k of Object.keys(ps)) if (!KNOWN_POD_SPEC.has(k)) out.push(`spec.template.spec.${k}`);
    if (isObj(ps)) out.push(...unknownContainerFields(ps, 'spec.template.spec'));
  }
  return out;
}

function warningHeaders(warnings: string[]): Record<string, string[]> {
  return warnings.length ? { Warning: warnings.map((w) => `299 - ${JSON.stringify(w)}`) } : {};
}

/** Render one object for the negotiated output. */
function renderOne(rt: ResourceType, o: Readonly<KObject>, fmt: OutputFormat, q: URLSearchParams): unknown {
  if (fmt.kind === 'table') {
    const include = (q.get('includeObject') ?? 'Metadata') as IncludeObject;
    const rv = (o.metadata as Record<string, unknown> | undefined)?.resourceVersion;
    return buildTable(rt, [o as KObject], rv !== undefined ? { resourceVersion: rv } : {}, include);
  }
  if (fmt.kind === 'partial')
    return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata };
  return o;
}

/** Scale subresource view of an object. */
function toScale(rt: ResourceType, o: Readonly<KObject>): Record<string, unknown> {
  const m = o.metadata as Record<string, unknown>;
  const scale = rt.scale!;
  let selector = '';
  if (scale.labelSelectorPath) {
    const sel = getPath(o, scale.labelSelectorPath);
    if (typeof sel === 'string') selector = sel;
    else if (isObj(sel)) {
      const ml = isObj(sel.matchLabels) ? sel.matchLabels : {};
      selector = Object.entries(ml)
        .map(([k, v]) => `${k}=${String(v)}`)
        .join(',');
    }
  }
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: m.name,
      ...(m.namespace ? { namespace: m.namespace } : {}),
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      creationTimestamp: m.creationTimestamp,
    },
    spec: { replicas: Number(getPath(o, scale.specReplicasPath) ?? 0) },
    status: {
      replicas: Number(getPath(o, scale.statusReplicasPath) ?? 0),
      ...(selector ? { selector } : {}),
    },
  };
}

function itemJson(env: HandlerEnv, rt: ResourceType, e: Entry): string {
  if (rt.fromStorage) {
    const v = env.registry.view(rt, e);
    if (rt.listItemsHaveTypeMeta) return JSON.stringify(v);
    const { kind: _k, apiVersion: _a, ...rest } = v;
    return JSON.stringify(rest);
  }
  return rt.listItemsHaveTypeMeta ? e.json : e.itemJson;
}

/**
 * Write a JSON list as a chunked stream, items in batches, honouring backpressure: the items' JSON is
 * each object's cached encoding (built once per object version), so a large list costs one pass.
 */
async function streamListJson(
  env: HandlerEnv,
  rt: ResourceType,
  entries: readonly Entry[],
  listMeta: Record<string, unknown>,
  res: ServerResponse,
): Promise<void> {
  res.writeHead(200, { ...baseHeaders(), 'Content-Type': 'application/json' });
  const head = `{"kind":${JSON.stringify(rt.listKind)},"apiVersion":${JSON.stringify(apiVersionOf(rt))},"metadata":${JSON.stringify(listMeta)},"items":[`;
  let buf = head;
  for (let i = 0; i < entries.length; i++) {
    buf += (i > 0 ? ',' : '') + itemJson(env, rt, entries[i]!);
    if (buf.length >= 256 * 1024) {
      if (res.destroyed) return;
      const ok = res.write(buf);
      buf = '';
      if (!ok)
        await new Promise<void>((r) => {
          const done = () => {
            res.off('drain', done);
            res.off('close', done);
            r();
          };
          res.on('drain', done);
          res.on('close', done);
        });
    }
  }
  res.end(`${buf}]}`);
}

function parseDeleteOptions(body: unknown, q: URLSearchParams): DeleteOptions {
  const b = isObj(body) ? body : {};
  const pre = isObj(b.preconditions) ? b.preconditions : {};
  const dryRunBody = Array.isArray(b.dryRun) ? b.dryRun : [];
  for (const v of dryRunBody)
    if (v !== 'All') throw badRequest(`Invalid dry run value: ${JSON.stringify(v)}; supported values: "All"`);
  const grace =
    b.gracePeriodSeconds ??
    (q.get('gracePeriodSeconds') !== null ? Number(q.get('gracePeriodSeconds')) : undefined);
  const propagation = b.propagationPolicy ?? q.get('propagationPolicy') ?? undefined;
  if (propagation !== undefined && !['Orphan', 'Background', 'Foreground'].includes(String(propagation)))
    throw invalid('DeleteOptions', 'meta.k8s.io', '', [
      {
        type: 'FieldValueNotSupported',
        field: 'propagationPolicy',
        detail: `Unsupported value: ${JSON.stringify(propagation)}: supported values: "Foreground", "Background", "Orphan", "nil"`,
      },
    ]);
  return {
    preconditions: {
      ...(typeof pre.uid === 'string' ? { uid: pre.uid } : {}),
      ...(typeof pre.resourceVersion === 'string' ? { resourceVersion: pre.resourceVersion } : {}),
    },
    ...(propagation !== undefined ? { propagationPolicy: String(propagation) } : {}),
    ...(typeof grace === 'number' && !Number.isNaN(grace) ? { gracePeriodSeconds: grace } : {}),
    dryRun: dryRunBody.length > 0 || dryRunOf(q),
  };
}

/**
 * Handle one resource request. `rt` is the resolved resource type (the caller answered 404 otherwise).
 */
export async function handleResource(
  env: HandlerEnv,
  rt: ResourceType,
  info: RequestInfo,
  ctx: RequestContext,
  req: IncomingMessage,
  res: ServerResponse,
  q: URLSearchParams,
): Promise<void> {
  const { registry } = env;
  const ns = rt.namespaced ? info.namespace : undefined;
  if (!rt.namespaced && info.namespace !== undefined) {
    // cluster-scoped resource addressed under a namespace
    throw new ApiStatusError(
      failureStatus(404, 'NotFound', 'the server could not find the requested resource', {}),
    );
  }
  const sub = info.subresource;
  if (sub !== undefined) {
    const ok =
      (sub === 'status' && rt.statusSubresource) ||
      (sub === 'scale' && rt.scale) ||
      (sub === 'log' && rt.resource === 'pods' && rt.group === '') ||
      (sub === 'finalize' && rt.resource === 'namespaces' && rt.group === '');
    if (!ok)
      throw new ApiStatusError(
        failureStatus(404, 'NotFound', 'the server could not find the requested resource', {}),
      );
  }
  const verb = info.verb;
  const name = info.name;
  const warnings: string[] = [];

  switch (verb) {
    case 'get': {
      const fmt = negotiate(String(req.headers.accept ?? ''), {
        table: sub === undefined || sub === 'status',
        partial: true,
      });
      const entry = registry.get(rt, ns, name!);
      const o = registry.view(rt, entry);
      if (sub === 'log') {
        sendText(res, 200, '');
        return;
      }
      if (sub === 'scale') {
        sendBody(res, 200, toScale(rt, o), fmt);
        return;
      }
      if (fmt.kind === 'json' && !rt.fromStorage) sendBody(res, 200, entry.json, fmt);
      else sendBody(res, 200, renderOne(rt, o, fmt, q), fmt);
      return;
    }
    case 'list': {
      if (sub !== undefined) throw methodNotSupported(rt.resource, rt.group, 'list');
      if (q.get('sendInitialEvents') !== null)
        throw invalid('ListOptions', 'meta.k8s.io', '', [
          {
            type: 'FieldValueForbidden',
            field: 'sendInitialEvents',
            detail: 'Forbidden: sendInitialEvents is forbidden for list',
          },
        ]);
      const fmt = negotiate(String(req.headers.accept ?? ''), { table: true, partial: true });
      const limitRaw = q.get('limit');
      const limit = limitRaw !== null && /^\d+$/.test(limitRaw) ? Number(limitRaw) : undefined;
      const result = await registry.list(rt, {
        namespace: ns,
        labelSelector: q.get('labelSelector'),
        fieldSelector: q.get('fieldSelector'),
        limit,
        continueToken: q.get('continue'),
        resourceVersion: q.get('resourceVersion'),
        resourceVersionMatch: q.get('resourceVersionMatch'),
      });
      // unstructured (custom resource) lists always carry `continue`, and before resourceVersion
      const listMeta: Record<string, unknown> =
        rt.crdName !== undefined && fmt.kind === 'json'
          ? { continue: result.continueToken ?? '', resourceVersion: String(result.rv) }
          : { resourceVersion: String(result.rv) };
      if (result.continueToken) listMeta.continue = result.continueToken;
      if (result.remainingItemCount !== undefined) listMeta.remainingItemCount = result.remainingItemCount;
      if (fmt.kind === 'table') {
        const include = (q.get('includeObject') ?? 'Metadata') as IncludeObject;
        const objs = result.entries.map((e) => registry.view(rt, e) as KObject);
        sendBody(res, 200, buildTable(rt, objs, listMeta, include), fmt);
      } else if (fmt.kind === 'partial') {
        sendBody(
          res,
          200,
          {
            kind: 'PartialObjectMetadataList',
            apiVersion: 'meta.k8s.io/v1',
            metadata: listMeta,
            items: result.entries.map((e) => ({
              kind: 'PartialObjectMetadata',
              apiVersion: 'meta.k8s.io/v1',
              metadata: registry.view(rt, e).metadata,
            })),
          },
          fmt,
        );
      } else if (fmt.kind === 'json') await streamListJson(env, rt, result.entries, listMeta, res);
      else
        sendBody(
          res,
          200,
          {
            kind: rt.listKind,
            apiVersion: apiVersionOf(rt),
            metadata: listMeta,
            items: result.entries.map((e) => JSON.parse(itemJson(env, rt, e))),
          },
          fmt,
        );
      return;
    }
    case 'watch': {
      if (sub !== undefined) throw methodNotSupported(rt.resource, rt.group, 'watch');
      const fmt = negotiate(String(req.headers.accept ?? ''), { table: true, partial: true });
      const wopts = {
        rt,
        ...(ns !== undefined ? { namespace: ns } : {}),
        query: q,
        encoding:
          fmt.kind === 'table'
            ? ('table' as const)
            : fmt.kind === 'partial'
              ? ('partial' as const)
              : ('json' as const),
        bookmarkIntervalMs: env.bookmarkIntervalMs,
        defaultTimeoutMs: env.defaultWatchTimeoutMs,
      };
      const prepared = prepareWatch(registry, wopts);
      await serveWatch(registry, wopts, prepared, ctx, res, env.faults, env.watches);
      return;
    }
    case 'create': {
      if (name !== undefined) {
        throw new ApiStatusError(
          failureStatus(
            405,
            'MethodNotAllowed',
            'the server does not allow this method on the requested resource',
            {},
          ),
        );
      }
      const fmt = negotiate(String(req.headers.accept ?? ''), {});
      const body = decodeObject(rt, req, await readBody(req), q, warnings);
      const obj = registry.create(rt, ns, body, {
        dryRun: dryRunOf(q),
        fieldManager: fieldManagerOf(req, q),
      });
      sendBody(res, 201, obj, fmt, warningHeaders(warnings));
      return;
    }
    case 'update': {
      if (name === undefined) throw methodNotSupported(rt.resource, rt.group, 'update');
      const fmt = negotiate(String(req.headers.accept ?? ''), {});
      const opts = {
        dryRun: dryRunOf(q),
        fieldManager: fieldManagerOf(req, q),
        ...(sub ? { subresource: sub } : {}),
      };
      if (sub === 'scale') {
        const body = decodeBody(
          await readBody(req),
          contentTypeOf(req),
          'Scale in version "v1" cannot be handled as a Scale',
        );
        const replicas = getPath(body, 'spec.replicas');
        const rv = getPath(body, 'metadata.resourceVersion');
        const obj = registry.patch(
          rt,
          ns,
          name,
          (cur) => {
            setPath(cur, rt.scale!.specReplicasPath, Number(replicas ?? 0));
            const m = cur.metadata as Record<string, unknown>;
            if (rv) m.resourceVersion = rv;
            else delete m.resourceVersion;
            return cur;
          },
          { ...opts, subresource: 'scale' },
        );
        sendBody(res, 200, toScale(rt, obj), fmt);
        return;
      }
      if (sub === 'finalize') {
        const body = decodeObject(rt, req, await readBody(req), q, warnings);
        const obj = registry.patch(
          rt,
          ns,
          name,
          (cur) => {
            cur.spec = isObj(body.spec) ? body.spec : {};
            return cur;
          },
          { ...opts, subresource: undefined },
        );
        sendBody(res, 200, obj, fmt);
        return;
      }
      const body = decodeObject(rt, req, await readBody(req), q, warnings);
      const { object, created } = registry.update(rt, ns, name, body, opts);
      sendBody(res, created ? 201 : 200, object, fmt, warningHeaders(warnings));
      return;
    }
    case 'patch': {
      if (name === undefined) throw methodNotSupported(rt.resource, rt.group, 'patch');
      const fmt = negotiate(String(req.headers.accept ?? ''), {});
      const ct = contentTypeOf(req);
      const accepted = rt.strategicMergeKeys
        ? PATCH_TYPES
        : PATCH_TYPES.filter((t) => !t.includes('strategic'));
      if (!PATCH_TYPES.includes(ct))
        throw new ApiStatusError(
          failureStatus(415, 'UnsupportedMediaType', '415: Unsupported Media Type', {}),
        );
      if (!accepted.includes(ct)) throw unsupportedMediaType(accepted);
      const raw = await readBody(req);
      const patch = decodeBody(raw, ct, 'error decoding patch');
      const force = q.get('force');
      const isApply = ct === 'application/apply-patch+yaml';
      if (force !== null && !isApply)
        throw invalid('PatchOptions', 'meta.k8s.io', '', [
          {
            type: 'FieldValueForbidden',
            field: 'force',
            detail: 'Forbidden: may not be specified for non-apply patch',
          },
        ]);
      const dryRun = dryRunOf(q);
      if (isApply) {
        if (!q.get('fieldManager'))
          throw invalid('PatchOptions', 'meta.k8s.io', '', [
            {
              type: 'FieldValueRequired',
              field: 'fieldManager',
              detail: 'Required value: is required for apply patch',
            },
          ]);
        if (!isObj(patch)) throw badRequest('error decoding YAML: the apply patch must be an object');
        applyFieldValidation(rt, patch as KObject, q, warnings);
        if (sub === 'scale') throw methodNotSupported(rt.resource, rt.group, 'apply to scale');
        const { object, created } = registry.apply(rt, ns, name, patch as KObject, {
          dryRun,
          fieldManager: fieldManagerOf(req, q),
          force: force === 'true' || force === '1',
          ...(sub ? { subresource: sub } : {}),
        });
        sendBody(res, created ? 201 : 200, object, fmt, warningHeaders(warnings));
        return;
      }
      const opts = {
        dryRun,
        fieldManager: fieldManagerOf(req, q),
        ...(sub ? { subresource: sub } : {}),
      };
      const applyPatch = (doc: KObject): KObject => {
        if (ct === 'application/json-patch+json') return jsonPatch(doc, patch, rt.kind, name);
        if (ct === 'application/merge-patch+json') return mergePatch(doc, patch) as KObject;
        return strategicMergePatch(rt, doc, patch) as KObject;
      };
      if (sub === 'scale') {
        const obj = registry.patch(
          rt,
          ns,
          name,
          (cur) => {
            const scale = applyPatch(toScale(rt, cur) as KObject);
            setPath(cur, rt.scale!.specReplicasPath, Number(getPath(scale, 'spec.replicas') ?? 0));
            const rv = getPath(scale, 'metadata.resourceVersion');
            const m = cur.metadata as Record<string, unknown>;
            if (rv !== m.resourceVersion && rv !== undefined) m.resourceVersion = rv;
            else delete m.resourceVersion;
            return cur;
          },
          opts,
        );
        sendBody(res, 200, toScale(rt, obj), fmt);
        return;
      }
      const obj = registry.patch(
        rt,
        ns,
        name,
        (cur) => {
          const rvBefore = (cur.metadata as Record<string, unknown>).resourceVersion;
          const out = applyPatch(cur);
          const m = isObj(out.metadata) ? out.metadata : {};
          // an RV that the patch did not touch is not a precondition
          if (m.resourceVersion === rvBefore && !JSON.stringify(patch).includes('resourceVersion'))
            delete m.resourceVersion;
          applyFieldValidation(rt, out, q, warnings);
          return out;
        },
        opts,
      );
      sendBody(res, 200, obj, fmt, warningHeaders(warnings));
      return;
    }
    case 'delete': {
      if (sub !== undefined) throw methodNotSupported(rt.resource, rt.group, 'delete');
      const fmt = negotiate(String(req.headers.accept ?? ''), {});
      const raw = await readBody(req);
      const body = raw.length
        ? decodeBody(raw, contentTypeOf(req) || 'application/json', 'DeleteOptions')
        : undefined;
      const result = registry.delete(rt, ns, name!, parseDeleteOptions(body, q));
      sendBody(res, 200, result.object ?? result.status, fmt);
      return;
    }
    case 'deletecollection': {
      if (!rt.verbs.includes('deletecollection'))
        throw methodNotSupported(rt.resource, rt.group, 'deletecollection');
      const fmt = negotiate(String(req.headers.accept ?? ''), {});
      const raw = await readBody(req);
      const body = raw.length
        ? decodeBody(raw, contentTypeOf(req) || 'application/json', 'DeleteOptions')
        : undefined;
      const { rv, items } = await registry.deleteCollection(
        rt,
        { namespace: ns, labelSelector: q.get('labelSelector'), fieldSelector: q.get('fieldSelector') },
        parseDeleteOptions(body, q),
      );
      sendBody(
        res,
        200,
        { kind: rt.listKind, apiVersion: apiVersionOf(rt), metadata: { resourceVersion: String(rv) }, items },
        fmt,
      );
      return;
    }
    default:
      throw methodNotSupported(rt.resource, rt.group, verb);
  }
}

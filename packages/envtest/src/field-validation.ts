/**
 * fieldValidation (Strict / Warn / Ignore, protocol §11): find fields the kind does not declare, then refuse
 * them (Strict, 400), warn about them (Warn, `Warning: 299`), or drop them silently (Ignore).
 */
import { POD_TEMPLATE_SPEC } from './builtin/workloads.js';
import { badRequest } from './errors.js';
import { getPath, type KObject, OBJECT_META_FIELDS, type ResourceType } from './resource-type.js';

function isObj(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export function fieldValidationMode(q: URLSearchParams): 'Strict' | 'Warn' | 'Ignore' {
  const v = q.get('fieldValidation');
  if (v === null || v === '') return 'Warn';
  if (v === 'Strict' || v === 'Warn' || v === 'Ignore') return v;
  throw badRequest(`fieldValidation parameter unsupported: ${JSON.stringify(v)}`);
}

export function applyFieldValidation(
  rt: ResourceType,
  o: KObject,
  q: URLSearchParams,
  warnings: string[],
): void {
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
  if (rt.kind === 'Deployment' && isObj(o.spec))
    for (const k of Object.keys(o.spec)) if (!KNOWN_DEPLOY_SPEC.has(k)) out.push(`spec.${k}`);
  // the pod template of every workload kind (Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob, …)
  const tmpl = rt.crdName === undefined ? POD_TEMPLATE_SPEC[`${rt.group}/${rt.resource}`] : undefined;
  if (tmpl) {
    const ps = getPath(o, tmpl);
    if (isObj(ps)) {
      for (const k of Object.keys(ps)) if (!KNOWN_POD_SPEC.has(k)) out.push(`${tmpl}.${k}`);
      out.push(...unknownContainerFields(ps, tmpl));
    }
  }
  return out;
}

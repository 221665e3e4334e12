import { defaultCrd } from './crd.js';
import { type FieldError, fieldForbidden, fieldInvalid, fieldRequired } from './errors.js';
import { getPath, type KObject, type ResourceType, type TableColumn } from './resource-type.js';
import { ageString } from './table.js';

const ALL_VERBS = [
  'create',
  'delete',
  'deletecollection',
  'get',
  'list',
  'patch',
  'update',
  'watch',
] as const;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Message of an invalid DNS-1123 subdomain (apimachinery validation). */
export const DNS1123_SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
export const DNS1123_LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

/** Validate a name as a DNS-1123 subdomain (≤253) or label (≤63). */
export function validateName(name: string, kind: 'subdomain' | 'label'): string | undefined {
  if (kind === 'label') {
    if (name.length > 63) return 'must be no more than 63 characters';
    if (!DNS1123_LABEL.test(name)) return DNS1123_LABEL_MSG;
    return undefined;
  }
  if (name.length > 253) return 'must be no more than 253 characters';
  if (!DNS1123_SUBDOMAIN.test(name)) return DNS1123_SUBDOMAIN_MSG;
  return undefined;
}

function obj(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

function ensureObj(parent: Record<string, unknown>, key: string): Record<string, unknown> {
  const cur = parent[key];
  if (cur !== null && typeof cur === 'object' && !Array.isArray(cur)) return cur as Record<string, unknown>;
  const fresh: Record<string, unknown> = {};
  parent[key] = fresh;
  return fresh;
}

function setDefault(o: Record<string, unknown>, key: string, value: unknown): void {
  if (o[key] === undefined) o[key] = value;
}

/** Defaults of a container, as the core/v1 scheme defaulter sets them. */
function defaultContainer(c: Record<string, unknown>): void {
  setDefault(c, 'resources', {});
  setDefault(c, 'terminationMessagePath', '/dev/termination-log');
  setDefault(c, 'terminationMessagePolicy', 'File');
  if (c.imagePullPolicy === undefined) {
    const image = typeof c.image === 'string' ? c.image : '';
    const last = image.split('/').pop() ?? '';
    const tagged = last.includes(':') || image.includes('@');
    c.imagePullPolicy = !tagged || last.endsWith(':latest') ? 'Always' : 'IfNotPresent';
  }
  for (const p of Array.isArray(c.ports) ? c.ports : []) setDefault(obj(p), 'protocol', 'TCP');
}

/** Pod spec defaults (scheme defaulting: also applied to pod templates). */
export function defaultPodSpec(spec: Record<string, unknown>): void {
  for (const list of ['initContainers', 'containers']) {
    const cs = spec[list];
    if (Array.isArray(cs)) for (const c of cs) defaultContainer(obj(c));
  }
  setDefault(spec, 'restartPolicy', 'Always');
  setDefault(spec, 'terminationGracePeriodSeconds', 30);
  setDefault(spec, 'dnsPolicy', 'ClusterFirst');
  setDefault(spec, 'securityContext', {});
  setDefault(spec, 'schedulerName', 'default-scheduler');
}

function validateContainers(spec: Record<string, unknown>, prefix: string): FieldError[] {
  const errs: FieldError[] = [];
  const cs = spec.containers;
  if (!Array.isArray(cs) || cs.length === 0) {
    errs.push(fieldRequired(`${prefix}.containers`));
    return errs;
  }
  const seen = new Set<string>();
  cs.forEach((c, i) => {
    const co = obj(c);
    const name = co.name;
    if (typeof name !== 'string' || name === '') errs.push(fieldRequired(`${prefix}.containers[${i}].name`));
    else {
      const bad = validateName(name, 'label');
      if (bad) errs.push(fieldInvalid(`${prefix}.containers[${i}].name`, name, bad));
      if (seen.has(name))
        errs.push({
          type: 'FieldValueDuplicate',
          field: `${prefix}.containers[${i}].name`,
          detail: `Duplicate value: "${name}"`,
        });
      seen.add(name);
    }
    if (typeof co.image !== 'string' || co.image === '')
      errs.push(fieldRequired(`${prefix}.containers[${i}].image`));
  });
  return errs;
}

function qosClass(spec: Record<string, unknown>): string {
  const cs = Array.isArray(spec.containers) ? spec.containers : [];
  let any = false;
  let all = cs.length > 0;
  for (const c of cs) {
    const r = obj(obj(c).resources);
    const req = obj(r.requests);
    const lim = obj(r.limits);
    if (Object.keys(req).length || Object.keys(lim).length) any = true;
    if (!lim.cpu || !lim.memory) all = false;
  }
  if (all && any) return 'Guaranteed';
  return any ? 'Burstable' : 'BestEffort';
}

function podReady(p: KObject): string {
  const st = obj(p.status);
  const cs = Array.isArray(obj(p.spec).containers) ? (obj(p.spec).containers as unknown[]) : [];
  const statuses = Array.isArray(st.containerStatuses) ? (st.containerStatuses as unknown[]) : [];
  const ready = statuses.filter((s) => obj(s).ready === true).length;
  return `${ready}/${cs.length}`;
}

function podRestarts(p: KObject): number {
  const statuses = obj(p.status).containerStatuses;
  return Array.isArray(statuses)
    ? statuses.reduce((n: number, s) => n + Number(obj(s).restartCount ?? 0), 0)
    : 0;
}

const POD_UPDATE_FORBIDDEN =
  'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

/** Pod spec is immutable apart from images, activeDeadlineSeconds, added tolerations (pod strategy). */
function podSpecUpdateAllowed(oldSpec: Record<string, unknown>, newSpec: Record<string, unknown>): boolean {
  const mask = (s: Record<string, unknown>) => {
    const c = structuredClone(s);
    for (const list of ['containers', 'initContainers']) {
      const cs = c[list];
      if (Array.isArray(cs))
        for (const x of cs) if (x && typeof x === 'object') delete (x as Record<string, unknown>).image;
    }
    delete c.activeDeadlineSeconds;
    delete c.tolerations;
    delete c.terminationGracePeriodSeconds;
    return JSON.stringify(sortKeys(c));
  };
  return mask(oldSpec) === mask(newSpec);
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v).sort()) out[k] = sortKeys((v as Record<string, unknown>)[k]);
  return out;
}

const col = (
  name: string,
  type: string,
  description: string,
  cell: (o: KObject, now: number) => unknown,
  priority = 0,
  format = '',
): TableColumn => ({ name, type, format, description, priority, cell });

const ageColumn = col(
  'Age',
  'string',
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
  (o, now) => ageString(getPath(o, 'metadata.creationTimestamp'), now),
);

const str = (v: unknown, dflt = '<none>'): string =>
  v === undefined || v === null || v === '' ? dflt : String(v);

function base(
  partial: Partial<ResourceType> &
    Pick<
      ResourceType,
      'group' | 'version' | 'resource' | 'kind' | 'singular' | 'namespaced' | 'storageVersionHash'
    >,
): ResourceType {
  return {
    listKind: `${partial.kind}List`,
    shortNames: [],
    categories: [],
    verbs: ALL_VERBS,
    statusSubresource: false,
    hasGeneration: false,
    allowUnconditionalUpdate: true,
    allowCreateOnUpdate: false,
    returnDeletedObject: false,
    fieldSelectors: {},
    fieldSelectorStyle: 'builtin',
    strategicMergeKeys: {},
    strategicSetLists: ['metadata.finalizers'],
    listItemsHaveTypeMeta: false,
    storageKey: `${partial.group}/${partial.resource}`,
    tableColumns: [ageColumn],
    ...partial,
  };
}

const OBJECT_META_KEYS = { 'metadata.ownerReferences': 'uid', 'metadata.managedFields': '' };
const POD_SPEC_KEYS = (p: string): Record<string, string> => ({
  [`${p}.containers`]: 'name',
  [`${p}.initContainers`]: 'name',
  [`${p}.ephemeralContainers`]: 'name',
  [`${p}.containers.env`]: 'name',
  [`${p}.initContainers.env`]: 'name',
  [`${p}.containers.ports`]: 'containerPort',
  [`${p}.initContainers.ports`]: 'containerPort',
  [`${p}.containers.volumeMounts`]: 'mountPath',
  [`${p}.initContainers.volumeMounts`]: 'mountPath',
  [`${p}.containers.volumeDevices`]: 'devicePath',
  [`${p}.volumes`]: 'name',
  [`${p}.imagePullSecrets`]: 'name',
  [`${p}.resourceClaims`]: 'name',
  [`${p}.hostAliases`]: 'ip',
  [`${p}.topologySpreadConstraints`]: 'topologyKey',
});

function podIP(p: KObject): string {
  const st = obj(p.status);
  const ips = st.podIPs;
  if (Array.isArray(ips) && ips.length > 0) return String(obj(ips[0]).ip ?? '');
  return String(st.podIP ?? '');
}

export const PODS: ResourceType = base({
  group: '',
  version: 'v1',
  resource: 'pods',
  kind: 'Pod',
  singular: 'pod',
  namespaced: true,
  shortNames: ['po'],
  categories: ['all'],
  statusSubresource: true,
  returnDeletedObject: true,
  storageVersionHash: 'xPOwRZ+Yhw8=',
  fieldSelectors: {
    'spec.nodeName': (o) => String(getPath(o, 'spec.nodeName') ?? ''),
    'spec.restartPolicy': (o) => String(getPath(o, 'spec.restartPolicy') ?? ''),
    'spec.schedulerName': (o) => String(getPath(o, 'spec.schedulerName') ?? ''),
    'spec.serviceAccountName': (o) => String(getPath(o, 'spec.serviceAccountName') ?? ''),
    'spec.hostNetwork': (o) => String(getPath(o, 'spec.hostNetwork') === true),
    'status.phase': (o) => String(getPath(o, 'status.phase') ?? ''),
    'status.podIP': podIP,
    'status.nominatedNodeName': (o) => String(getPath(o, 'status.nominatedNodeName') ?? ''),
  },
  strategicMergeKeys: { ...OBJECT_META_KEYS, ...POD_SPEC_KEYS('spec'), 'status.conditions': 'type' },
  defaults(o) {
    const spec = ensureObj(o, 'spec');
    defaultPodSpec(spec);
    setDefault(spec, 'enableServiceLinks', true);
  },
  admit(o) {
    const spec = ensureObj(o, 'spec');
    setDefault(spec, 'tolerations', [
      {
        key: 'node.kubernetes.io/not-ready',
        operator: 'Exists',
        effect: 'NoExecute',
        tolerationSeconds: 300,
      },
      {
        key: 'node.kubernetes.io/unreachable',
        operator: 'Exists',
        effect: 'NoExecute',
        tolerationSeconds: 300,
      },
    ]);
    setDefault(spec, 'priority', 0);
    setDefault(spec, 'preemptionPolicy', 'PreemptLowerPriority');
    const st = ensureObj(o, 'status');
    setDefault(st, 'phase', 'Pending');
    setDefault(st, 'qosClass', qosClass(spec));
  },
  statusWritesMetadata: true,
  canonicalize(o) {
    const conds = obj(o.status).conditions;
    if (Array.isArray(conds))
      for (const c of conds) {
        const co = obj(c);
        setDefault(co, 'lastProbeTime', null);
        setDefault(co, 'lastTransitionTime', null);
      }
  },
  discoveryOnlySubresources: [
    { name: 'attach', verbs: ['create', 'get'], kind: 'PodAttachOptions' },
    { name: 'binding', verbs: ['create'], kind: 'Binding' },
    { name: 'ephemeralcontainers', verbs: ['get', 'patch', 'update'], kind: 'Pod' },
    { name: 'eviction', verbs: ['create'], kind: 'Eviction', group: 'policy', version: 'v1' },
    { name: 'exec', verbs: ['create', 'get'], kind: 'PodExecOptions' },
    { name: 'portforward', verbs: ['create', 'get'], kind: 'PodPortForwardOptions' },
    { name: 'proxy', verbs: ['create', 'delete', 'get', 'patch', 'update'], kind: 'PodProxyOptions' },
  ],
  validate(o, old) {
    const errs = validateContainers(obj(o.spec), 'spec');
    if (old && errs.length === 0 && !podSpecUpdateAllowed(obj(old.spec), obj(o.spec)))
      errs.push(fieldForbidden('spec', POD_UPDATE_FORBIDDEN));
    return errs;
  },
  tableColumns: [
    col('Ready', 'string', 'The aggregate readiness state of this pod for accepting traffic.', podReady),
    col('Status', 'string', 'The aggregate status of the containers in this pod.', (o) =>
      str(getPath(o, 'metadata.deletionTimestamp') ? 'Terminating' : getPath(o, 'status.phase'), 'Unknown'),
    ),
    col(
      'Restarts',
      'string',
      'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.',
      (o) => String(podRestarts(o)),
    ),
    ageColumn,
    col('IP', 'string', 'The IP address of the pod', (o) => str(podIP(o)), 1),
    col(
      'Node',
      'string',
      'The name of the node the pod is scheduled to',
      (o) => str(getPath(o, 'spec.nodeName')),
      1,
    ),
    col(
      'Nominated Node',
      'string',
      'The name of the node where the pod is nominated',
      (o) => str(getPath(o, 'status.nominatedNodeName')),
      1,
    ),
    col(
      'Readiness Gates',
      'string',
      'The readiness gates of the pod',
      (o) => {
        const g = getPath(o, 'spec.readinessGates');
        return Array.isArray(g) && g.length ? `0/${g.length}` : '<none>';
      },
      1,
    ),
  ],
});

export const NAMESPACES: ResourceType = base({
  group: '',
  version: 'v1',
  resource: 'namespaces',
  kind: 'Namespace',
  singular: 'namespace',
  namespaced: false,
  shortNames: ['ns'],
  verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  statusSubresource: true,
  storageVersionHash: 'Q3oi5N2YM8M=',
  fieldSelectors: { 'status.phase': (o) => String(getPath(o, 'status.phase') ?? '') },
  defaults(o) {
    const meta = ensureObj(o, 'metadata');
    const labels = ensureObj(meta, 'labels');
    if (typeof meta.name === 'string') labels['kubernetes.io/metadata.name'] = meta.name;
  },
  admit(o) {
    const spec = ensureObj(o, 'spec');
    setDefault(spec, 'finalizers', ['kubernetes']);
    const st = ensureObj(o, 'status');
    setDefault(st, 'phase', 'Active');
  },
  tableColumns: [
    col('Status', 'string', 'The status of the namespace', (o) => str(getPath(o, 'status.phase'))),
    ageColumn,
  ],
});

export const CONFIGMAPS: ResourceType = base({
  group: '',
  version: 'v1',
  resource: 'configmaps',
  kind: 'ConfigMap',
  singular: 'configmap',
  namespaced: true,
  shortNames: ['cm'],
  storageVersionHash: 'qFsyl6wFWjQ=',
  tableColumns: [
    col(
      'Data',
      'string',
      'Data contains the configuration data.',
      (o) => Object.keys(obj(o.data)).length + Object.keys(obj(o.binaryData)).length,
    ),
    ageColumn,
  ],
});

export const SECRETS: ResourceType = base({
  group: '',
  version: 'v1',
  resource: 'secrets',
  kind: 'Secret',
  singular: 'secret',
  namespaced: true,
  storageVersionHash: 'S6u1pOWzb84=',
  fieldSelectors: { type: (o) => String(o.type ?? '') },
  defaults(o) {
    setDefault(o, 'type', 'Opaque');
    // stringData is write-only: merged into data (base64) and dropped
    const sd = o.stringData;
    if (sd && typeof sd === 'object') {
      const data = ensureObj(o, 'data');
      for (const [k, v] of Object.entries(sd)) data[k] = Buffer.from(String(v), 'utf8').toString('base64');
      delete o.stringData;
    }
  },
  tableColumns: [
    col('Type', 'string', 'The type of the secret', (o) => str(o.type)),
    col('Data', 'string', 'The number of entries in the secret', (o) => Object.keys(obj(o.data)).length),
    ageColumn,
  ],
});

export const SERVICES: ResourceType = base({
  group: '',
  version: 'v1',
  resource: 'services',
  kind: 'Service',
  singular: 'service',
  namespaced: true,
  shortNames: ['svc'],
  categories: ['all'],
  statusSubresource: true,
  storageVersionHash: '0/CO1lhkEBI=',
  strategicMergeKeys: { ...OBJECT_META_KEYS, 'spec.ports': 'port', 'status.conditions': 'type' },
  discoveryOnlySubresources: [
    { name: 'proxy', verbs: ['create', 'delete', 'get', 'patch', 'update'], kind: 'ServiceProxyOptions' },
  ],
  defaults(o) {
    const spec = ensureObj(o, 'spec');
    setDefault(spec, 'type', 'ClusterIP');
    setDefault(spec, 'sessionAffinity', 'None');
    for (const p of Array.isArray(spec.ports) ? spec.ports : []) {
      const po = obj(p);
      setDefault(po, 'protocol', 'TCP');
      setDefault(po, 'targetPort', po.port);
    }
  },
  admit(o) {
    const spec = ensureObj(o, 'spec');
    if (spec.type !== 'ExternalName') {
      setDefault(
        spec,
        'clusterIP',
        `10.96.${Math.floor(Math.random() * 250) + 1}.${Math.floor(Math.random() * 250) + 1}`,
      );
      setDefault(spec, 'clusterIPs', [spec.clusterIP]);
      setDefault(spec, 'ipFamilies', ['IPv4']);
      setDefault(spec, 'ipFamilyPolicy', 'SingleStack');
      setDefault(spec, 'internalTrafficPolicy', 'Cluster');
    }
    setDefault(o, 'status', { loadBalancer: {} });
  },
  tableColumns: [
    col('Type', 'string', 'The type of the service', (o) => str(getPath(o, 'spec.type'))),
    col('Cluster-IP', 'string', 'The cluster IP of the service', (o) => str(getPath(o, 'spec.clusterIP'))),
    col('External-IP', 'string', 'The external IPs of the service', () => '<none>'),
    col('Port(s)', 'string', 'The ports of the service', (o) => {
      const ports = getPath(o, 'spec.ports');
      return Array.isArray(ports) && ports.length
        ? ports.map((p) => `${obj(p).port}/${obj(p).protocol ?? 'TCP'}`).join(',')
        : '<none>';
    }),
    ageColumn,
    col(
      'Selector',
      'string',
      'The selector of the service',
      (o) => {
        const s = obj(getPath(o, 'spec.selector'));
        const parts = Object.entries(s).map(([k, v]) => `${k}=${v}`);
        return parts.length ? parts.join(',') : '<none>';
      },
      1,
    ),
  ],
});

const eventFieldSelectors: Record<string, (o: KObject) => string> = {
  'involvedObject.kind': (o) => String(getPath(o, 'involvedObject.kind') ?? ''),
  'involvedObject.namespace': (o) => String(getPath(o, 'involvedObject.namespace') ?? ''),
  'involvedObject.name': (o) => String(getPath(o, 'involvedObject.name') ?? ''),
  'involvedObject.uid': (o) => String(getPath(o, 'involvedObject.uid') ?? ''),
  'involvedObject.apiVersion': (o) => String(getPath(o, 'involvedObject.apiVersion') ?? ''),
  'involvedObject.resourceVersion': (o) => String(getPath(o, 'involvedObject.resourceVersion') ?? ''),
  'involvedObject.fieldPath': (o) => String(getPath(o, 'involvedObject.fieldPath') ?? ''),
  reason: (o) => String(o.reason ?? ''),
  reportingComponent: (o) => String(o.reportingComponent ?? ''),
  source: (o) => String(getPath(o, 'source.component') ?? o.reportingComponent ?? ''),
  type: (o) => String(o.type ?? ''),
};

export const CORE_EVENTS: ResourceType = base({
  group: '',
  version: 'v1',
  resource: 'events',
  kind: 'Event',
  singular: 'event',
  namespaced: true,
  shortNames: ['ev'],
  allowCreateOnUpdate: true,
  storageVersionHash: 'r2yiGXH7wu8=',
  storageKey: 'events',
  fieldSelectors: eventFieldSelectors,
  defaults(o) {
    setDefault(o, 'involvedObject', {});
    setDefault(o, 'source', {});
    setDefault(o, 'firstTimestamp', null);
    setDefault(o, 'lastTimestamp', null);
    setDefault(o, 'reportingComponent', '');
    setDefault(o, 'reportingInstance', '');
  },
  tableColumns: [
    col('Last Seen', 'string', 'Time when last event was observed', (o, now) =>
      ageString(o.lastTimestamp ?? o.eventTime ?? getPath(o, 'metadata.creationTimestamp'), now),
    ),
    col('Type', 'string', 'Type of this event', (o) => str(o.type)),
    col('Reason', 'string', 'Reason why this event was generated', (o) => str(o.reason)),
    col(
      'Object',
      'string',
      'The object this event is about',
      (o) =>
        `${String(getPath(o, 'involvedObject.kind') ?? '').toLowerCase()}/${getPath(o, 'involvedObject.name') ?? ''}`,
    ),
    col('Message', 'string', 'A human-readable description of the status of this operation', (o) =>
      str(o.message, ''),
    ),
  ],
});

/** core/v1 Event (storage shape) → events.k8s.io/v1 Event. */
function eventToV1(o: KObject): KObject {
  const out: KObject = { kind: 'Event', apiVersion: 'events.k8s.io/v1', metadata: o.metadata };
  const set = (k: string, v: unknown) => {
    if (v !== undefined && v !== null && v !== '') out[k] = v;
  };
  out.eventTime = o.eventTime ?? null;
  set('series', o.series);
  set('reportingController', o.reportingComponent);
  set('reportingInstance', o.reportingInstance);
  set('action', o.action);
  set('reason', o.reason);
  set('regarding', o.involvedObject);
  set('related', o.related);
  set('note', o.message);
  set('type', o.type);
  out.deprecatedSource = obj(o.source);
  out.deprecatedFirstTimestamp = o.firstTimestamp ?? null;
  out.deprecatedLastTimestamp = o.lastTimestamp ?? null;
  if (o.count) out.deprecatedCount = o.count;
  return out;
}

/** events.k8s.io/v1 Event → core/v1 Event (storage shape). */
function eventFromV1(o: KObject): KObject {
  const out: KObject = { kind: 'Event', apiVersion: 'v1', metadata: o.metadata };
  out.involvedObject = o.regarding ?? {};
  if (o.reason !== undefined) out.reason = o.reason;
  if (o.note !== undefined) out.message = o.note;
  out.source = o.deprecatedSource ?? {};
  out.firstTimestamp = o.deprecatedFirstTimestamp ?? null;
  out.lastTimestamp = o.deprecatedLastTimestamp ?? null;
  if (o.deprecatedCount !== undefined) out.count = o.deprecatedCount;
  if (o.type !== undefined) out.type = o.type;
  out.eventTime = o.eventTime ?? null;
  if (o.series !== undefined) out.series = o.series;
  if (o.action !== undefined) out.action = o.action;
  if (o.related !== undefined) out.related = o.related;
  out.reportingComponent = o.reportingController ?? '';
  out.reportingInstance = o.reportingInstance ?? '';
  return out;
}

export const EVENTS_V1: ResourceType = base({
  group: 'events.k8s.io',
  version: 'v1',
  resource: 'events',
  kind: 'Event',
  singular: 'event',
  namespaced: true,
  shortNames: ['ev'],
  allowCreateOnUpdate: true,
  storageVersionHash: 'r2yiGXH7wu8=',
  storageKey: 'events',
  fieldSelectors: eventFieldSelectors,
  fromStorage: eventToV1,
  toStorage: eventFromV1,
  validate(o) {
    const errs: FieldError[] = [];
    if (o.eventTime === undefined || o.eventTime === null) errs.push(fieldRequired('eventTime'));
    return errs;
  },
});

export const DEPLOYMENTS: ResourceType = base({
  group: 'apps',
  version: 'v1',
  resource: 'deployments',
  kind: 'Deployment',
  singular: 'deployment',
  namespaced: true,
  shortNames: ['deploy'],
  categories: ['all'],
  statusSubresource: true,
  hasGeneration: true,
  scale: {
    specReplicasPath: '.spec.replicas',
    statusReplicasPath: '.status.replicas',
    labelSelectorPath: '.spec.selector',
  },
  storageVersionHash: '8aSe+NMegvE=',
  strategicMergeKeys: {
    ...OBJECT_META_KEYS,
    ...POD_SPEC_KEYS('spec.template.spec'),
    'status.conditions': 'type',
  },
  strategicSetLists: ['metadata.finalizers', 'spec.template.metadata.finalizers'],
  defaults(o) {
    const spec = ensureObj(o, 'spec');
    setDefault(spec, 'replicas', 1);
    const tmpl = ensureObj(spec, 'template');
    const tmeta = ensureObj(tmpl, 'metadata');
    setDefault(tmeta, 'creationTimestamp', null);
    defaultPodSpec(ensureObj(tmpl, 'spec'));
    const strat = ensureObj(spec, 'strategy');
    setDefault(strat, 'type', 'RollingUpdate');
    if (strat.type === 'RollingUpdate') {
      const ru = ensureObj(strat, 'rollingUpdate');
      setDefault(ru, 'maxUnavailable', '25%');
      setDefault(ru, 'maxSurge', '25%');
    }
    setDefault(spec, 'revisionHistoryLimit', 10);
    setDefault(spec, 'progressDeadlineSeconds', 600);
  },
  admit(o) {
    setDefault(o, 'status', {});
  },
  canonicalize(o) {
    const st = o.status;
    if (st && typeof st === 'object' && !Array.isArray(st)) {
      const s = st as Record<string, unknown>;
      for (const k of [
        'observedGeneration',
        'replicas',
        'updatedReplicas',
        'readyReplicas',
        'availableReplicas',
        'unavailableReplicas',
        'terminatingReplicas',
        'collisionCount',
      ])
        if (s[k] === 0 || s[k] === null) delete s[k];
    }
    const spec = obj(o.spec);
    if (spec.minReadySeconds === 0) delete spec.minReadySeconds;
    if (spec.paused === false) delete spec.paused;
  },
  validate(o) {
    const errs: FieldError[] = [];
    const spec = obj(o.spec);
    if (!spec.selector) errs.push(fieldRequired('spec.selector'));
    errs.push(...validateContainers(obj(obj(spec.template).spec), 'spec.template.spec'));
    return errs;
  },
  tableColumns: [
    col(
      'Ready',
      'string',
      'Number of the pod with ready state',
      (o) => `${getPath(o, 'status.readyReplicas') ?? 0}/${getPath(o, 'spec.replicas') ?? 0}`,
    ),
    col(
      'Up-to-date',
      'string',
      'Total number of non-terminated pods targeted by this deployment that have the desired template spec.',
      (o) => Number(getPath(o, 'status.updatedReplicas') ?? 0),
    ),
    col(
      'Available',
      'string',
      'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.',
      (o) => Number(getPath(o, 'status.availableReplicas') ?? 0),
    ),
    ageColumn,
    col(
      'Containers',
      'string',
      'Names of each container in the template.',
      (o) => {
        const cs = getPath(o, 'spec.template.spec.containers');
        return Array.isArray(cs) ? cs.map((c) => obj(c).name).join(',') : '';
      },
      1,
    ),
    col(
      'Images',
      'string',
      'Images referenced by each container in the template.',
      (o) => {
        const cs = getPath(o, 'spec.template.spec.containers');
        return Array.isArray(cs) ? cs.map((c) => obj(c).image).join(',') : '';
      },
      1,
    ),
    col(
      'Selector',
      'string',
      'Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.',
      (o) => {
        const ml = obj(getPath(o, 'spec.selector.matchLabels'));
        return Object.entries(ml)
          .map(([k, v]) => `${k}=${v}`)
          .join(',');
      },
      1,
    ),
  ],
});

export const LEASES: ResourceType = base({
  group: 'coordination.k8s.io',
  version: 'v1',
  resource: 'leases',
  kind: 'Lease',
  singular: 'lease',
  namespaced: true,
  allowCreateOnUpdate: true,
  storageVersionHash: 'gqkMMb/YqFM=',
  defaults(o) {
    setDefault(o, 'spec', {});
  },
  // kube-apiserver's ValidateLeaseSpec: a duration, when set, is > 0; transitions, when set, are >= 0.
  validate(o) {
    const errs: FieldError[] = [];
    const spec = obj(o.spec);
    const d = spec.leaseDurationSeconds;
    if (d !== undefined && d !== null && !(typeof d === 'number' && d > 0)) {
      errs.push(fieldInvalid('spec.leaseDurationSeconds', d, 'must be greater than 0'));
    }
    const t = spec.leaseTransitions;
    if (t !== undefined && t !== null && !(typeof t === 'number' && t >= 0)) {
      errs.push(fieldInvalid('spec.leaseTransitions', t, 'must be greater than or equal to 0'));
    }
    return errs;
  },
  tableColumns: [
    col('Holder', 'string', 'The holder of the lease', (o) => str(getPath(o, 'spec.holderIdentity'), '')),
    ageColumn,
  ],
});

export const CRDS: ResourceType = base({
  group: 'apiextensions.k8s.io',
  version: 'v1',
  resource: 'customresourcedefinitions',
  kind: 'CustomResourceDefinition',
  singular: 'customresourcedefinition',
  namespaced: false,
  shortNames: ['crd', 'crds'],
  categories: ['api-extensions'],
  statusSubresource: true,
  storageVersionHash: 'jfWCUB31mvA=',
  hasGeneration: true,
  strategicMergeKeys: { 'metadata.ownerReferences': 'uid', 'status.conditions': 'type' },
  defaults: defaultCrd,
  admit(o) {
    const versions = Array.isArray(obj(o.spec).versions) ? (obj(o.spec).versions as unknown[]) : [];
    const storage = versions.map(obj).find((v) => v.storage === true);
    o.status = {
      conditions: null,
      acceptedNames: { plural: '', kind: '' },
      storedVersions: storage ? [storage.name] : [],
    };
  },
  tableColumns: [
    col(
      'Created At',
      'date',
      'CreationTimestamp is a timestamp representing the server time when this object was created.',
      (o) => getPath(o, 'metadata.creationTimestamp'),
    ),
  ],
});

/** The built-in resources served at start. */
export const BUILTIN_RESOURCES: readonly ResourceType[] = [
  PODS,
  NAMESPACES,
  CONFIGMAPS,
  SECRETS,
  SERVICES,
  CORE_EVENTS,
  DEPLOYMENTS,
  LEASES,
  EVENTS_V1,
  CRDS,
];

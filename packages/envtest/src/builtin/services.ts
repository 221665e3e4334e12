/**
 * Services (core/v1): defaults (type, sessionAffinity, ports protocol/targetPort, a cluster IP), the checks of
 * core validation's `ValidateService` that controllers meet (ports required unless headless or ExternalName,
 * port numbers and names, protocols, target ports, selector labels, type and session affinity, no nodePort
 * on a ClusterIP Service), and table columns.
 */
import {
  type FieldError,
  fieldForbidden,
  fieldInvalid,
  fieldNotSupported,
  fieldRequired,
} from '../errors.js';
import { getPath, type KObject, type ResourceType } from '../resource-type.js';
import {
  ageColumn,
  base,
  col,
  ensureObj,
  OBJECT_META_KEYS,
  obj,
  setDefault,
  str,
  validateLabels,
  validateName,
} from './common.js';

const PORT_RANGE = 'must be between 1 and 65535, inclusive';

/** apimachinery `IsValidPortName` (an IANA service name). */
function portNameErrors(name: string): string[] {
  const out: string[] = [];
  if (name.length > 15) out.push('must be no more than 15 characters');
  if (!/^[-a-z0-9]+$/.test(name))
    out.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(name)) out.push('must contain at least one letter (a-z)');
  if (name.includes('--')) out.push('must not contain consecutive hyphens');
  if (name.startsWith('-') || name.endsWith('-')) out.push('must not begin or end with a hyphen');
  return out;
}

const validPort = (n: number) => Number.isInteger(n) && n >= 1 && n <= 65535;

function validatePort(
  p: Record<string, unknown>,
  i: number,
  requireName: boolean,
  names: Set<string>,
): FieldError[] {
  const errs: FieldError[] = [];
  const path = `spec.ports[${i}]`;
  const name = typeof p.name === 'string' ? p.name : '';
  if (requireName && name === '') errs.push(fieldRequired(`${path}.name`));
  else if (name !== '') {
    const bad = validateName(name, 'label');
    if (bad) errs.push(fieldInvalid(`${path}.name`, name, bad));
    if (names.has(name))
      errs.push({ type: 'FieldValueDuplicate', field: `${path}.name`, detail: `Duplicate value: "${name}"` });
    else names.add(name);
  }
  const port = typeof p.port === 'number' ? p.port : 0;
  if (!validPort(port)) errs.push(fieldInvalid(`${path}.port`, port, PORT_RANGE));
  const protocol = typeof p.protocol === 'string' ? p.protocol : '';
  if (protocol === '') errs.push(fieldRequired(`${path}.protocol`));
  else if (!['SCTP', 'TCP', 'UDP'].includes(protocol))
    errs.push(fieldNotSupported(`${path}.protocol`, protocol, ['SCTP', 'TCP', 'UDP']));
  const target =
    p.targetPort === undefined || p.targetPort === null || p.targetPort === '' ? port : p.targetPort;
  if (typeof target === 'number') {
    if (!validPort(target)) errs.push(fieldInvalid(`${path}.targetPort`, target, PORT_RANGE));
  } else
    for (const msg of portNameErrors(String(target)))
      errs.push(fieldInvalid(`${path}.targetPort`, target, msg));
  return errs;
}

function validateService(o: KObject): FieldError[] {
  const errs: FieldError[] = [];
  const spec = obj(o.spec);
  const ports = Array.isArray(spec.ports) ? spec.ports : [];
  const headless = spec.clusterIP === 'None';
  if (ports.length === 0 && !headless && spec.type !== 'ExternalName') errs.push(fieldRequired('spec.ports'));
  if (spec.type === 'ExternalName') {
    const cname = String(spec.externalName ?? '').replace(/\.$/, '');
    if (cname === '') errs.push(fieldRequired('spec.externalName'));
    else {
      const bad = validateName(cname, 'subdomain');
      if (bad) errs.push(fieldInvalid('spec.externalName', cname, bad));
    }
  }
  const names = new Set<string>();
  ports.forEach((p, i) => {
    for (const e of validatePort(obj(p), i, ports.length > 1, names)) errs.push(e);
  });
  for (const e of validateLabels(spec.selector, 'spec.selector')) errs.push(e);
  const affinity = typeof spec.sessionAffinity === 'string' ? spec.sessionAffinity : '';
  if (affinity === '') errs.push(fieldRequired('spec.sessionAffinity'));
  else if (affinity !== 'ClientIP' && affinity !== 'None')
    errs.push(fieldNotSupported('spec.sessionAffinity', affinity, ['ClientIP', 'None']));
  const type = typeof spec.type === 'string' ? spec.type : '';
  const types = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];
  if (type === '') errs.push(fieldRequired('spec.type'));
  else if (!types.includes(type)) errs.push(fieldNotSupported('spec.type', type, types));
  if (type === 'ClusterIP')
    ports.forEach((p, i) => {
      const np = obj(p).nodePort;
      if (typeof np === 'number' && np !== 0)
        errs.push(fieldForbidden(`spec.ports[${i}].nodePort`, "may not be used when `type` is 'ClusterIP'"));
    });
  return errs;
}

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
  validate: validateService,
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

/** Services (core/v1): defaults (type, sessionAffinity, ports protocol/targetPort, a cluster IP) and table columns. */
import { getPath, type ResourceType } from '../resource-type.js';
import { ageColumn, base, col, ensureObj, OBJECT_META_KEYS, obj, setDefault, str } from './common.js';

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

/** Namespaces (core/v1): phase and the kubernetes finalizer, as the namespace strategy sets them. */
import { getPath, type ResourceType } from '../resource-type.js';
import { ageColumn, base, col, ensureObj, setDefault, str } from './common.js';

/**
 * Namespaces the NamespaceLifecycle admission plugin never lets anyone delete (its `immortalNamespaces`:
 * `default`, `kube-system`, `kube-public`; `kube-node-lease` is not one of them).
 */
export const IMMORTAL_NAMESPACES: ReadonlySet<string> = new Set(['default', 'kube-system', 'kube-public']);

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

/** ConfigMaps (core/v1). */
import type { ResourceType } from '../resource-type.js';
import { ageColumn, base, col, obj } from './common.js';

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

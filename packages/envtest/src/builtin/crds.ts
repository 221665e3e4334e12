/** CustomResourceDefinitions (apiextensions.k8s.io/v1): defaults, initial status, table column. */

import { defaultCrd } from '../crd.js';
import { getPath, type ResourceType } from '../resource-type.js';
import { base, col, obj } from './common.js';

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

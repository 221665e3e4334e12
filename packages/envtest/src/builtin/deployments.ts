/** Deployments (apps/v1): strategy and pod-template defaults, status canonicalisation, validation, scale. */
import { getPath, type ResourceType } from '../resource-type.js';
import {
  ageColumn,
  base,
  col,
  defaultPodSpec,
  ensureObj,
  OBJECT_META_KEYS,
  obj,
  POD_SPEC_KEYS,
  setDefault,
} from './common.js';
import { validateDeployment } from './workload-validation.js';

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
  validate: validateDeployment,
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

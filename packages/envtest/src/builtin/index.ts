/**
 * The built-in resources envtest serves: every resource of the recorded Kubernetes 1.32 discovery
 * (`discovery-1.32.ts`, generated), each with generic storage, and the hand-written behaviour of the common
 * kinds (`../builtin-resources.ts`: pods, namespaces, configmaps, secrets, services, events, deployments,
 * leases, CRDs) where it exists.
 */
import { BUILTIN_RESOURCES as HAND_WRITTEN } from '../builtin-resources.js';
import type { ResourceType, TableColumn } from '../resource-type.js';
import { ageString } from '../table.js';
import { POD_SPEC_KEYS } from './common.js';
import { DISCOVERY_1_32, type DiscoveredResource } from './discovery-1.32.js';
import { WEBHOOK_CONFIGURATION_MERGE_KEYS } from './webhook-configurations.js';
import {
  CREATE_ON_UPDATE_KINDS,
  GENERATION_KINDS,
  POD_TEMPLATE_SPEC,
  SCALE_PATHS,
  WORKLOAD_VALIDATORS,
  workloadDefaults,
} from './workloads.js';

const AGE: TableColumn = {
  name: 'Age',
  type: 'string',
  format: '',
  description:
    'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
  priority: 0,
  cell: (o, now) => ageString((o.metadata as Record<string, unknown> | undefined)?.creationTimestamp, now),
};

/** Generic storage for one discovered resource, with the strategy facts of `workloads.ts`. */
export function genericResourceType(d: DiscoveredResource): ResourceType {
  const gr = `${d.group}/${d.resource}`;
  const subs = new Set(d.subresources.map((s) => s.name));
  const tmpl = POD_TEMPLATE_SPEC[gr];
  const defaults = workloadDefaults(gr);
  const stored = d.verbs.includes('watch') || d.verbs.includes('get');
  return {
    group: d.group,
    version: d.version,
    resource: d.resource,
    kind: d.kind,
    listKind: `${d.kind}List`,
    singular: d.singular,
    namespaced: d.namespaced,
    shortNames: d.shortNames,
    categories: d.categories,
    verbs: d.verbs,
    statusSubresource: subs.has('status'),
    ...(subs.has('scale') ? { scale: SCALE_PATHS } : {}),
    hasGeneration: GENERATION_KINDS.has(gr),
    allowUnconditionalUpdate: true,
    allowCreateOnUpdate: CREATE_ON_UPDATE_KINDS.has(gr),
    returnDeletedObject: false,
    fieldSelectors: {},
    fieldSelectorStyle: 'builtin',
    strategicMergeKeys: {
      'metadata.ownerReferences': 'uid',
      'status.conditions': 'type',
      // the pod template of a workload merges as a pod spec does
      ...(tmpl ? POD_SPEC_KEYS(tmpl) : {}),
      ...WEBHOOK_CONFIGURATION_MERGE_KEYS[gr],
    },
    strategicSetLists: ['metadata.finalizers'],
    ...(defaults ? { defaults } : {}),
    ...(WORKLOAD_VALIDATORS[gr] ? { validate: WORKLOAD_VALIDATORS[gr] } : {}),
    discoveryOnlySubresources: d.subresources
      .filter((s) => s.name !== 'status' && s.name !== 'scale')
      .map((s) => ({
        name: s.name,
        verbs: s.verbs,
        kind: s.kind,
        ...(s.group ? { group: s.group } : {}),
        ...(s.version ? { version: s.version } : {}),
      })),
    // review kinds (create only: TokenReview, SubjectAccessReview, …) answer without storing anything
    ...(stored ? {} : { ephemeral: true }),
    tableColumns: [AGE],
    storageKey: gr,
    listItemsHaveTypeMeta: false,
    storageVersionHash: d.storageVersionHash,
  };
}

/**
 * Every built-in resource in the recorded server's order: the hand-written definition where one exists for
 * that group/version/resource, else generic storage.
 */
export const BUILTIN_RESOURCES: readonly ResourceType[] = (() => {
  const hand = new Map(HAND_WRITTEN.map((rt) => [`${rt.group}/${rt.version}/${rt.resource}`, rt]));
  const out = DISCOVERY_1_32.map(
    (d) => hand.get(`${d.group}/${d.version}/${d.resource}`) ?? genericResourceType(d),
  );
  // hand-written kinds the recording does not list (none today) stay served
  const listed = new Set(DISCOVERY_1_32.map((d) => `${d.group}/${d.version}/${d.resource}`));
  for (const [k, rt] of hand) if (!listed.has(k)) out.push(rt);
  return out;
})();

/** Pods (core/v1): scheme defaults, QoS class, update rules of the pod strategy, status from the body, table columns. */
import { fieldForbidden } from '../errors.js';
import { getPath, type KObject, type ResourceType } from '../resource-type.js';
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
  sortKeys,
  str,
  validateContainers,
} from './common.js';

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
    col(
      'IP',
      'string',
      'podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.',
      (o) => str(podIP(o)),
      1,
    ),
    col(
      'Node',
      'string',
      'NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate for scheduling by the scheduler defined in schedulerName. Once this field is set, the kubelet for this node becomes responsible for the lifecycle of this pod. This field should not be used to express a desire for the pod to be scheduled on a specific node. https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#nodename',
      (o) => str(getPath(o, 'spec.nodeName')),
      1,
    ),
    col(
      'Nominated Node',
      'string',
      'nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled.',
      (o) => str(getPath(o, 'status.nominatedNodeName')),
      1,
    ),
    col(
      'Readiness Gates',
      'string',
      'If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to "True" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates',
      (o) => {
        const g = getPath(o, 'spec.readinessGates');
        return Array.isArray(g) && g.length ? `0/${g.length}` : '<none>';
      },
      1,
    ),
  ],
});

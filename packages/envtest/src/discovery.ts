/**
 * Discovery documents (protocol §2): legacy APIVersions / APIGroupList / APIGroup / APIResourceList and
 * aggregated discovery v2 (and v2beta1) on /api and /apis.
 */
import type { ResourceType } from './resource-type.js';

/** The served resources grouped by group and version, in preference order. */
export interface ServedGroups {
  /** group name ('' = core) → versions in preference order → resources */
  readonly groups: ReadonlyMap<string, ReadonlyMap<string, readonly ResourceType[]>>;
}

export function groupResources(types: readonly ResourceType[]): ServedGroups {
  const groups = new Map<string, Map<string, ResourceType[]>>();
  for (const rt of types) {
    let g = groups.get(rt.group);
    if (!g) {
      g = new Map();
      groups.set(rt.group, g);
    }
    let v = g.get(rt.version);
    if (!v) {
      v = [];
      g.set(rt.version, v);
    }
    v.push(rt);
  }
  for (const g of groups.values())
    for (const v of g.values()) v.sort((a, b) => (a.resource < b.resource ? -1 : 1));
  const sorted = new Map<string, Map<string, ResourceType[]>>();
  for (const [name, g] of groups)
    sorted.set(name, new Map([...g].sort(([a], [b]) => compareKubeAwareVersions(a, b))));
  return { groups: sorted };
}

const KUBE_VERSION = /^v(\d+)(?:(alpha|beta)(\d+))?$/;

/**
 * Kubernetes version priority (apimachinery `version.CompareKubeAwareVersionStrings`), highest first: GA
 * before beta before alpha, higher major first, then higher minor; names that are not Kubernetes versions
 * come last, alphabetically. Discovery lists a group's versions in this order and prefers the first.
 */
export function compareKubeAwareVersions(a: string, b: string): number {
  const ma = KUBE_VERSION.exec(a);
  const mb = KUBE_VERSION.exec(b);
  if (!ma || !mb) {
    if (ma) return -1;
    if (mb) return 1;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  const rank = (m: RegExpExecArray) => (m[2] === undefined ? 2 : m[2] === 'beta' ? 1 : 0);
  if (rank(ma) !== rank(mb)) return rank(mb) - rank(ma);
  if (Number(ma[1]) !== Number(mb[1])) return Number(mb[1]) - Number(ma[1]);
  return Number(mb[3] ?? 0) - Number(ma[3] ?? 0);
}

export function apiVersions(serverAddress: string): Record<string, unknown> {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function groupEntry(name: string, versions: Iterable<string>): Record<string, unknown> {
  const vs = [...versions].map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
  return { name, versions: vs, preferredVersion: vs[0] };
}

export function apiGroupList(served: ServedGroups): Record<string, unknown> {
  const groups: Record<string, unknown>[] = [];
  for (const [name, versions] of served.groups)
    if (name !== '') groups.push(groupEntry(name, versions.keys()));
  return { kind: 'APIGroupList', apiVersion: 'v1', groups };
}

export function apiGroup(served: ServedGroups, name: string): Record<string, unknown> | undefined {
  const versions = served.groups.get(name);
  if (!versions || name === '') return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', ...groupEntry(name, versions.keys()) };
}

const SUB_VERBS = ['get', 'patch', 'update'];

export function apiResourceList(
  served: ServedGroups,
  group: string,
  version: string,
): Record<string, unknown> | undefined {
  const types = served.groups.get(group)?.get(version);
  if (!types) return undefined;
  const resources: Record<string, unknown>[] = [];
  for (const rt of types) {
    resources.push({
      name: rt.resource,
      singularName: rt.singular,
      namespaced: rt.namespaced,
      kind: rt.kind,
      verbs: [...rt.verbs],
      ...(rt.shortNames.length ? { shortNames: [...rt.shortNames] } : {}),
      ...(rt.categories.length ? { categories: [...rt.categories] } : {}),
      ...(rt.storageVersionHash ? { storageVersionHash: rt.storageVersionHash } : {}),
    });
    if (rt.resource === 'namespaces' && rt.group === '')
      resources.push({
        name: 'namespaces/finalize',
        singularName: '',
        namespaced: false,
        kind: 'Namespace',
        verbs: ['update'],
      });
    if (rt.resource === 'pods' && rt.group === '')
      resources.push({ name: 'pods/log', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get'] });
    for (const s of rt.discoveryOnlySubresources ?? [])
      resources.push({
        name: `${rt.resource}/${s.name}`,
        singularName: '',
        namespaced: rt.namespaced,
        ...(s.group ? { group: s.group, version: s.version } : {}),
        kind: s.kind ?? rt.kind,
        verbs: [...s.verbs],
      });
    const scale = {
      name: `${rt.resource}/scale`,
      singularName: '',
      namespaced: rt.namespaced,
      group: 'autoscaling',
      version: 'v1',
      kind: 'Scale',
      verbs: SUB_VERBS,
    };
    const status = {
      name: `${rt.resource}/status`,
      singularName: '',
      namespaced: rt.namespaced,
      kind: rt.kind,
      verbs: SUB_VERBS,
    };
    // apiextensions-apiserver lists a custom resource's status before its scale; built-in lists are sorted
    for (const sub of rt.crdName !== undefined ? [status, scale] : [scale, status]) {
      if (sub === scale ? rt.scale : rt.statusSubresource) resources.push(sub);
    }
  }
  // sorted by resource, subresources kept in the order above within their resource (the sort is stable)
  const base = (r: Record<string, unknown>) => String(r.name).split('/')[0] ?? '';
  const custom = types.some((rt) => rt.crdName !== undefined);
  resources.sort((a, b) => {
    const ka = custom ? base(a) : String(a.name);
    const kb = custom ? base(b) : String(b.name);
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  });
  // the core group's document carries no apiVersion on a real server
  return group
    ? { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: `${group}/${version}`, resources }
    : { kind: 'APIResourceList', groupVersion: version, resources };
}

function aggregatedResource(rt: ResourceType): Record<string, unknown> {
  const subresources: Record<string, unknown>[] = [];
  // CRDs spell out their own group/version in responseKind; built-ins leave them empty
  const own =
    rt.crdName !== undefined ? { group: rt.group, version: rt.version } : { group: '', version: '' };
  for (const s of rt.discoveryOnlySubresources ?? [])
    subresources.push({
      subresource: s.name,
      responseKind: { group: s.group ?? '', version: s.version ?? '', kind: s.kind ?? rt.kind },
      verbs: [...s.verbs],
    });
  if (rt.resource === 'namespaces' && rt.group === '')
    subresources.push({
      subresource: 'finalize',
      responseKind: { group: '', version: '', kind: 'Namespace' },
      verbs: ['update'],
    });
  if (rt.resource === 'pods' && rt.group === '')
    subresources.push({
      subresource: 'log',
      responseKind: { group: '', version: '', kind: 'Pod' },
      verbs: ['get'],
    });
  const scale = {
    subresource: 'scale',
    responseKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' },
    verbs: SUB_VERBS,
  };
  const status = { subresource: 'status', responseKind: { ...own, kind: rt.kind }, verbs: SUB_VERBS };
  if (rt.crdName !== undefined) {
    // apiextensions-apiserver: status, then scale, unsorted
    if (rt.statusSubresource) subresources.push(status);
    if (rt.scale) subresources.push(scale);
  } else {
    if (rt.scale) subresources.push(scale);
    if (rt.statusSubresource) subresources.push(status);
    subresources.sort((a, b) => (String(a.subresource) < String(b.subresource) ? -1 : 1));
  }
  return {
    resource: rt.resource,
    responseKind: { ...own, kind: rt.kind },
    scope: rt.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: rt.singular,
    verbs: [...rt.verbs],
    ...(rt.shortNames.length ? { shortNames: [...rt.shortNames] } : {}),
    ...(rt.categories.length ? { categories: [...rt.categories] } : {}),
    ...(subresources.length ? { subresources } : {}),
  };
}

/** Aggregated discovery (APIGroupDiscoveryList) for `/api` (core only) or `/apis` (named groups). */
export function aggregatedDiscovery(
  served: ServedGroups,
  core: boolean,
  apiVersion: 'v2' | 'v2beta1',
): Record<string, unknown> {
  const items: Record<string, unknown>[] = [];
  for (const [name, versions] of served.groups) {
    if (core !== (name === '')) continue;
    items.push({
      metadata: core ? { creationTimestamp: null } : { name, creationTimestamp: null },
      versions: [...versions].map(([version, types]) => ({
        version,
        resources: types.map(aggregatedResource),
        freshness: 'Current',
      })),
    });
  }
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: `apidiscovery.k8s.io/${apiVersion}`,
    metadata: {},
    items,
  };
}

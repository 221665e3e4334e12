/**
 * Discovery replies (client-go `discovery`): the `Accept` of aggregated discovery, the shapes of `/api`,
 * `/apis` and `/apis/<g>/<v>` replies, and the kind → mapping tables built from them (subresources skipped).
 */
import { UnexpectedResponseError } from './errors.js';
import type { RESTMapping } from './rest-mapper.js';

/** The `Accept` header client-go sends for aggregated discovery, with a plain JSON fallback. */
export const AGGREGATED_DISCOVERY_ACCEPT =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';
export interface AggregatedResource {
  resource?: string;
  responseKind?: { kind?: string };
  scope?: string;
}
export interface AggregatedList {
  items?: Array<{
    metadata?: { name?: string };
    versions?: Array<{ version?: string; resources?: AggregatedResource[] }>;
  }>;
}
export interface ApiResourceList {
  resources?: Array<{ name?: string; kind?: string; namespaced?: boolean }>;
}
export interface ApiGroupList {
  groups?: Array<{
    name?: string;
    versions?: Array<{ version?: string }>;
    preferredVersion?: { version?: string };
  }>;
}

export type KindMap = Map<string, RESTMapping>;

export interface DiscoveryReply {
  readonly aggregated: boolean;
  readonly body: unknown;
}

export function parseDiscoveryJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new UnexpectedResponseError(`${what}: the discovery reply is not JSON`);
  }
}

export function mappingsFromResourceList(group: string, version: string, list: ApiResourceList): KindMap {
  const out: KindMap = new Map();
  for (const r of list.resources ?? []) {
    if (!r.name || !r.kind || r.name.includes('/')) continue;
    if (out.has(r.kind)) continue;
    out.set(r.kind, {
      gvk: { group, version, kind: r.kind },
      resource: { group, version, resource: r.name },
      scope: r.namespaced ? 'Namespaced' : 'Cluster',
    });
  }
  return out;
}

export function mappingsFromAggregated(
  group: string,
  version: string,
  resources: AggregatedResource[] | undefined,
): KindMap {
  const kinds: KindMap = new Map();
  for (const r of resources ?? []) {
    const k = r.responseKind?.kind;
    if (!r.resource || !k || r.resource.includes('/') || kinds.has(k)) continue;
    kinds.set(k, {
      gvk: { group, version, kind: k },
      resource: { group, version, resource: r.resource },
      scope: r.scope === 'Cluster' ? 'Cluster' : 'Namespaced',
    });
  }
  return kinds;
}

import { isNotFound, statusErrorFromResponse, UnexpectedResponseError } from './errors.js';
import type { HttpTransport } from './http.js';
import { headerValue } from './http.js';
import { apiVersionOf, type GroupVersionKind, type GroupVersionResource, gvkString } from './kinds.js';

/** Whether a resource lives in a namespace (`Namespaced`) or at cluster scope (`Cluster`). */
export type ResourceScope = 'Namespaced' | 'Cluster';

/** How one kind is served: its resource (plural) and scope (apimachinery `meta.RESTMapping`). */
export interface RESTMapping {
  readonly gvk: GroupVersionKind;
  readonly resource: GroupVersionResource;
  readonly scope: ResourceScope;
}

/** RESTMapper knows how to map a kind to the resource that serves it and back (apimachinery `meta.RESTMapper`). */
export interface RESTMapper {
  /**
   * The mapping for a kind.
   * @throws NoKindMatchError when the server does not serve it; StatusError when discovery fails.
   */
  restMapping(gvk: GroupVersionKind): Promise<RESTMapping>;
  /**
   * The kind a resource serves; `version` may be omitted (then the group's preferred version is used).
   * @throws NoKindMatchError when the server does not serve it.
   */
  kindFor(gvr: {
    readonly group: string;
    readonly version?: string;
    readonly resource: string;
  }): Promise<GroupVersionKind>;
  /** Whether the kind is namespaced. @throws NoKindMatchError */
  isNamespaced(gvk: GroupVersionKind): Promise<boolean>;
}

/** No resource serves the kind (apimachinery `NoKindMatchError`). Code `'ERR_NO_KIND_MATCH'`. */
export class NoKindMatchError extends Error {
  readonly code = 'ERR_NO_KIND_MATCH' as const;
  override readonly name = 'NoKindMatchError';
  constructor(readonly what: string) {
    super(`no matches for ${what}`);
  }
}

/** Whether `err` says the kind is not served (e.g. a CRD not installed yet). */
export function isNoMatchError(err: unknown): boolean {
  return err instanceof NoKindMatchError;
}

/** The `Accept` header client-go sends for aggregated discovery, with a plain JSON fallback. */
export const AGGREGATED_DISCOVERY_ACCEPT =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';

interface GroupInfo {
  /** Versions in preference order (preferred first). */
  versions: string[];
  /** version → kind → mapping, for the versions whose resources are loaded. */
  loaded: Map<string, Map<string, RESTMapping>>;
}

interface AggregatedResource {
  resource?: string;
  responseKind?: { kind?: string };
  scope?: string;
}
interface AggregatedList {
  items?: Array<{
    metadata?: { name?: string };
    versions?: Array<{ version?: string; resources?: AggregatedResource[] }>;
  }>;
}
interface ApiResourceList {
  resources?: Array<{ name?: string; kind?: string; namespaced?: boolean }>;
}
interface ApiGroupList {
  groups?: Array<{
    name?: string;
    versions?: Array<{ version?: string }>;
    preferredVersion?: { version?: string };
  }>;
}

/**
 * controller-runtime's lazy, dynamic RESTMapper (`pkg/client/apiutil/restmapper.go`): starts empty and
 * loads on a miss. The first miss fetches `/api` and `/apis` asking for aggregated discovery; a server
 * that offers it gives every group and resource in those two calls. Otherwise only the requested group's
 * versions are fetched (`/api/v1`, `/apis/<g>/<v>`). A 404 for a group-version forgets that group, so a
 * later miss refreshes it (late-installed or removed CRDs). Knowledge only grows on misses; concurrent
 * misses share one load.
 */
export class DynamicRESTMapper implements RESTMapper {
  readonly #transport: HttpTransport;
  #groups: Map<string, GroupInfo> | undefined;
  #aggregated = false;
  readonly #inflight = new Map<string, Promise<void>>();

  constructor(transport: HttpTransport) {
    this.#transport = transport;
  }

  async restMapping(gvk: GroupVersionKind): Promise<RESTMapping> {
    const found = this.#lookup(gvk);
    if (found) return found;
    await this.#load(gvk.group, gvk.version, false);
    const again = this.#lookup(gvk);
    if (again) return again;
    // Refresh once: the group may have appeared since we last looked (controller-runtime re-fetches on NoMatch).
    await this.#load(gvk.group, gvk.version, true);
    const last = this.#lookup(gvk);
    if (last) return last;
    throw new NoKindMatchError(`kind "${gvk.kind}" in version "${apiVersionOf(gvk)}"`);
  }

  async kindFor(gvr: { group: string; version?: string; resource: string }): Promise<GroupVersionKind> {
    const find = (): GroupVersionKind | undefined => {
      const g = this.#groups?.get(gvr.group);
      if (!g) return undefined;
      const versions = gvr.version ? [gvr.version] : g.versions;
      for (const v of versions) {
        for (const m of g.loaded.get(v)?.values() ?? [])
          if (m.resource.resource === gvr.resource) return m.gvk;
      }
      return undefined;
    };
    const hit = find();
    if (hit) return hit;
    await this.#load(gvr.group, gvr.version, false);
    const again = find();
    if (again) return again;
    await this.#load(gvr.group, gvr.version, true);
    const last = find();
    if (last) return last;
    throw new NoKindMatchError(`resource "${gvr.resource}" in group "${gvr.group}"`);
  }

  async isNamespaced(gvk: GroupVersionKind): Promise<boolean> {
    return (await this.restMapping(gvk)).scope === 'Namespaced';
  }

  #lookup(gvk: GroupVersionKind): RESTMapping | undefined {
    return this.#groups?.get(gvk.group)?.loaded.get(gvk.version)?.get(gvk.kind);
  }

  #load(group: string, version: string | undefined, refresh: boolean): Promise<void> {
    const key = `${refresh}|${group}|${version ?? ''}`;
    let p = this.#inflight.get(key);
    if (!p) {
      p = this.#doLoad(group, version, refresh).finally(() => this.#inflight.delete(key));
      this.#inflight.set(key, p);
    }
    return p;
  }

  async #doLoad(group: string, version: string | undefined, refresh: boolean): Promise<void> {
    if (!this.#groups || refresh) await this.#loadGroups();
    if (this.#aggregated) return;
    const info = this.#groups?.get(group);
    if (!info) return;
    const versions = version ? [version] : info.versions;
    for (const v of versions) {
      if (!info.versions.includes(v)) continue;
      if (info.loaded.has(v) && !refresh) continue;
      try {
        const list = await this.#getJson<ApiResourceList>(group === '' ? `/api/${v}` : `/apis/${group}/${v}`);
        info.loaded.set(v, mappingsFromResourceList(group, v, list));
      } catch (err) {
        if (isNotFound(err)) {
          this.#groups?.delete(group);
          return;
        }
        throw err;
      }
    }
  }

  async #loadGroups(): Promise<void> {
    const groups = new Map<string, GroupInfo>();
    const core = await this.#transport.request({
      method: 'GET',
      path: '/api',
      headers: { accept: AGGREGATED_DISCOVERY_ACCEPT },
    });
    const coreText = await core.body.text();
    if (core.status >= 300) throw statusErrorFromResponse(core.status, coreText, 'GET /api');
    const aggregated = (headerValue(core.headers, 'content-type') ?? '').includes('as=APIGroupDiscoveryList');
    const named = await this.#transport.request({
      method: 'GET',
      path: '/apis',
      headers: { accept: AGGREGATED_DISCOVERY_ACCEPT },
    });
    const namedText = await named.body.text();
    // A server with only the core group may not serve /apis.
    if (named.status >= 300 && named.status !== 404) {
      throw statusErrorFromResponse(named.status, namedText, 'GET /apis');
    }
    const namedBody = named.status === 404 ? undefined : parseJson(namedText, 'GET /apis');
    const coreBody = parseJson(coreText, 'GET /api');
    if (aggregated) {
      addAggregated(groups, coreBody as AggregatedList);
      if (namedBody) addAggregated(groups, namedBody as AggregatedList);
    } else {
      const versions = ((coreBody as { versions?: string[] }).versions ?? []).filter(
        (v) => typeof v === 'string',
      );
      groups.set('', { versions, loaded: new Map() });
      for (const g of (namedBody as ApiGroupList | undefined)?.groups ?? []) {
        if (!g.name) continue;
        const all = (g.versions ?? []).map((v) => v.version).filter((v): v is string => !!v);
        const pref = g.preferredVersion?.version;
        const ordered = pref && all.includes(pref) ? [pref, ...all.filter((v) => v !== pref)] : all;
        // Keep what we already know about a group whose versions did not change.
        const old = this.#groups?.get(g.name);
        groups.set(g.name, {
          versions: ordered,
          loaded: old && sameList(old.versions, ordered) ? old.loaded : new Map(),
        });
      }
      const oldCore = this.#groups?.get('');
      const newCore = groups.get('');
      if (oldCore && newCore && sameList(oldCore.versions, newCore.versions)) newCore.loaded = oldCore.loaded;
    }
    this.#aggregated = aggregated;
    this.#groups = groups;
  }

  async #getJson<T>(path: string): Promise<T> {
    const res = await this.#transport.request({
      method: 'GET',
      path,
      headers: { accept: 'application/json' },
    });
    const text = await res.body.text();
    if (res.status >= 300) throw statusErrorFromResponse(res.status, text, `GET ${path}`);
    return parseJson(text, `GET ${path}`) as T;
  }
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new UnexpectedResponseError(`${what}: the discovery reply is not JSON`);
  }
}

function mappingsFromResourceList(
  group: string,
  version: string,
  list: ApiResourceList,
): Map<string, RESTMapping> {
  const out = new Map<string, RESTMapping>();
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

function addAggregated(groups: Map<string, GroupInfo>, list: AggregatedList): void {
  for (const item of list.items ?? []) {
    const group = item.metadata?.name ?? '';
    const info: GroupInfo = { versions: [], loaded: new Map() };
    for (const v of item.versions ?? []) {
      if (!v.version) continue;
      info.versions.push(v.version);
      const kinds = new Map<string, RESTMapping>();
      for (const r of v.resources ?? []) {
        const k = r.responseKind?.kind;
        if (!r.resource || !k || r.resource.includes('/') || kinds.has(k)) continue;
        kinds.set(k, {
          gvk: { group, version: v.version, kind: k },
          resource: { group, version: v.version, resource: r.resource },
          scope: r.scope === 'Cluster' ? 'Cluster' : 'Namespaced',
        });
      }
      info.loaded.set(v.version, kinds);
    }
    groups.set(group, info);
  }
}

/** A fixed RESTMapper over known mappings (for tests and for callers that know their kinds). */
export class StaticRESTMapper implements RESTMapper {
  readonly #byKind = new Map<string, RESTMapping>();
  constructor(mappings: readonly RESTMapping[]) {
    for (const m of mappings) this.#byKind.set(gvkString(m.gvk), m);
  }
  async restMapping(gvk: GroupVersionKind): Promise<RESTMapping> {
    const m = this.#byKind.get(gvkString(gvk));
    if (!m) throw new NoKindMatchError(`kind "${gvk.kind}" in version "${apiVersionOf(gvk)}"`);
    return m;
  }
  async kindFor(gvr: { group: string; version?: string; resource: string }): Promise<GroupVersionKind> {
    for (const m of this.#byKind.values()) {
      if (
        m.resource.group === gvr.group &&
        m.resource.resource === gvr.resource &&
        (!gvr.version || m.resource.version === gvr.version)
      ) {
        return m.gvk;
      }
    }
    throw new NoKindMatchError(`resource "${gvr.resource}" in group "${gvr.group}"`);
  }
  async isNamespaced(gvk: GroupVersionKind): Promise<boolean> {
    return (await this.restMapping(gvk)).scope === 'Namespaced';
  }
}

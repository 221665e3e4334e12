import { LRUCache } from 'lru-cache';
import { type Clock, realClock } from './clock.js';
import { isNotFound, StatusError, statusErrorFromResponse, UnexpectedResponseError } from './errors.js';
import type { HttpTransport } from './http.js';
import { headerValue } from './http.js';
import {
  apiVersionOf,
  type GroupVersion,
  type GroupVersionKind,
  type GroupVersionResource,
  gvkString,
} from './kinds.js';

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
   * The mapping for a kind. An empty `version` asks for the group's preferred version that serves the kind
   * (apimachinery `RESTMapping(groupKind)` without versions).
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
  /**
   * Forgets what is known about one group version, so the next lookup asks discovery again. The client calls
   * it when a request for a mapped kind is answered with a 404 for the resource (not for an object): the
   * group version, or the kind in it, has gone (a CRD deleted, a version no longer served). It also calls it,
   * with `{ rateLimited: true }`, before acting on a scope it only has from the cached mapping (refusing a
   * request for want of a namespace, or dropping the caller's namespace for a cluster-scoped kind): the CRD
   * may have been re-created with the other scope. Optional: a static mapper has nothing to forget.
   * @returns whether the group version was forgotten (`false`: a rate-limited call that was held back).
   */
  invalidate?(gv: GroupVersion, options?: InvalidateOptions): boolean | undefined;
}

/** Options of {@link RESTMapper.invalidate}. */
export interface InvalidateOptions {
  /**
   * The caller doubts the mapping rather than knows it is gone: forget the group version at most once per
   * the mapper's refresh interval (`missRefreshIntervalMs` for {@link DynamicRESTMapper}), so a request that
   * is wrong every time (a namespaced kind without a namespace) costs at most one discovery request per
   * interval. @defaultValue false
   */
  readonly rateLimited?: boolean;
}

/** What {@link NoKindMatchError} knows about the group the kind was looked for in. */
export interface NoKindMatchDetails {
  /** The kind looked for (its `version` is `''` when none was asked for). */
  readonly gvk?: GroupVersionKind;
  /** Versions of the group that serve the kind, preferred first (empty: none does). */
  readonly servedVersions?: readonly string[];
  /** Every version the group serves, preferred first (empty: the group is not served at all). */
  readonly groupVersions?: readonly string[];
}

/** No resource serves the kind (apimachinery `NoKindMatchError`). Code `'ERR_NO_KIND_MATCH'`. */
export class NoKindMatchError extends Error {
  readonly code = 'ERR_NO_KIND_MATCH' as const;
  override readonly name = 'NoKindMatchError';
  /** The kind looked for, when known. */
  readonly gvk: GroupVersionKind | undefined;
  /** Versions of the kind's group that do serve the kind (preferred first); empty when none. */
  readonly servedVersions: readonly string[];
  /** Versions the kind's group serves at all (preferred first); empty when the group is not served. */
  readonly groupVersions: readonly string[];
  constructor(
    readonly what: string,
    details: NoKindMatchDetails = {},
  ) {
    super(`no matches for ${what}${describeServed(details)}`);
    this.gvk = details.gvk;
    this.servedVersions = details.servedVersions ?? [];
    this.groupVersions = details.groupVersions ?? [];
  }
}

function describeServed(d: NoKindMatchDetails): string {
  if (!d.gvk) return '';
  const group = d.gvk.group === '' ? 'the core group' : `group "${d.gvk.group}"`;
  if (d.servedVersions?.length)
    return ` (the kind is served in ${d.servedVersions.map((v) => apiVersionOf({ group: d.gvk!.group, version: v })).join(', ')})`;
  if (d.groupVersions?.length)
    return ` (${group} serves ${d.groupVersions.join(', ')}, none of them has kind "${d.gvk.kind}")`;
  if (d.groupVersions) return ` (${group} is not served)`;
  return '';
}

/** Whether `err` says the kind is not served (e.g. a CRD not installed yet). */
export function isNoMatchError(err: unknown): boolean {
  return (
    err instanceof NoKindMatchError ||
    (err instanceof Error && (err as { code?: unknown }).code === 'ERR_NO_KIND_MATCH')
  );
}

/**
 * Whether `err` is a 404 for the **resource** rather than for an object: the reply is not a Status naming an
 * object (`details.name`), e.g. kube-apiserver's "the server could not find the requested resource" (empty
 * details) or a bare `404 page not found` for a group version that is not served. A missing object, or a
 * create in a missing namespace, names the object and is not a resource 404.
 */
export function isResourceNotFound(err: unknown): boolean {
  if (!(err instanceof StatusError) || !isNotFound(err)) return false;
  return !err.status.details?.name;
}

/** The `Accept` header client-go sends for aggregated discovery, with a plain JSON fallback. */
export const AGGREGATED_DISCOVERY_ACCEPT =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';

/** Options of {@link DynamicRESTMapper}. */
export interface DynamicRESTMapperOptions {
  /**
   * Repeated misses for one kind refresh discovery at most once per this many ms (a reconcile that asks for
   * a kind that is not installed does not send discovery requests on every call). A kind seen for the first
   * time, and the first load, are never held back.
   * @defaultValue 5000
   */
  readonly missRefreshIntervalMs?: number;
  /** Most group versions whose resource lists are kept (least recently used are dropped and re-fetched). @defaultValue 1000 */
  readonly maxGroupVersions?: number;
  /** Most kinds whose last miss is remembered for the rate limit. @defaultValue 1000 */
  readonly maxMissedKinds?: number;
  /** Ask for aggregated discovery (one round trip for every group). @defaultValue true */
  readonly aggregatedDiscovery?: boolean;
  /** Time source of the miss rate limit. @defaultValue realClock */
  readonly clock?: Clock;
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

type KindMap = Map<string, RESTMapping>;

const gvKey = (group: string, version: string): string => `${group}/${version}`;

/**
 * controller-runtime's lazy, dynamic RESTMapper (`pkg/client/apiutil/restmapper.go`), made to follow the
 * cluster as it changes:
 *
 * - It starts empty and loads on the first lookup: `/api` and `/apis`, asking for aggregated discovery. A
 *   server that offers it gives every group and resource in those two calls; otherwise a group version's
 *   resources are fetched when first needed (`/api/v1`, `/apis/<g>/<v>`).
 * - A miss refreshes the group list (only `/apis` for a named group, only `/api` for the core group) and
 *   looks again, so a CRD installed later is found on its first lookup. Groups and versions that are no
 *   longer listed are forgotten; a group version whose resource list answers 404 is forgotten.
 * - Repeated misses for the same kind refresh at most once per `missRefreshIntervalMs`; in between they fail
 *   at once with {@link NoKindMatchError}, which names the versions of the group that do exist.
 * - {@link invalidate} forgets one group version (the client calls it on a 404 for the resource, and,
 *   rate-limited like a miss, before refusing a request or dropping its namespace on a cached scope).
 * - Resource lists and the miss memory are bounded LRU caches. Concurrent loads of the same thing share one
 *   request.
 */
export class DynamicRESTMapper implements RESTMapper {
  readonly #transport: HttpTransport;
  readonly #clock: Clock;
  readonly #missIntervalMs: number;
  readonly #accept: string;
  /** group → served versions, preferred first. Undefined until the first load. */
  #groups: Map<string, string[]> | undefined;
  /** `group/version` → kind → mapping. */
  readonly #resources: LRUCache<string, KindMap>;
  /** Miss key (GVK or GVR) → clock time of the refresh it caused. */
  readonly #missed: LRUCache<string, number>;
  readonly #inflight = new Map<string, Promise<void>>();

  constructor(transport: HttpTransport, options: DynamicRESTMapperOptions = {}) {
    const interval = options.missRefreshIntervalMs ?? 5000;
    if (!(interval >= 0)) throw new RangeError('DynamicRESTMapper: missRefreshIntervalMs must be ≥ 0');
    this.#transport = transport;
    this.#clock = options.clock ?? realClock;
    this.#missIntervalMs = interval;
    this.#accept = options.aggregatedDiscovery === false ? 'application/json' : AGGREGATED_DISCOVERY_ACCEPT;
    this.#resources = new LRUCache({ max: Math.max(1, options.maxGroupVersions ?? 1000) });
    this.#missed = new LRUCache({ max: Math.max(1, options.maxMissedKinds ?? 1000) });
  }

  async restMapping(gvk: GroupVersionKind): Promise<RESTMapping> {
    const find = () => this.#find(gvk.group, gvk.version, (m) => m.get(gvk.kind));
    const hit = await find();
    if (hit) return hit;
    if (this.#mayRefresh(`kind|${gvkString(gvk)}`)) {
      await this.#refresh(gvk.group);
      const again = await find();
      if (again) return again;
    }
    throw new NoKindMatchError(
      gvk.version
        ? `kind "${gvk.kind}" in version "${apiVersionOf(gvk)}"`
        : `kind "${gvk.kind}" in group "${gvk.group}"`,
      await this.#servedDetails(gvk),
    );
  }

  async kindFor(gvr: { group: string; version?: string; resource: string }): Promise<GroupVersionKind> {
    const pick = (m: KindMap) => {
      for (const mapping of m.values()) if (mapping.resource.resource === gvr.resource) return mapping;
      return undefined;
    };
    const find = () => this.#find(gvr.group, gvr.version ?? '', pick);
    const hit = await find();
    if (hit) return hit.gvk;
    if (this.#mayRefresh(`resource|${gvr.group}|${gvr.version ?? ''}|${gvr.resource}`)) {
      await this.#refresh(gvr.group);
      const again = await find();
      if (again) return again.gvk;
    }
    throw new NoKindMatchError(`resource "${gvr.resource}" in group "${gvr.group}"`);
  }

  async isNamespaced(gvk: GroupVersionKind): Promise<boolean> {
    return (await this.restMapping(gvk)).scope === 'Namespaced';
  }

  invalidate(gv: GroupVersion, options: InvalidateOptions = {}): boolean {
    const key = gvKey(gv.group, gv.version);
    if (options.rateLimited && !this.#mayRefresh(`doubt|${key}`)) return false;
    this.#resources.delete(key);
    return true;
  }

  /** Looks in `version` (or every version of the group, preferred first, when `version` is `''`). */
  async #find(
    group: string,
    version: string,
    pick: (m: KindMap) => RESTMapping | undefined,
  ): Promise<RESTMapping | undefined> {
    if (!this.#groups) await this.#once('initial', () => this.#loadInitial());
    const versions = this.#groups?.get(group);
    if (!versions) return undefined;
    for (const v of version ? [version] : [...versions]) {
      if (!this.#groups?.get(group)?.includes(v)) continue;
      const kinds = await this.#kindsOf(group, v);
      const m = kinds && pick(kinds);
      if (m) return m;
    }
    return undefined;
  }

  /** The resource list of one served group version, fetched when not cached; undefined when it is gone. */
  async #kindsOf(group: string, version: string): Promise<KindMap | undefined> {
    const key = gvKey(group, version);
    const cached = this.#resources.get(key);
    if (cached) return cached;
    await this.#once(`gv|${key}`, async () => {
      try {
        const list = await this.#getJson<ApiResourceList>(
          group === '' ? `/api/${version}` : `/apis/${group}/${version}`,
          'application/json',
        );
        this.#resources.set(key, mappingsFromResourceList(group, version, list));
      } catch (err) {
        if (!isNotFound(err)) throw err;
        // The group version went away since the group list was read: forget it.
        const versions = this.#groups?.get(group);
        if (versions) {
          const left = versions.filter((v) => v !== version);
          if (left.length) this.#groups?.set(group, left);
          else this.#groups?.delete(group);
        }
      }
    });
    return this.#resources.get(key);
  }

  /** Whether a miss for `key` may refresh discovery now (one refresh per key per interval). */
  #mayRefresh(key: string): boolean {
    const now = this.#clock.now();
    const last = this.#missed.get(key);
    if (last !== undefined && now - last < this.#missIntervalMs) return false;
    this.#missed.set(key, now);
    return true;
  }

  /** Shares one run of `fn` among concurrent callers with the same key. */
  #once(key: string, fn: () => Promise<void>): Promise<void> {
    let p = this.#inflight.get(key);
    if (!p) {
      p = fn().finally(() => this.#inflight.delete(key));
      this.#inflight.set(key, p);
    }
    return p;
  }

  async #loadInitial(): Promise<void> {
    const [core, named] = await Promise.all([this.#discover('/api'), this.#discover('/apis')]);
    const groups = new Map<string, string[]>();
    this.#apply(groups, core, true);
    this.#apply(groups, named, false);
    this.#groups = groups;
  }

  /** Re-reads the group list that holds `group` (`/api` for the core group, `/apis` for the others). */
  #refresh(group: string): Promise<void> {
    const core = group === '';
    return this.#once(core ? 'refresh|core' : `refresh|${group}`, async () => {
      const reply = await this.#discover(core ? '/api' : '/apis');
      const old = this.#groups ?? new Map<string, string[]>();
      const groups = new Map([...old].filter(([g]) => (g === '') !== core));
      this.#apply(groups, reply, core);
      // What the reply no longer lists is forgotten. The missed group's resource lists are re-read (a kind
      // may have appeared in a version we know); an aggregated reply has just replaced them all.
      for (const [g, versions] of old) {
        if ((g === '') !== core) continue;
        const now = groups.get(g) ?? [];
        for (const v of versions)
          if (!now.includes(v) || (g === group && !reply.aggregated)) this.#resources.delete(gvKey(g, v));
      }
      this.#groups = groups;
    });
  }

  /** Records one discovery reply: group versions, and for aggregated replies every resource list. */
  #apply(groups: Map<string, string[]>, reply: DiscoveryReply, core: boolean): void {
    if (!reply.body) return;
    if (reply.aggregated) {
      for (const item of (reply.body as AggregatedList).items ?? []) {
        const group = item.metadata?.name ?? '';
        const versions: string[] = [];
        for (const v of item.versions ?? []) {
          if (!v.version) continue;
          versions.push(v.version);
          this.#resources.set(gvKey(group, v.version), mappingsFromAggregated(group, v.version, v.resources));
        }
        if (versions.length) groups.set(group, versions);
      }
      return;
    }
    if (core) {
      const versions = ((reply.body as { versions?: unknown[] }).versions ?? []).filter(
        (v): v is string => typeof v === 'string',
      );
      if (versions.length) groups.set('', versions);
      return;
    }
    for (const g of (reply.body as ApiGroupList).groups ?? []) {
      if (!g.name) continue;
      const all = (g.versions ?? []).map((v) => v.version).filter((v): v is string => !!v);
      const pref = g.preferredVersion?.version;
      if (all.length)
        groups.set(g.name, pref && all.includes(pref) ? [pref, ...all.filter((v) => v !== pref)] : all);
    }
  }

  async #servedDetails(gvk: GroupVersionKind): Promise<NoKindMatchDetails> {
    const groupVersions = [...(this.#groups?.get(gvk.group) ?? [])];
    const servedVersions: string[] = [];
    for (const v of groupVersions) {
      // Only what is cached or cheap to learn: a failed lookup for the message must not fail the error.
      const kinds = await this.#kindsOf(gvk.group, v).catch(() => undefined);
      if (kinds?.has(gvk.kind)) servedVersions.push(v);
    }
    return { gvk, servedVersions, groupVersions };
  }

  async #discover(path: '/api' | '/apis'): Promise<DiscoveryReply> {
    const res = await this.#transport.request({ method: 'GET', path, headers: { accept: this.#accept } });
    const text = await res.body.text();
    // A server with only the core group may not serve /apis.
    if (path === '/apis' && res.status === 404) return { aggregated: false, body: undefined };
    if (res.status >= 300) throw statusErrorFromResponse(res.status, text, `GET ${path}`);
    const aggregated = (headerValue(res.headers, 'content-type') ?? '').includes('as=APIGroupDiscoveryList');
    return { aggregated, body: parseJson(text, `GET ${path}`) };
  }

  async #getJson<T>(path: string, accept: string): Promise<T> {
    const res = await this.#transport.request({ method: 'GET', path, headers: { accept } });
    const text = await res.body.text();
    if (res.status >= 300) throw statusErrorFromResponse(res.status, text, `GET ${path}`);
    return parseJson(text, `GET ${path}`) as T;
  }
}

interface DiscoveryReply {
  readonly aggregated: boolean;
  readonly body: unknown;
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new UnexpectedResponseError(`${what}: the discovery reply is not JSON`);
  }
}

function mappingsFromResourceList(group: string, version: string, list: ApiResourceList): KindMap {
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

function mappingsFromAggregated(
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

/** A fixed RESTMapper over known mappings (for tests and for callers that know their kinds). */
export class StaticRESTMapper implements RESTMapper {
  readonly #byKind = new Map<string, RESTMapping>();
  readonly #mappings: readonly RESTMapping[];
  constructor(mappings: readonly RESTMapping[]) {
    this.#mappings = [...mappings];
    for (const m of mappings) this.#byKind.set(gvkString(m.gvk), m);
  }
  async restMapping(gvk: GroupVersionKind): Promise<RESTMapping> {
    const m = gvk.version
      ? this.#byKind.get(gvkString(gvk))
      : this.#mappings.find((x) => x.gvk.group === gvk.group && x.gvk.kind === gvk.kind);
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

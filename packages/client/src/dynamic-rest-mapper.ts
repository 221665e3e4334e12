import { type Clock, realClock } from '@kubeloop/core';
import { LRUCache } from 'lru-cache';
import {
  AGGREGATED_DISCOVERY_ACCEPT,
  type AggregatedList,
  type ApiGroupList,
  type ApiResourceList,
  type DiscoveryReply,
  type KindMap,
  mappingsFromAggregated,
  mappingsFromResourceList,
  parseDiscoveryJson,
} from './discovery.js';
import { isNotFound, statusErrorFromResponse } from './errors.js';
import { type HttpTransport, headerValue } from './http.js';
import { apiVersionOf, type GroupVersion, type GroupVersionKind, gvkString } from './kinds.js';
import {
  type InvalidateOptions,
  type NoKindMatchDetails,
  NoKindMatchError,
  type RESTMapper,
  type RESTMapping,
} from './rest-mapper.js';

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
    return { aggregated, body: parseDiscoveryJson(text, `GET ${path}`) };
  }

  async #getJson<T>(path: string, accept: string): Promise<T> {
    const res = await this.#transport.request({ method: 'GET', path, headers: { accept } });
    const text = await res.body.text();
    if (res.status >= 300) throw statusErrorFromResponse(res.status, text, `GET ${path}`);
    return parseDiscoveryJson(text, `GET ${path}`) as T;
  }
}

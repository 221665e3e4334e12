import type { Client, GroupVersionKind, Kind, KubeObject, ObjectList, WatchEvent } from '@kubeloop/client';
import { matchesLabelRequirements, parseLabelSelector } from '@kubeloop/client/apiutil';
import { NoKindMatchError } from '@kubeloop/client/errors';
import { FakeServer } from './fake-server.js';

export interface RecordedCall {
  readonly verb: 'list' | 'watch';
  readonly kind: string;
  readonly namespace: string | undefined;
  readonly labelSelector: unknown;
  readonly fieldSelector: unknown;
  readonly resourceVersion: string | undefined;
  /** The caller asked for each object's JSON as received (a list's `decodeItem`, a watch's `keepObjectJson`). */
  readonly keepsJson: boolean;
  readonly signal: AbortSignal;
}

/**
 * A client over {@link FakeServer}s, one per kind (by `kind.kind`): lists and watches are filtered by
 * namespace and by label selector like the API server does; the RESTMapper knows the scopes given.
 */
export class FakeClient {
  readonly servers = new Map<string, FakeServer>();
  readonly calls: RecordedCall[] = [];
  readonly scopes: Record<string, 'Namespaced' | 'Cluster'>;
  readonly served = new Set<string>();

  constructor(
    scopes: Record<string, 'Namespaced' | 'Cluster'> = { ConfigMap: 'Namespaced', Secret: 'Namespaced' },
  ) {
    this.scopes = scopes;
    for (const k of Object.keys(scopes)) this.served.add(k);
  }

  server(kind: string): FakeServer {
    let s = this.servers.get(kind);
    if (!s) {
      s = new FakeServer(0);
      this.servers.set(kind, s);
    }
    return s;
  }

  readonly restMapper = {
    restMapping: async (gvk: GroupVersionKind) => {
      if (!this.served.has(gvk.kind))
        throw new NoKindMatchError(`kind ${gvk.kind} in version ${gvk.version}`);
      return {
        gvk,
        resource: { group: gvk.group, version: gvk.version, resource: `${gvk.kind.toLowerCase()}s` },
        scope: this.scopes[gvk.kind] ?? 'Namespaced',
      };
    },
    isNamespaced: async (gvk: GroupVersionKind) =>
      (await this.restMapper.restMapping(gvk)).scope === 'Namespaced',
    kindFor: async () => {
      throw new Error('not used');
    },
  };

  #filter(opts: Record<string, unknown>) {
    const reqs =
      typeof opts.labelSelector === 'string' && opts.labelSelector
        ? parseLabelSelector(opts.labelSelector)
        : [];
    const ns = opts.namespace as string | undefined;
    return (o: KubeObject) =>
      (!ns || o.metadata?.namespace === ns) && matchesLabelRequirements(reqs, o.metadata?.labels);
  }

  #record(verb: RecordedCall['verb'], kind: Kind, o: Record<string, unknown>): void {
    this.calls.push({
      verb,
      kind: kind.kind,
      namespace: o.namespace as string | undefined,
      labelSelector: o.labelSelector,
      fieldSelector: o.fieldSelector,
      resourceVersion: o.resourceVersion as string | undefined,
      keepsJson: typeof o.decodeItem === 'function' || o.keepObjectJson === true,
      signal: o.signal as AbortSignal,
    });
  }

  async list(kind: Kind, o: Record<string, unknown> & { signal: AbortSignal }): Promise<ObjectList> {
    this.#record('list', kind, o);
    // selectors first, as a server applies them; then what an item decoder makes of each kept item's JSON
    const { decodeItem, ...rest } = o as typeof o & { decodeItem?: (json: string) => KubeObject };
    const l = await this.server(kind.kind).list(rest);
    const items = l.items.filter(this.#filter(o));
    return { ...l, items: decodeItem ? items.map((x) => decodeItem(JSON.stringify(x))) : items };
  }

  watch(kind: Kind, o: Record<string, unknown> & { signal: AbortSignal }): AsyncIterable<WatchEvent> {
    this.#record('watch', kind, o);
    const inner = this.server(kind.kind).watch(o as never);
    const keep = this.#filter(o);
    return (async function* () {
      for await (const ev of inner)
        if (ev.type === 'BOOKMARK' || ev.type === 'ERROR' || keep(ev.object)) yield ev;
    })();
  }

  asClient(): Client {
    return this as unknown as Client;
  }
}

import { apiVersionOf, type GroupVersionKind, gvkString } from './kinds.js';
import { NoKindMatchError, type RESTMapper, type RESTMapping } from './rest-mapper.js';

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

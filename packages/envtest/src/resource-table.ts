/** The set of served resource types: the built-ins plus those CRDs add at runtime. */
import { BUILTIN_RESOURCES } from './builtin/index.js';
import { groupResources, type ServedGroups } from './discovery.js';
import type { ResourceType } from './resource-type.js';

export class ResourceTable {
  readonly #byGvr = new Map<string, ResourceType>();
  #served: ServedGroups | undefined;
  #version = 0;

  constructor(initial: readonly ResourceType[] = BUILTIN_RESOURCES) {
    for (const rt of initial) this.add(rt);
  }

  /** Bumped on every change (used for discovery/OpenAPI hashes). */
  get version(): number {
    return this.#version;
  }

  add(rt: ResourceType): void {
    this.#byGvr.set(`${rt.group}/${rt.version}/${rt.resource}`, rt);
    this.#served = undefined;
    this.#version++;
  }

  /** Remove every version of a CRD's resource. */
  removeCrd(crdName: string): void {
    for (const [k, rt] of this.#byGvr) if (rt.crdName === crdName) this.#byGvr.delete(k);
    this.#served = undefined;
    this.#version++;
  }

  lookup(group: string, version: string, resource: string): ResourceType | undefined {
    return this.#byGvr.get(`${group}/${version}/${resource}`);
  }

  /** Every served type. */
  all(): ResourceType[] {
    return [...this.#byGvr.values()];
  }

  /** Find by group/resource plural in any version (first registered). */
  findByGroupResource(group: string, resource: string): ResourceType | undefined {
    for (const rt of this.#byGvr.values()) if (rt.group === group && rt.resource === resource) return rt;
    return undefined;
  }

  served(): ServedGroups {
    this.#served ??= groupResources(this.all());
    return this.#served;
  }
}

// Which namespaces the informer cache watches: the defaults (changeable while it runs), per-kind overrides, and
// the check that refuses a read outside them.
import type { Kind, RESTMapper } from '@kubeloop/client';
import { gvkOf, gvkString } from '@kubeloop/client/apiutil';
import { CacheOptionsError, UnknownNamespaceError } from '../cache-errors.js';
import type { ByObject, InformerCacheOptions } from '../cache-options.js';

/** What a change of the default namespaces adds and removes. */
export interface NamespaceChange {
  readonly added: readonly string[];
  readonly removed: readonly string[];
}

/**
 * The cache's namespaces: `defaultNamespaces` (or the deprecated `namespace`) as it is now, and each kind's
 * `byObject.namespaces`, which overrides it and never changes.
 */
export class NamespaceScope {
  #defaults: readonly string[];

  constructor(
    options: Pick<InformerCacheOptions, 'defaultNamespaces' | 'namespace'>,
    private readonly byObject: ReadonlyMap<string, ByObject>,
    private readonly restMapper: () => RESTMapper,
  ) {
    this.#defaults = [
      ...new Set(options.defaultNamespaces ?? (options.namespace ? [options.namespace] : [])),
    ];
  }

  /** The default namespaces now; empty: all (a `''` among them also means all). */
  defaults(): readonly string[] {
    return this.#defaults;
  }

  /** The namespaces the informers of cache key `key` watch; empty: all. */
  of(key: string): readonly string[] {
    const ns = this.byObject.get(key)?.namespaces ?? this.#defaults;
    return ns.includes('') ? [] : ns;
  }

  /** Whether the kind under `key` follows the default namespaces (it has no `byObject.namespaces` of its own). */
  followsDefaults(key: string): boolean {
    return this.byObject.get(key)?.namespaces === undefined;
  }

  /**
   * Makes `next` the default namespaces and says what that adds and removes.
   * @throws CacheOptionsError when the cache watches every namespace (it has one cluster-wide informer per
   *   kind: restricting it means new informers, so build the cache with `defaultNamespaces`), when `next` is
   *   empty (empty means "all namespaces" where the option is written; a cache restricted to no namespace
   *   would read nothing) or holds something other than non-empty strings (the error names `namespaces[i]`).
   */
  change(next: readonly string[]): NamespaceChange {
    if (this.#defaults.length === 0 || this.#defaults.includes(''))
      throw new CacheOptionsError(
        'defaultNamespaces can only change on a cache restricted to namespaces; this one watches every namespace (build it with defaultNamespaces)',
      );
    if (!Array.isArray(next)) throw new CacheOptionsError('namespaces must be an array of namespace names');
    next.forEach((ns, i) => {
      if (typeof ns !== 'string' || ns === '')
        throw new CacheOptionsError(
          `namespaces[${i}] must be a non-empty namespace name, got ${JSON.stringify(ns)}`,
        );
    });
    const wanted = [...new Set(next)];
    if (wanted.length === 0)
      throw new CacheOptionsError(
        'namespaces must name at least one namespace (an empty list means every namespace, which a restricted cache can not become)',
      );
    const added = wanted.filter((ns) => !this.#defaults.includes(ns));
    const removed = this.#defaults.filter((ns) => !wanted.includes(ns));
    this.#defaults = wanted;
    return { added, removed };
  }

  /**
   * A namespace-restricted cache refuses a read of a namespaced kind outside its namespaces
   * (controller-runtime `multiNamespaceCache`): `namespace` is the key's or the list's (`undefined`: a list
   * of every watched namespace, allowed). Cluster-scoped kinds are never refused.
   * @throws UnknownNamespaceError
   */
  async check(kind: Kind, key: string, namespace: string | undefined, name?: string): Promise<void> {
    const watched = this.of(key);
    if (watched.length === 0) return;
    if (namespace === undefined && name === undefined) return;
    if (namespace && watched.includes(namespace)) return;
    if (!(await this.restMapper().isNamespaced(gvkOf(kind)))) return;
    throw new UnknownNamespaceError(gvkString(gvkOf(kind)), namespace ?? '', watched, name);
  }
}

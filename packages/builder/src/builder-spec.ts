/**
 * What the single-cluster and the multi-cluster controller builders share: the watches they collect
 * (`for`, `owns`, `watches`, event filters, name, options), the checks `build`/`complete` make, the watch
 * entries they turn into sources, and the read-your-own-writes wait. Not exported from the package: the fluent
 * calls that fill it are `ControllerBuilderBase`'s (builder-base.ts).
 */
import type { Cache, InformerCache } from '@kubeloop/cache';
import type { Kind, KubeObject, RESTMapper } from '@kubeloop/client';
import type { Cluster } from './cluster/cluster.js';
import { ControllerError } from './controller-options.js';
import { type EventHandler, enqueueRequestForObject, enqueueRequestForOwner } from './handler.js';
import type { Logger } from './logger.js';
import type { Predicate } from './predicate.js';
import type { Reconciler } from './reconcile.js';
import { KindSource, type Source } from './source.js';

/** The controller names taken in each manager (the manager object is the key, so a dropped manager frees its set). */
const takenNames = new WeakMap<object, Set<string>>();

/**
 * Takes `name` for a controller of `mgr`: controller names are unique per manager, as controller-runtime's
 * controller constructor checks unless `SkipNameValidation` (there a process-wide set; here one per manager,
 * so tests and several managers in one process do not collide).
 * @throws ControllerError when a controller of `mgr` already has that name.
 */
export function claimControllerName(mgr: object, name: string): void {
  let names = takenNames.get(mgr);
  if (!names) {
    names = new Set();
    takenNames.set(mgr, names);
  }
  if (names.has(name)) {
    throw new ControllerError(
      `controller with name ${JSON.stringify(name)} already exists; names must be unique`,
    );
  }
  names.add(name);
}

/** Options of {@link ControllerBuilder.for} and {@link ControllerBuilder.watches}. */
export interface BuilderWatchOptions<T extends KubeObject> {
  /** Every predicate must pass an event of this watch (on top of `withEventFilter`). */
  readonly predicates?: readonly Predicate<T>[];
  /**
   * Priority of the requests this watch makes for the informer's initial list and resyncs (a finite number;
   * see `KindSourceOptions.initialListPriority`). @defaultValue `LOW_PRIORITY` (-100)
   */
  readonly initialListPriority?: number;
  /**
   * Watch the kind in this cluster instead of the manager's (controller-runtime `source.Kind` on another
   * cluster's cache): its cache and RESTMapper are used, so a controller can watch in one cluster and
   * reconcile in another. Add the cluster to the manager (`mgr.add(cluster)`) so its cache runs.
   * @defaultValue the manager's own cluster
   */
  readonly cluster?: Cluster;
}

/** Options of {@link ControllerBuilder.owns}. */
export interface OwnsOptions<T extends KubeObject> extends BuilderWatchOptions<T> {
  /** Only the owner reference marked `controller: true` counts (controller-runtime's default for `Owns`). @defaultValue true */
  readonly onlyControllerOwner?: boolean;
}

/** One watch of a controller, before it is bound to a cache. */
export interface WatchEntry {
  readonly kind: Kind;
  /** Made per RESTMapper: an owner handler maps the owner's kind with the mapper of the watched cluster. */
  readonly handler: (mapper: RESTMapper) => EventHandler;
  /** The builder's event filters, then the watch's own predicates. */
  readonly predicates: readonly Predicate[];
  readonly initialListPriority?: number | undefined;
  readonly cluster?: Cluster | undefined;
}

const NAME = /^[a-z0-9]([-a-z0-9_.]*[a-z0-9])?$/i;

/** @throws ControllerError when `kind` is not a kind descriptor (`where` names the builder call). */
export function checkKind(kind: Kind | undefined, where: string): asserts kind is Kind {
  if (
    !kind ||
    typeof kind.apiVersion !== 'string' ||
    typeof kind.kind !== 'string' ||
    kind.apiVersion === '' ||
    kind.kind === ''
  ) {
    throw new ControllerError(
      `${where}: unknown kind ${JSON.stringify(kind)}; pass a kind descriptor such as Pod or kind('example.com/v1', 'Widget')`,
    );
  }
}

type Watched = { readonly kind: Kind; readonly options: BuilderWatchOptions<KubeObject> };

/**
 * The watches, filters, name and options a builder collects, and what `build` makes of them
 * (controller-runtime `Builder`'s fields and `doWatch`/`doController`).
 */
export class BuilderSpec<O extends object> {
  #for: Watched | undefined;
  readonly #owns: Array<{ kind: Kind; options: OwnsOptions<KubeObject> }> = [];
  readonly #watches: Array<Watched & { handler: EventHandler }> = [];
  readonly #filters: Predicate[] = [];
  readonly rawSources: Source[] = [];
  name: string | undefined;
  options: O;

  constructor(options: O) {
    this.options = options;
  }

  /** The `for` kind, once set. */
  get forKind(): Kind | undefined {
    return this.#for?.kind;
  }

  /** @throws ControllerError when called twice. */
  setFor(kind: Kind, options: BuilderWatchOptions<KubeObject>): void {
    if (this.#for) throw new ControllerError('for() may only be called once');
    this.#for = { kind, options };
  }

  addOwns(kind: Kind, options: OwnsOptions<KubeObject>): void {
    this.#owns.push({ kind, options });
  }

  addWatches(kind: Kind, handler: EventHandler, options: BuilderWatchOptions<KubeObject>): void {
    this.#watches.push({ kind, handler, options });
  }

  addFilter(predicate: Predicate): void {
    this.#filters.push(predicate);
  }

  /** Later calls override earlier ones field by field. */
  mergeOptions(options: O): void {
    this.options = { ...this.options, ...options };
  }

  /**
   * Checks what the builder was given and returns the controller's name (`name`, or the `for` kind
   * lower-cased).
   * @throws ControllerError naming the problem: nothing to watch; `owns` without `for`; no `for` and no name;
   *   a malformed kind or name; no reconciler.
   */
  check(reconciler: Reconciler): string {
    const forKind = this.forKind;
    if (!forKind && this.#watches.length === 0 && this.rawSources.length === 0) {
      throw new ControllerError(
        'must provide an object for reconciliation: call for(kind), or watches() / watchesRawSource() with named()',
      );
    }
    if (this.#owns.length > 0 && !forKind) {
      throw new ControllerError('owns() can only be used together with for(kind)');
    }
    if (!forKind && this.name === undefined) {
      throw new ControllerError('one of for(kind) or named(name) must be called');
    }
    if (forKind) checkKind(forKind, 'for');
    for (const o of this.#owns) checkKind(o.kind, 'owns');
    for (const w of this.#watches) checkKind(w.kind, 'watches');
    if (typeof reconciler?.reconcile !== 'function') {
      throw new ControllerError(
        'complete()/build() needs a Reconciler: an object with a reconcile(ctx, req) method',
      );
    }
    const name = this.name ?? (forKind as Kind).kind.toLowerCase();
    if (!NAME.test(name)) {
      throw new ControllerError(
        `controller name ${JSON.stringify(name)} must consist of letters, digits, '-', '_' or '.', and start and end with a letter or digit`,
      );
    }
    return name;
  }

  /**
   * The watch entries: `for` with `enqueueRequestForObject`, each `owns` with `enqueueRequestForOwner` of the
   * `for` kind (controller owner only unless `onlyControllerOwner: false`), each `watches` with its handler.
   */
  entries(): WatchEntry[] {
    const out: WatchEntry[] = [];
    const entry = (w: Watched, handler: WatchEntry['handler']): WatchEntry => ({
      kind: w.kind,
      handler,
      predicates: [...this.#filters, ...((w.options.predicates ?? []) as readonly Predicate[])],
      initialListPriority: w.options.initialListPriority,
      cluster: w.options.cluster,
    });
    if (this.#for) out.push(entry(this.#for, () => enqueueRequestForObject()));
    const forKind = this.forKind as Kind;
    for (const o of this.#owns) {
      const onlyController = o.options.onlyControllerOwner ?? true;
      out.push(entry(o, (mapper) => enqueueRequestForOwner(mapper, forKind, { onlyController })));
    }
    for (const w of this.#watches) out.push(entry(w, () => w.handler));
    return out;
  }
}

/** The source of `entry` on `cache` with `mapper`; its handler maps owner kinds with `handlerMapper`. */
export function entrySource(
  entry: WatchEntry,
  cache: Cache,
  mapper: RESTMapper,
  logger: Logger,
  handlerMapper: RESTMapper = mapper,
): KindSource {
  return new KindSource(cache, entry.kind, entry.handler(handlerMapper), {
    predicates: entry.predicates,
    logger,
    restMapper: mapper,
    ...(entry.initialListPriority !== undefined ? { initialListPriority: entry.initialListPriority } : {}),
  });
}

/**
 * Read-your-own-writes: a reconcile of a `forKind` object waits until `cache` holds this process's last write
 * of it. `undefined` (no wait) without a `for` kind or unless the cache has `readYourWrites` on.
 */
export function ownWritesWaiter(
  cache: Cache,
  forKind: Kind | undefined,
): ((req: { namespace: string; name: string }, signal: AbortSignal) => Promise<void>) | undefined {
  const own = cache as Partial<Pick<InformerCache, 'waitForOwnWrites' | 'readYourWrites'>>;
  if (!forKind || !own.readYourWrites?.() || !own.waitForOwnWrites) return undefined;
  const wait = own.waitForOwnWrites as InformerCache['waitForOwnWrites'];
  return (req, signal) => wait.call(cache, forKind, req, signal);
}

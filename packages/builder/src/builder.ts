import type { InformerCache } from '@kubeloop/cache';
import { type Kind, type KubeObject, metadataOnly } from '@kubeloop/client';
import type { Cluster } from './cluster/cluster.js';
import { Controller } from './controller.js';
import { type BuilderControllerOptions, ControllerError } from './controller-options.js';
import { type EventHandler, enqueueRequestForObject, enqueueRequestForOwner } from './handler.js';
import type { Manager } from './manager/manager.js';
import type { Predicate } from './predicate.js';
import type { Reconciler } from './reconcile.js';
import { KindSource, type Source } from './source.js';

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

interface WatchEntry {
  readonly kind: Kind;
  readonly handler: EventHandler;
  readonly predicates: readonly Predicate[];
  readonly initialListPriority?: number | undefined;
  readonly cluster?: Cluster | undefined;
}

const NAME = /^[a-z0-9]([-a-z0-9_.]*[a-z0-9])?$/i;

function checkKind(kind: Kind | undefined, where: string): asserts kind is Kind {
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

/**
 * Checks what a builder was given and returns the controller's name (`name`, or the `for` kind lower-cased).
 * @throws ControllerError naming the problem. @internal shared with the multi-cluster builder
 */
export function checkBuild(b: {
  readonly forKind: Kind | undefined;
  readonly owns: readonly Kind[];
  readonly watches: readonly Kind[];
  readonly rawSources: number;
  readonly name: string | undefined;
  readonly reconciler: Reconciler;
}): string {
  if (!b.forKind && b.watches.length === 0 && b.rawSources === 0) {
    throw new ControllerError(
      'must provide an object for reconciliation: call for(kind), or watches() / watchesRawSource() with named()',
    );
  }
  if (b.owns.length > 0 && !b.forKind) {
    throw new ControllerError('owns() can only be used together with for(kind)');
  }
  if (!b.forKind && b.name === undefined) {
    throw new ControllerError('one of for(kind) or named(name) must be called');
  }
  if (b.forKind) checkKind(b.forKind, 'for');
  for (const k of b.owns) checkKind(k, 'owns');
  for (const k of b.watches) checkKind(k, 'watches');
  if (typeof b.reconciler?.reconcile !== 'function') {
    throw new ControllerError(
      'complete()/build() needs a Reconciler: an object with a reconcile(ctx, req) method',
    );
  }
  const name = b.name ?? (b.forKind as Kind).kind.toLowerCase();
  if (!NAME.test(name)) {
    throw new ControllerError(
      `controller name ${JSON.stringify(name)} must consist of letters, digits, '-', '_' or '.', and start and end with a letter or digit`,
    );
  }
  return name;
}

/**
 * The fluent builder (controller-runtime `pkg/builder`):
 * `newControllerManagedBy(mgr).for(App).owns(ConfigMap).complete(reconciler)` creates a controller named
 * after the `for` kind, watching that kind with `enqueueRequestForObject`, each owned kind with
 * `enqueueRequestForOwner` (controller owner only, by default), and each `watches` with its handler — all
 * through the manager's cache — and adds it to the manager. Misuse is reported by `build` with a
 * {@link ControllerError} naming the problem.
 */
export class ControllerBuilder {
  #for: WatchEntry | undefined;
  #forCalls = 0;
  readonly #owns: Array<{ kind: Kind; options: OwnsOptions<KubeObject> }> = [];
  readonly #watches: WatchEntry[] = [];
  readonly #rawSources: Source[] = [];
  readonly #globalPredicates: Predicate[] = [];
  #name: string | undefined;
  #options: BuilderControllerOptions = {};

  constructor(private readonly mgr: Manager) {}

  /** The kind this controller reconciles; its events enqueue the object itself. @throws ControllerError when called twice. */
  for<T extends KubeObject>(kind: Kind<T>, options: BuilderWatchOptions<T> = {}): this {
    if (++this.#forCalls > 1) throw new ControllerError('for() may only be called once');
    this.#for = {
      kind,
      handler: enqueueRequestForObject(),
      predicates: (options.predicates ?? []) as readonly Predicate[],
      initialListPriority: options.initialListPriority,
      cluster: options.cluster,
    };
    return this;
  }

  /**
   * A kind this controller creates: an event of an object of `kind` enqueues its owner of the `for` kind
   * (group and kind compared, version ignored). Only the controller owner unless `onlyControllerOwner: false`.
   */
  owns<T extends KubeObject>(kind: Kind<T>, options: OwnsOptions<T> = {}): this {
    this.#owns.push({ kind, options: options as OwnsOptions<KubeObject> });
    return this;
  }

  /** Events of `kind` go through `handler` (e.g. `enqueueRequestsFromMapFunc`) (controller-runtime `Watches`). */
  watches<T extends KubeObject>(
    kind: Kind<T>,
    handler: EventHandler<T>,
    options: BuilderWatchOptions<T> = {},
  ): this {
    this.#watches.push({
      kind,
      handler: handler as unknown as EventHandler,
      predicates: (options.predicates ?? []) as readonly Predicate[],
      initialListPriority: options.initialListPriority,
      cluster: options.cluster,
    });
    return this;
  }

  /**
   * Like `watches`, through a metadata-only informer: the handler and predicates get
   * `PartialObjectMetadata` objects (apiVersion, kind, metadata), and the cache holds only metadata
   * (controller-runtime `WatchesMetadata`).
   */
  watchesMetadata<T extends KubeObject>(
    kind: Kind<T>,
    handler: EventHandler<T>,
    options: BuilderWatchOptions<T> = {},
  ): this {
    checkKind(kind, 'watchesMetadata');
    return this.watches(metadataOnly(kind) as unknown as Kind<T>, handler, options);
  }

  /** A source the builder does not wrap: neither `withEventFilter` nor the cache apply (controller-runtime `WatchesRawSource`). */
  watchesRawSource(source: Source): this {
    this.#rawSources.push(source);
    return this;
  }

  /** A predicate every event of `for`, `owns` and `watches` must pass (controller-runtime `WithEventFilter`). */
  withEventFilter<T extends KubeObject = KubeObject>(predicate: Predicate<T>): this {
    this.#globalPredicates.push(predicate as unknown as Predicate);
    return this;
  }

  /** Controller options; later calls override earlier ones field by field. */
  withOptions(options: BuilderControllerOptions): this {
    this.#options = { ...this.#options, ...options };
    return this;
  }

  /** The controller's name (logs, metrics); must be unique in the manager. Default: the `for` kind, lower-cased. */
  named(name: string): this {
    this.#name = name;
    return this;
  }

  /**
   * Builds the controller and adds it to the manager.
   * @throws ControllerError — no `for` and no `named`; nothing to watch; `owns` without
   *   `for`; an unknown (malformed) kind; a malformed name; a name already taken in the manager.
   */
  build(reconciler: Reconciler): Controller {
    const name = checkBuild({
      forKind: this.#for?.kind,
      owns: this.#owns.map((o) => o.kind),
      watches: this.#watches.map((w) => w.kind),
      rawSources: this.#rawSources.length,
      name: this.#name,
      reconciler,
    });
    const defaults = this.mgr.getControllerOptions();
    const { skipNameValidation, ...options } = { ...defaults, ...this.#options };
    if (!skipNameValidation) this.mgr.registerControllerName(name);
    const log = this.mgr.getLogger();
    const cache = this.mgr.getCache();
    // Read-your-own-writes: a reconcile of a `for` object waits until the cache holds this process's last
    // write of it (a no-op unless the manager's cache has the option on).
    const own = cache as Partial<Pick<InformerCache, 'waitForOwnWrites' | 'readYourWrites'>>;
    const forKind = this.#for?.kind;
    const waitForOwnWrites =
      forKind && own.readYourWrites?.() && own.waitForOwnWrites
        ? (req: { namespace: string; name: string }, signal: AbortSignal) =>
            (own.waitForOwnWrites as InformerCache['waitForOwnWrites']).call(cache, forKind, req, signal)
        : undefined;
    const ctrl = new Controller(name, reconciler, {
      ...options,
      logger: log,
      ...(waitForOwnWrites && !options.waitForOwnWrites ? { waitForOwnWrites } : {}),
    });
    const mapper = this.mgr.getRESTMapper();
    const entries: WatchEntry[] = [];
    if (this.#for) entries.push(this.#for);
    for (const o of this.#owns) {
      entries.push({
        kind: o.kind,
        handler: enqueueRequestForOwner(mapper, (this.#for as WatchEntry).kind, {
          onlyController: o.options.onlyControllerOwner ?? true,
        }),
        predicates: o.options.predicates ?? [],
        initialListPriority: o.options.initialListPriority,
        cluster: o.options.cluster,
      });
    }
    for (const w of this.#watches) entries.push(w);
    for (const e of entries) {
      ctrl.watch(
        new KindSource(e.cluster?.getCache() ?? cache, e.kind, e.handler, {
          predicates: [...this.#globalPredicates, ...e.predicates],
          logger: log.child({ controller: name }),
          restMapper: e.cluster?.getRESTMapper() ?? mapper,
          ...(e.initialListPriority !== undefined ? { initialListPriority: e.initialListPriority } : {}),
        }),
      );
    }
    for (const s of this.#rawSources) ctrl.watch(s);
    this.mgr.add(ctrl);
    return ctrl;
  }

  /** Same as {@link ControllerBuilder.build}, for controller-runtime's `Complete(r)`. */
  complete(reconciler: Reconciler): Controller {
    return this.build(reconciler);
  }
}

/** Starts a controller builder for `mgr` (controller-runtime `ctrl.NewControllerManagedBy`). */
export function newControllerManagedBy(mgr: Manager): ControllerBuilder {
  return new ControllerBuilder(mgr);
}

import { type Kind, type KubeObject, metadataOnly } from '@kubeloop/client';
import {
  BuilderSpec,
  type BuilderWatchOptions,
  checkKind,
  claimControllerName,
  entrySource,
  type OwnsOptions,
  ownWritesWaiter,
} from './builder-spec.js';
import { Controller } from './controller.js';
import type { BuilderControllerOptions } from './controller-options.js';
import type { EventHandler } from './handler.js';
import type { Manager } from './manager/manager.js';
import type { Predicate } from './predicate.js';
import type { Reconciler } from './reconcile.js';
import type { Source } from './source.js';

export type { BuilderWatchOptions, OwnsOptions } from './builder-spec.js';

/**
 * The fluent builder (controller-runtime `pkg/builder`):
 * `newControllerManagedBy(mgr).for(App).owns(ConfigMap).complete(reconciler)` creates a controller named
 * after the `for` kind, watching that kind with `enqueueRequestForObject`, each owned kind with
 * `enqueueRequestForOwner` (controller owner only, by default), and each `watches` with its handler — all
 * through the manager's cache — and adds it to the manager. Misuse is reported by `build` with a
 * {@link ControllerError} naming the problem.
 */
export class ControllerBuilder {
  readonly #spec = new BuilderSpec<BuilderControllerOptions>({});

  constructor(private readonly mgr: Manager) {}

  /** The kind this controller reconciles; its events enqueue the object itself. @throws ControllerError when called twice. */
  for<T extends KubeObject>(kind: Kind<T>, options: BuilderWatchOptions<T> = {}): this {
    this.#spec.setFor(kind, options as BuilderWatchOptions<KubeObject>);
    return this;
  }

  /**
   * A kind this controller creates: an event of an object of `kind` enqueues its owner of the `for` kind
   * (group and kind compared, version ignored). Only the controller owner unless `onlyControllerOwner: false`.
   */
  owns<T extends KubeObject>(kind: Kind<T>, options: OwnsOptions<T> = {}): this {
    this.#spec.addOwns(kind, options as OwnsOptions<KubeObject>);
    return this;
  }

  /** Events of `kind` go through `handler` (e.g. `enqueueRequestsFromMapFunc`) (controller-runtime `Watches`). */
  watches<T extends KubeObject>(
    kind: Kind<T>,
    handler: EventHandler<T>,
    options: BuilderWatchOptions<T> = {},
  ): this {
    this.#spec.addWatches(
      kind,
      handler as unknown as EventHandler,
      options as BuilderWatchOptions<KubeObject>,
    );
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
    this.#spec.rawSources.push(source);
    return this;
  }

  /** A predicate every event of `for`, `owns` and `watches` must pass (controller-runtime `WithEventFilter`). */
  withEventFilter<T extends KubeObject = KubeObject>(predicate: Predicate<T>): this {
    this.#spec.addFilter(predicate as unknown as Predicate);
    return this;
  }

  /** Controller options; later calls override earlier ones field by field. */
  withOptions(options: BuilderControllerOptions): this {
    this.#spec.mergeOptions(options);
    return this;
  }

  /** The controller's name (logs, metrics); must be unique in the manager. Default: the `for` kind, lower-cased. */
  named(name: string): this {
    this.#spec.name = name;
    return this;
  }

  /**
   * Builds the controller and adds it to the manager.
   * @throws ControllerError — no `for` and no `named`; nothing to watch; `owns` without
   *   `for`; an unknown (malformed) kind; a malformed name; a name already taken in the manager.
   */
  build(reconciler: Reconciler): Controller {
    const spec = this.#spec;
    const name = spec.check(reconciler);
    const defaults = this.mgr.getControllerOptions();
    const { skipNameValidation, ...options } = { ...defaults, ...spec.options };
    if (!skipNameValidation) claimControllerName(this.mgr, name);
    const log = this.mgr.getLogger();
    const cache = this.mgr.getCache();
    const waitForOwnWrites = ownWritesWaiter(cache, spec.forKind);
    const ctrl = new Controller(name, reconciler, {
      ...options,
      logger: log,
      ...(waitForOwnWrites && !options.waitForOwnWrites ? { waitForOwnWrites } : {}),
    });
    const mapper = this.mgr.getRESTMapper();
    for (const e of spec.entries()) {
      const source = entrySource(
        e,
        e.cluster?.getCache() ?? cache,
        e.cluster?.getRESTMapper() ?? mapper,
        log.child({ controller: name }),
        mapper,
      );
      ctrl.watch(source);
    }
    for (const s of spec.rawSources) ctrl.watch(s);
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

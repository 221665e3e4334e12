import { type Kind, type KubeObject, metadataOnly } from '@kubeloop/client';
import { builderSpec, ControllerBuilderBase } from './builder-base.js';
import {
  type BuilderWatchOptions,
  checkKind,
  claimControllerName,
  entrySource,
  ownWritesWaiter,
} from './builder-spec.js';
import { Controller } from './controller.js';
import type { BuilderControllerOptions } from './controller-options.js';
import type { EventHandler } from './handler.js';
import type { Manager } from './manager/manager.js';
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
export class ControllerBuilder extends ControllerBuilderBase<BuilderControllerOptions> {
  constructor(private readonly mgr: Manager) {
    super();
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
    builderSpec(this).rawSources.push(source);
    return this;
  }

  /**
   * Builds the controller and adds it to the manager.
   * @throws ControllerError — no `for` and no `named`; nothing to watch; `owns` without
   *   `for`; an unknown (malformed) kind; a malformed name; a name already taken in the manager.
   */
  build(reconciler: Reconciler): Controller {
    const spec = builderSpec(this);
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

import type { Kind, KubeObject } from '@kubeloop/client';
import { Controller, ControllerError, type ControllerOptions } from './controller.js';
import { enqueueRequestForObject, type Predicate } from './handler.js';
import type { Manager } from './manager/manager.js';
import type { Reconciler } from './reconcile.js';
import { KindSource } from './source.js';

/** Options settable through `withOptions` (controller-runtime `controller.Options`). */
export type BuilderControllerOptions = Omit<ControllerOptions, 'logger'>;

/**
 * The fluent builder (controller-runtime `pkg/builder`):
 * `newControllerManagedBy(mgr).for(Pod).complete(reconciler)` creates a controller named after the kind,
 * watching it through the manager's cache with `enqueueRequestForObject`, and adds it to the manager.
 */
export class ControllerBuilder {
  #for: Kind | undefined;
  #name: string | undefined;
  readonly #predicates: Predicate[] = [];
  #options: BuilderControllerOptions = {};

  constructor(private readonly mgr: Manager) {}

  /** The kind this controller reconciles. @throws ControllerError when called twice. */
  for<T extends KubeObject>(kind: Kind<T>): this {
    if (this.#for) throw new ControllerError('for() may only be called once');
    this.#for = kind;
    return this;
  }

  /** The controller's name (logs, metrics); must be unique in the manager. Default: the kind, lower-cased. */
  named(name: string): this {
    this.#name = name;
    return this;
  }

  /** Predicates every event must pass (all of them). */
  withEventFilter<T extends KubeObject = KubeObject>(predicate: Predicate<T>): this {
    this.#predicates.push(predicate as Predicate);
    return this;
  }

  /** Controller options (`maxConcurrentReconciles`, `rateLimiter`, `cacheSyncTimeoutMs`). */
  withOptions(options: BuilderControllerOptions): this {
    this.#options = { ...this.#options, ...options };
    return this;
  }

  /**
   * Builds the controller and adds it to the manager.
   * @throws ControllerError without `for()`, or when the name is taken.
   */
  build(reconciler: Reconciler): Controller {
    if (!this.#for) throw new ControllerError('must provide an object for reconciliation: call for(kind)');
    const name = this.#name ?? this.#for.kind.toLowerCase();
    if (!/^[a-zA-Z0-9][-a-zA-Z0-9_.]*$/.test(name)) {
      throw new ControllerError(`controller name ${JSON.stringify(name)} must be a DNS-1123-like name`);
    }
    this.mgr.registerControllerName(name);
    const log = this.mgr.getLogger();
    const ctrl = new Controller(name, reconciler, { ...this.#options, logger: log });
    ctrl.watch(
      new KindSource(
        this.mgr.getCache(),
        this.#for,
        enqueueRequestForObject(),
        this.#predicates,
        log,
        this.mgr.getRESTMapper(),
      ),
    );
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

import type { Kind, KubeObject } from '@kubeloop/client';
import { BuilderSpec, type BuilderWatchOptions, type OwnsOptions } from './builder-spec.js';
import type { BuilderControllerOptions } from './controller-options.js';
import type { EventHandler } from './handler.js';
import type { Predicate } from './predicate.js';

/** Reads a builder's collected spec; set by the base class's static block (the spec is ES-private). */
let specOf: <O extends BuilderControllerOptions>(b: ControllerBuilderBase<O>) => BuilderSpec<O>;

/**
 * The fluent calls the single-cluster and the multi-cluster controller builders share (controller-runtime
 * `pkg/builder`): `for`, `owns`, `watches`, `withEventFilter`, `withOptions` and `named`. Each builder adds its
 * own `complete`, which turns what these calls collected into a controller; in a multi-cluster builder every
 * watch is made in each engaged cluster, and `withOptions` applies to each cluster's controller.
 */
export abstract class ControllerBuilderBase<O extends BuilderControllerOptions> {
  readonly #spec = new BuilderSpec<O>({} as O);

  static {
    specOf = (b) => b.#spec;
  }

  /**
   * The kind this controller reconciles; its events enqueue the object itself.
   * @throws ControllerError when called twice.
   */
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

  /** A predicate every event of `for`, `owns` and `watches` must pass (controller-runtime `WithEventFilter`). */
  withEventFilter<T extends KubeObject = KubeObject>(predicate: Predicate<T>): this {
    this.#spec.addFilter(predicate as unknown as Predicate);
    return this;
  }

  /** Controller options; later calls override earlier ones field by field. */
  withOptions(options: O): this {
    this.#spec.mergeOptions(options);
    return this;
  }

  /** The controller's name (logs, metrics); must be unique in the manager. Default: the `for` kind, lower-cased. */
  named(name: string): this {
    this.#spec.name = name;
    return this;
  }
}

/** What the fluent calls of `builder` collected, for its `complete`. */
export function builderSpec<O extends BuilderControllerOptions>(
  builder: ControllerBuilderBase<O>,
): BuilderSpec<O> {
  return specOf(builder);
}

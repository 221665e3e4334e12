import type { Cache, ResourceEventHandlerRegistration } from '@kubeloop/cache';
import type { Kind, KubeObject } from '@kubeloop/client';
import type { RateLimitingQueue } from '@kubeloop/workqueue';
import type { EventHandler, Predicate } from './handler.js';
import type { Logger } from './logger.js';
import { errorMessage } from './logger.js';
import type { Request } from './reconcile.js';

/** Source knows how to feed a controller's queue from somewhere (controller-runtime `source.Source`). */
export interface Source {
  /** Starts delivering into `queue`; stops when `signal` aborts. */
  start(signal: AbortSignal, queue: RateLimitingQueue<Request>): void;
  /** Resolves `true` once the source has delivered its initial state, `false` if `signal` aborts first. */
  waitForSync(signal: AbortSignal): Promise<boolean>;
}

/**
 * Events of one kind from the manager's cache (controller-runtime `source.Kind`): the kind's shared
 * informer, filtered by predicates (all must pass), mapped to requests by the handler.
 */
export class KindSource<T extends KubeObject = KubeObject> implements Source {
  #registration: ResourceEventHandlerRegistration | undefined;

  constructor(
    private readonly cache: Cache,
    private readonly kind: Kind<T>,
    private readonly handler: EventHandler<T>,
    private readonly predicates: readonly Predicate<T>[] = [],
    private readonly log?: Logger,
  ) {}

  start(signal: AbortSignal, queue: RateLimitingQueue<Request>): void {
    const informer = this.cache.getInformer(this.kind);
    const ps = this.predicates;
    const guard = (what: string, fn: () => void) => {
      try {
        fn();
      } catch (err) {
        this.log?.error(
          { kind: this.kind.kind, event: what, err: errorMessage(err) },
          'event handler failed',
        );
      }
    };
    this.#registration = informer.addEventHandler({
      onAdd: (obj) =>
        guard('create', () => ps.every((p) => p.create?.(obj) ?? true) && this.handler.create(obj, queue)),
      onUpdate: (a, b) =>
        guard('update', () => ps.every((p) => p.update?.(a, b) ?? true) && this.handler.update(a, b, queue)),
      onDelete: (obj) =>
        guard('delete', () => ps.every((p) => p.delete?.(obj) ?? true) && this.handler.delete(obj, queue)),
    });
    signal.addEventListener('abort', () => this.#registration?.remove(), { once: true });
  }

  waitForSync(signal: AbortSignal): Promise<boolean> {
    return this.cache.getInformer(this.kind).waitForSync(signal);
  }
}

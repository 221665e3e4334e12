import type { Cache, ResourceEventHandlerRegistration } from '@kubeloop/cache';
import {
  gvkOf,
  gvkString,
  isNoMatchError,
  type Kind,
  type KubeObject,
  type RESTMapper,
} from '@kubeloop/client';
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
  /** Why the source has not synced yet, when it knows (e.g. its kind is not served); shown in the timeout error. */
  syncError?(): unknown;
}

/**
 * Events of one kind from the manager's cache (controller-runtime `source.Kind`): the kind's shared
 * informer, filtered by predicates (all must pass), mapped to requests by the handler.
 */
export class KindSource<T extends KubeObject = KubeObject> implements Source {
  #registration: ResourceEventHandlerRegistration | undefined;
  #syncError: unknown;

  constructor(
    private readonly cache: Cache,
    private readonly kind: Kind<T>,
    private readonly handler: EventHandler<T>,
    private readonly predicates: readonly Predicate<T>[] = [],
    private readonly log?: Logger,
    /** When given, `waitForSync` first waits for the kind to be served (controller-runtime's Kind source). */
    private readonly restMapper?: RESTMapper,
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

  /**
   * Waits for the kind's informer to sync. With a RESTMapper, first waits until the kind is served: a kind
   * that is not (a CRD not installed yet) is logged once, naming it, and looked up again with backoff until
   * `signal` aborts (controller-runtime's `source.Kind`); `syncError()` then holds the NoKindMatchError.
   */
  async waitForSync(signal: AbortSignal): Promise<boolean> {
    if (this.restMapper && !(await this.#waitForKind(this.restMapper, signal))) return false;
    return this.cache.getInformer(this.kind).waitForSync(signal);
  }

  syncError(): unknown {
    return this.#syncError;
  }

  async #waitForKind(mapper: RESTMapper, signal: AbortSignal): Promise<boolean> {
    let delayMs = 100;
    for (;;) {
      try {
        await mapper.restMapping(gvkOf(this.kind));
        this.#syncError = undefined;
        return true;
      } catch (err) {
        if (!isNoMatchError(err)) throw err;
        if (this.#syncError === undefined)
          this.log?.error(
            { kind: gvkString(gvkOf(this.kind)), err: errorMessage(err) },
            'kind is not served by the API server; if it is a CRD, it should be installed before the controller starts',
          );
        this.#syncError = err;
      }
      if (signal.aborted) return false;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, delayMs);
        signal.addEventListener('abort', done, { once: true });
      });
      if (signal.aborted) return false;
      delayMs = Math.min(delayMs * 2, 10_000);
    }
  }
}

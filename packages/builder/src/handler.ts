import { type DeletedFinalStateUnknown, objectOfDelete } from '@kubeloop/cache';
import type { KubeObject } from '@kubeloop/client';
import type { RateLimitingQueue } from '@kubeloop/workqueue';
import type { Request } from './reconcile.js';

/**
 * EventHandler knows how to turn a change of a watched object into requests on a controller's queue
 * (controller-runtime `handler.EventHandler`). `delete` may get a tombstone for deletes found by a relist.
 */
export interface EventHandler<T extends KubeObject = KubeObject> {
  create(obj: T, queue: RateLimitingQueue<Request>): void;
  update(oldObj: T, newObj: T, queue: RateLimitingQueue<Request>): void;
  delete(obj: T | DeletedFinalStateUnknown<T>, queue: RateLimitingQueue<Request>): void;
}

function requestFor(obj: KubeObject): Request | undefined {
  const name = obj.metadata?.name;
  if (!name) return undefined;
  return { namespace: obj.metadata?.namespace ?? '', name };
}

/**
 * Enqueues a request for the object itself (controller-runtime `handler.EnqueueRequestForObject`); for an
 * update, the new object. Objects without a name are ignored.
 */
export function enqueueRequestForObject<T extends KubeObject = KubeObject>(): EventHandler<T> {
  const add = (obj: KubeObject, q: RateLimitingQueue<Request>) => {
    const r = requestFor(obj);
    if (r) q.add(r);
  };
  return {
    create: (obj, q) => add(obj, q),
    update: (_old, obj, q) => add(obj, q),
    delete: (obj, q) => add(objectOfDelete(obj), q),
  };
}

/**
 * Predicate knows how to filter events before they reach a handler (controller-runtime `predicate.Funcs`).
 * A missing method lets the event through.
 */
export interface Predicate<T extends KubeObject = KubeObject> {
  create?(obj: T): boolean;
  update?(oldObj: T, newObj: T): boolean;
  delete?(obj: T | DeletedFinalStateUnknown<T>): boolean;
}

/** Passes updates whose `metadata.generation` changed (controller-runtime `GenerationChangedPredicate`). */
export function generationChangedPredicate<T extends KubeObject = KubeObject>(): Predicate<T> {
  return { update: (a, b) => a.metadata?.generation !== b.metadata?.generation };
}

/** Passes updates whose `metadata.resourceVersion` changed (controller-runtime `ResourceVersionChangedPredicate`). */
export function resourceVersionChangedPredicate<T extends KubeObject = KubeObject>(): Predicate<T> {
  return { update: (a, b) => a.metadata?.resourceVersion !== b.metadata?.resourceVersion };
}

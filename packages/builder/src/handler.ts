import type { DeepReadonly, Kind, KubeObject, RESTMapper } from '@kubeloop/client';
import { gvkOf, parseApiVersion } from '@kubeloop/client/apiutil';
import type { Request } from './reconcile.js';
import { requestKey } from './reconcile.js';

/**
 * A new object (controller-runtime `event.CreateEvent`). Event objects are typed `DeepReadonly<T>`: from a
 * {@link KindSource} they are the cache's frozen, shared objects (changing one is a compile error; `deepCopy`
 * one to write it), and any object, cached or not, can be handed to a handler in a test.
 */
export interface CreateEvent<T extends KubeObject = KubeObject> {
  readonly object: DeepReadonly<T>;
  /** True when the object came from the informer's initial list (or a late handler's replay), not a live change. */
  readonly isInInitialList: boolean;
}
/** A changed object (controller-runtime `event.UpdateEvent`); on a resync `objectOld === objectNew`. */
export interface UpdateEvent<T extends KubeObject = KubeObject> {
  readonly objectOld: DeepReadonly<T>;
  readonly objectNew: DeepReadonly<T>;
}
/** A deleted object (controller-runtime `event.DeleteEvent`). */
export interface DeleteEvent<T extends KubeObject = KubeObject> {
  /** The last known state; from a tombstone when `deleteStateUnknown`. */
  readonly object: DeepReadonly<T>;
  /** True when the delete was found by a relist, so `object` may be stale. */
  readonly deleteStateUnknown: boolean;
}
/** An event from outside the cluster, e.g. a {@link ChannelSource} (controller-runtime `event.GenericEvent`). */
export interface GenericEvent<T extends KubeObject = KubeObject> {
  readonly object: DeepReadonly<T>;
}

/** Options of {@link HandlerQueue.add}. */
export interface EnqueueOptions {
  /** Higher is handed out first by the priority queue (ignored by the plain queue). `LOW_PRIORITY` is -100. */
  readonly priority?: number;
}

/**
 * What an {@link EventHandler} writes to: the controller's queue, seen through its source. A source may
 * lower the priority of requests made for initial-list and resync events; an explicit `priority` wins.
 */
export interface HandlerQueue {
  /** Adds a request; duplicates of a queued request collapse. */
  add(req: Request, options?: EnqueueOptions): void;
  /**
   * Reports a failure inside a handler (a map function that threw or rejected): logged whole and counted
   * by the controller (`Controller.handlerErrors`), never fatal.
   */
  handlerError(err: unknown, details: Record<string, unknown>): void;
}

/**
 * EventHandler knows how to turn a change of a watched object into requests on a controller's queue
 * (controller-runtime `handler.EventHandler`). A method may return a promise (e.g. a map function that
 * reads the cache); the source observes it, so a rejection is reported, never unhandled.
 */
export interface EventHandler<T extends KubeObject = KubeObject> {
  create(event: CreateEvent<T>, queue: HandlerQueue): void | Promise<void>;
  update(event: UpdateEvent<T>, queue: HandlerQueue): void | Promise<void>;
  delete(event: DeleteEvent<T>, queue: HandlerQueue): void | Promise<void>;
  generic?(event: GenericEvent<T>, queue: HandlerQueue): void | Promise<void>;
}

function requestFor(obj: DeepReadonly<KubeObject>): Request | undefined {
  const name = obj.metadata?.name;
  if (!name) return undefined;
  return { namespace: obj.metadata?.namespace ?? '', name };
}

/**
 * Enqueues a request for the object itself (controller-runtime `handler.EnqueueRequestForObject`); for an
 * update, the new object (and the old one too if its name differs, which the API never does). Objects
 * without a name are ignored.
 */
export function enqueueRequestForObject<T extends KubeObject = KubeObject>(): EventHandler<T> {
  const add = (obj: DeepReadonly<KubeObject>, q: HandlerQueue) => {
    const r = requestFor(obj);
    if (r) q.add(r);
  };
  return {
    create: (e, q) => add(e.object, q),
    update: (e, q) => add(e.objectNew, q),
    delete: (e, q) => add(e.object, q),
    generic: (e, q) => add(e.object, q),
  };
}

/** Options of {@link enqueueRequestForOwner}. */
export interface EnqueueRequestForOwnerOptions {
  /** Only the owner reference with `controller: true` (controller-runtime `OnlyControllerOwner()`). @defaultValue false */
  readonly onlyController?: boolean;
}

/**
 * Enqueues a request for the owners of the object that are of `ownerKind` (controller-runtime
 * `handler.EnqueueRequestForOwner`): an owner reference matches on API group and kind — the version is
 * ignored, so an owner that moved to a new API version still matches. On an update, the owners of both
 * the old and the new object are enqueued (an owner removed by the update still hears of it). The
 * request's namespace is the object's for a namespaced owner and `''` for a cluster-scoped one; the
 * owner's scope comes from `restMapper` (looked up once, then remembered); a lookup failure is reported
 * through {@link HandlerQueue.handlerError} and the event is dropped.
 */
export function enqueueRequestForOwner<T extends KubeObject = KubeObject>(
  restMapper: RESTMapper,
  ownerKind: Kind,
  options: EnqueueRequestForOwnerOptions = {},
): EventHandler<T> {
  const { group, kind } = gvkOf(ownerKind);
  let namespaced: boolean | undefined;
  let lookup: Promise<boolean> | undefined;
  const scope = (): boolean | Promise<boolean> => {
    if (namespaced !== undefined) return namespaced;
    lookup ??= restMapper.restMapping(gvkOf(ownerKind)).then(
      (m) => {
        namespaced = m.scope === 'Namespaced';
        return namespaced;
      },
      (err: unknown) => {
        lookup = undefined;
        throw err;
      },
    );
    return lookup;
  };
  const owners = (obj: DeepReadonly<KubeObject>, out: Map<string, { name: string; namespace: string }>) => {
    for (const ref of obj.metadata?.ownerReferences ?? []) {
      if (options.onlyController && ref.controller !== true) continue;
      if (ref.kind !== kind || parseApiVersion(ref.apiVersion ?? '').group !== group) continue;
      const ns = obj.metadata?.namespace ?? '';
      out.set(`${ns}/${ref.name}`, { name: ref.name, namespace: ns });
    }
  };
  const enqueue = (objs: readonly DeepReadonly<KubeObject>[], q: HandlerQueue): void | Promise<void> => {
    const found = new Map<string, { name: string; namespace: string }>();
    for (const o of objs) owners(o, found);
    if (found.size === 0) return;
    const emit = (isNamespaced: boolean) => {
      const seen = new Set<string>();
      for (const o of found.values()) {
        const req = { namespace: isNamespaced ? o.namespace : '', name: o.name };
        const k = requestKey(req);
        if (seen.has(k)) continue;
        seen.add(k);
        q.add(req);
      }
    };
    const s = scope();
    if (typeof s === 'boolean') return emit(s);
    return s.then(emit, (err: unknown) =>
      q.handlerError(err, { handler: 'enqueueRequestForOwner', ownerKind: `${group}/${kind}` }),
    );
  };
  return {
    create: (e, q) => enqueue([e.object], q),
    update: (e, q) => enqueue([e.objectOld, e.objectNew], q),
    delete: (e, q) => enqueue([e.object], q),
    generic: (e, q) => enqueue([e.object], q),
  };
}

/** Maps an object to the requests it should cause; may be async. Throwing or rejecting is reported, never fatal. */
export type MapFunc<T extends KubeObject = KubeObject> = (
  obj: DeepReadonly<T>,
) => readonly Request[] | Promise<readonly Request[]>;

/**
 * Enqueues the requests `fn` maps each object to (controller-runtime `handler.EnqueueRequestsFromMapFunc`):
 * on an update `fn` is called for the old and the new object, and the union is enqueued once per request
 * (so a relabel that moves an object away from its old requests still reaches them). A throw or rejection
 * of `fn` is reported through {@link HandlerQueue.handlerError} (logged with the error, counted) and the
 * requests of the other object of an update are still enqueued.
 */
export function enqueueRequestsFromMapFunc<T extends KubeObject = KubeObject>(
  fn: MapFunc<T>,
): EventHandler<T> {
  const run = (objs: DeepReadonly<T>[], q: HandlerQueue, event: string): void | Promise<void> => {
    const results: Array<readonly Request[] | Promise<readonly Request[]>> = [];
    const report = (err: unknown, obj: DeepReadonly<T>) =>
      q.handlerError(err, {
        handler: 'enqueueRequestsFromMapFunc',
        event,
        namespace: obj.metadata?.namespace,
        name: obj.metadata?.name,
      });
    for (const obj of objs) {
      try {
        const r = fn(obj);
        results.push(
          r instanceof Promise
            ? r.catch((err: unknown) => {
                report(err, obj);
                return [];
              })
            : r,
        );
      } catch (err) {
        report(err, obj);
      }
    }
    const emit = (lists: ReadonlyArray<readonly Request[]>) => {
      const seen = new Set<string>();
      for (const list of lists) {
        for (const req of list ?? []) {
          const k = requestKey(req);
          if (seen.has(k)) continue;
          seen.add(k);
          // A map function may name another cluster (watch in one, reconcile in another): kept.
          q.add({
            namespace: req.namespace ?? '',
            name: req.name,
            ...(req.cluster ? { cluster: req.cluster } : {}),
          });
        }
      }
    };
    if (results.some((r) => r instanceof Promise)) return Promise.all(results).then(emit);
    emit(results as Array<readonly Request[]>);
  };
  return {
    create: (e, q) => run([e.object], q, 'create'),
    update: (e, q) =>
      run(e.objectOld === e.objectNew ? [e.objectNew] : [e.objectOld, e.objectNew], q, 'update'),
    delete: (e, q) => run([e.object], q, 'delete'),
    generic: (e, q) => run([e.object], q, 'generic'),
  };
}

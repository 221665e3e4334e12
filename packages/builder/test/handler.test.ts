import {
  type Cached,
  type DeepReadonly,
  deepCopy,
  type KubeObject,
  kind,
  Pod,
  type RESTMapper,
  type Writer,
} from '@kubeloop/client';
import { StaticRESTMapper } from '@kubeloop/client/apiutil';
import type { V1Pod } from '@kubeloop/client/models';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  type CreateEvent,
  type EnqueueOptions,
  type EventHandler,
  enqueueRequestForObject,
  enqueueRequestForOwner,
  enqueueRequestsFromMapFunc,
  type HandlerQueue,
  type MapFunc,
  newPredicateFuncs,
  type Predicate,
  type Request,
  type UpdateEvent,
} from '../src/index.js';

/** A HandlerQueue that records what handlers add and report. */
function recordingQueue() {
  const added: Array<Request & EnqueueOptions> = [];
  const errors: Array<{ err: unknown; details: Record<string, unknown> }> = [];
  const q: HandlerQueue = {
    add: (req, options) => added.push({ ...req, ...options }),
    handlerError: (err, details) => errors.push({ err, details }),
  };
  return { q, added, errors };
}

const App = kind('apps.example.com/v2', 'App');
const Tenant = kind('example.com/v1', 'Tenant');
const mapper = new StaticRESTMapper([
  {
    gvk: { group: 'apps.example.com', version: 'v2', kind: 'App' },
    resource: { group: 'apps.example.com', version: 'v2', resource: 'apps' },
    scope: 'Namespaced',
  },
  {
    gvk: { group: 'example.com', version: 'v1', kind: 'Tenant' },
    resource: { group: 'example.com', version: 'v1', resource: 'tenants' },
    scope: 'Cluster',
  },
]);

function child(owners: Array<Record<string, unknown>>, namespace = 'ns-a', name = 'cfg'): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { namespace, name, ownerReferences: owners as never },
  };
}
const ref = (apiVersion: string, k: string, name: string, controller?: boolean) => ({
  apiVersion,
  kind: k,
  name,
  uid: `uid-${name}`,
  ...(controller === undefined ? {} : { controller }),
});

describe('event handlers (controller-runtime pkg/handler)', () => {
  it('enqueueRequestForObject: the object itself; the new object on update; unnamed objects ignored', () => {
    const { q, added } = recordingQueue();
    const h = enqueueRequestForObject();
    h.create({ object: child([]), isInInitialList: false }, q);
    h.update({ objectOld: child([], 'ns-a', 'old'), objectNew: child([], 'ns-a', 'new') }, q);
    h.delete({ object: child([], '', 'cluster'), deleteStateUnknown: true }, q);
    h.generic?.({ object: { metadata: {} } }, q);
    expect(added).toEqual([
      { namespace: 'ns-a', name: 'cfg' },
      { namespace: 'ns-a', name: 'new' },
      { namespace: '', name: 'cluster' },
    ]);
  });

  it('enqueueRequestForOwner: group and kind compared, version ignored (an owner moved to a new API version still matches)', async () => {
    const { q, added } = recordingQueue();
    const h = enqueueRequestForOwner(mapper, App);
    await h.create(
      {
        object: child([
          ref('apps.example.com/v1', 'App', 'old-version'),
          ref('apps.example.com/v2', 'App', 'new-version'),
          ref('other.example.com/v2', 'App', 'other-group'),
          ref('apps.example.com/v2', 'Job', 'other-kind'),
        ]),
        isInInitialList: false,
      },
      q,
    );
    expect(added).toEqual([
      { namespace: 'ns-a', name: 'old-version' },
      { namespace: 'ns-a', name: 'new-version' },
    ]);
  });

  it('enqueueRequestForOwner: on update both the old and the new owners, once each; onlyController keeps the controller owner', async () => {
    const { q, added } = recordingQueue();
    const h = enqueueRequestForOwner(mapper, App, { onlyController: true });
    await h.update(
      {
        objectOld: child([
          ref('apps.example.com/v2', 'App', 'a', true),
          ref('apps.example.com/v2', 'App', 'plain'),
        ]),
        objectNew: child([
          ref('apps.example.com/v2', 'App', 'b', true),
          ref('apps.example.com/v2', 'App', 'a', false),
        ]),
      },
      q,
    );
    expect(added).toEqual([
      { namespace: 'ns-a', name: 'a' },
      { namespace: 'ns-a', name: 'b' },
    ]);
  });

  it('C26 (unit): a cluster-scoped owner is enqueued without a namespace; a plain owner only when every owner is asked for', async () => {
    const only = recordingQueue();
    const all = recordingQueue();
    const obj = child([ref('example.com/v1', 'Tenant', 't1', true), ref('example.com/v1', 'Tenant', 't2')]);
    await enqueueRequestForOwner(mapper, Tenant, { onlyController: true }).create(
      { object: obj, isInInitialList: false },
      only.q,
    );
    await enqueueRequestForOwner(mapper, Tenant).create({ object: obj, isInInitialList: false }, all.q);
    expect(only.added).toEqual([{ namespace: '', name: 't1' }]);
    expect(all.added).toEqual([
      { namespace: '', name: 't1' },
      { namespace: '', name: 't2' },
    ]);
  });

  it('enqueueRequestForOwner: a failed scope lookup is reported, not thrown, and looked up again next time', async () => {
    let calls = 0;
    const flaky: RESTMapper = {
      ...mapper,
      restMapping: async (gvk) => {
        if (++calls === 1) throw new Error('discovery 503');
        return mapper.restMapping(gvk);
      },
      kindFor: (gvr) => mapper.kindFor(gvr),
    } as RESTMapper;
    const { q, added, errors } = recordingQueue();
    const h = enqueueRequestForOwner(flaky, App);
    const ev = { object: child([ref('apps.example.com/v2', 'App', 'a')]), isInInitialList: false };
    await h.create(ev, q);
    expect(errors).toHaveLength(1);
    expect(added).toEqual([]);
    await h.create(ev, q);
    expect(added).toEqual([{ namespace: 'ns-a', name: 'a' }]);
  });

  it('C29 (unit): enqueueRequestsFromMapFunc maps old and new on update, de-duplicated; async allowed; a throw or rejection is reported and the rest still enqueued', async () => {
    const { q, added, errors } = recordingQueue();
    const byTeam: Record<string, Request[]> = {
      a: [
        { namespace: '', name: 't1' },
        { namespace: '', name: 't2' },
      ],
      b: [{ namespace: '', name: 't3' }],
    };
    let rejectNext = false;
    const h = enqueueRequestsFromMapFunc(async (o: DeepReadonly<KubeObject>) => {
      if (rejectNext) {
        rejectNext = false;
        throw new Error('lookup failed');
      }
      return byTeam[o.metadata?.labels?.team ?? ''] ?? [];
    });
    const ns = (team: string, ann = '') => ({
      metadata: { name: 'n1', labels: { team }, annotations: { ann } },
    });
    // Relabel a → b: requests of the old (t1, t2) and of the new object (t3).
    await h.update({ objectOld: ns('a'), objectNew: ns('b') }, q);
    expect(added.map((r) => r.name)).toEqual(['t1', 't2', 't3']);
    // Annotation touched while team=a: old and new map to the same requests, each enqueued once.
    added.length = 0;
    await h.update({ objectOld: ns('a', '1'), objectNew: ns('a', '2') }, q);
    expect(added.map((r) => r.name)).toEqual(['t1', 't2']);
    // One rejection: reported once, the other object's requests still enqueued.
    added.length = 0;
    rejectNext = true;
    await h.update({ objectOld: ns('a'), objectNew: ns('b') }, q);
    expect(errors).toHaveLength(1);
    expect(String(errors[0]?.err)).toContain('lookup failed');
    expect(added.map((r) => r.name)).toEqual(['t3']);
    // A synchronous throw is reported too.
    const sync = recordingQueue();
    enqueueRequestsFromMapFunc(() => {
      throw new TypeError('bug');
    }).create({ object: ns('a'), isInInitialList: false }, sync.q);
    expect(sync.errors).toHaveLength(1);
  });
});

describe('event objects are read-only (the cache hands out frozen, shared objects)', () => {
  it('handlers, map functions and predicates get DeepReadonly<T>: mutating or writing one uncopied does not compile; deepCopy does', () => {
    type Ev = CreateEvent<V1Pod>;
    expectTypeOf<Ev['object']>().toEqualTypeOf<DeepReadonly<V1Pod>>();
    expectTypeOf<UpdateEvent<V1Pod>['objectNew']>().toEqualTypeOf<DeepReadonly<V1Pod>>();
    expectTypeOf<Parameters<MapFunc<V1Pod>>[0]>().toEqualTypeOf<DeepReadonly<V1Pod>>();
    expectTypeOf<Parameters<NonNullable<Predicate<V1Pod>['update']>>[1]>().toEqualTypeOf<
      DeepReadonly<V1Pod>
    >();
    // a cached object (what a KindSource delivers) and a plain one (a test's, a ChannelSource's) both fit
    expectTypeOf<Cached<V1Pod>>().toMatchTypeOf<DeepReadonly<V1Pod>>();
    expectTypeOf<V1Pod>().toMatchTypeOf<DeepReadonly<V1Pod>>();
    const w = {} as Pick<Writer, 'update'>;
    const handler: EventHandler<V1Pod> = {
      create(e) {
        // @ts-expect-error event objects are read-only
        e.object.metadata!.labels = {};
        // @ts-expect-error arrays too
        e.object.spec?.containers.push({ name: 'c' });
        // @ts-expect-error a writer takes the mutable type: copy first
        void w.update(Pod, e.object);
        const copy = deepCopy(e.object);
        copy.metadata = { ...copy.metadata, labels: { x: 'y' } };
        void w.update(Pod, copy);
      },
      update: () => undefined,
      delete: () => undefined,
    };
    const pred = newPredicateFuncs<V1Pod>((p) => {
      // @ts-expect-error predicates read, never write
      p.metadata!.name = 'x';
      return true;
    });
    expect(typeof handler.create).toBe('function');
    expect(pred.create?.({ metadata: { name: 'a' } })).toBe(true);
  });
});

import { getEventListeners } from 'node:events';
import type { Cache, ResourceEventHandler } from '@kubeloop/cache';
import { type Cached, type KubeObject, kind, type RESTMapper, StatusError } from '@kubeloop/client';
import { StaticRESTMapper } from '@kubeloop/client/apiutil';
import { NoKindMatchError } from '@kubeloop/client/errors';
import { FakeClock } from '@kubeloop/core/testing';
import { LOW_PRIORITY } from '@kubeloop/workqueue';
import { describe, expect, it, vi } from 'vitest';
import {
  ChannelSource,
  type EnqueueOptions,
  enqueueRequestForObject,
  type HandlerQueue,
  KindSource,
  type Logger,
  type Request,
} from '../src/index.js';

const Widget = kind('example.com/v1', 'Widget');
const mapping = {
  gvk: { group: 'example.com', version: 'v1', kind: 'Widget' },
  resource: { group: 'example.com', version: 'v1', resource: 'widgets' },
  scope: 'Namespaced' as const,
};

/** A cache with one fake informer whose handler the test drives. */
function fakeCache() {
  let handler: ResourceEventHandler | undefined;
  let synced = false;
  const informer = {
    addEventHandler: (h: ResourceEventHandler) => {
      handler = h;
      return { hasSynced: () => synced, remove: () => (handler = undefined) };
    },
    status: () => ({}),
    waitForSync: async () => {
      await vi.waitFor(() => expect(synced).toBe(true));
      return true;
    },
  };
  const cache = { getInformer: () => informer } as unknown as Cache;
  return {
    cache,
    handler: () => handler,
    sync: () => {
      synced = true;
    },
  };
}

function recordingQueue() {
  const added: Array<Request & EnqueueOptions> = [];
  const errors: unknown[] = [];
  const q: HandlerQueue = {
    add: (req, options) => added.push({ ...req, ...options }),
    handlerError: (err) => errors.push(err),
  };
  return { q, added, errors };
}

function logLines() {
  const lines: Array<{ msg: string; err?: unknown }> = [];
  const log: Logger = {
    debug: () => {},
    info: () => {},
    warn: () => {},
    error: (f, msg) => lines.push({ msg, err: f.err }),
    child: () => log,
  };
  return { log, lines };
}

// what the fake informer hands its handler stands for a cached object (read-only, server-set metadata)
const w = (name: string, rv = '1'): Cached<KubeObject> => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: {
    namespace: 'ns',
    name,
    resourceVersion: rv,
    uid: `uid-${name}`,
    creationTimestamp: '2026-01-01T00:00:00Z',
  },
});

describe('KindSource (controller-runtime source.Kind)', () => {
  it('a transient discovery error (503, connection refused) is retried until the kind resolves; the first of each kind of error is logged', async () => {
    const clock = new FakeClock();
    const failures: unknown[] = [
      new StatusError({
        apiVersion: 'v1',
        kind: 'Status',
        status: 'Failure',
        code: 503,
        reason: 'ServiceUnavailable',
        message: 'apiserver restarting',
      }),
      new StatusError({
        apiVersion: 'v1',
        kind: 'Status',
        status: 'Failure',
        code: 503,
        reason: 'ServiceUnavailable',
        message: 'apiserver restarting',
      }),
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' }),
      new NoKindMatchError('kind "Widget" in version "example.com/v1"'),
    ];
    let lookups = 0;
    const mapper = {
      restMapping: async () => {
        lookups++;
        const f = failures.shift();
        if (f) throw f;
        return mapping;
      },
    } as unknown as RESTMapper;
    const { log, lines } = logLines();
    const fc = fakeCache();
    const src = new KindSource(fc.cache, Widget, enqueueRequestForObject(), {
      restMapper: mapper,
      logger: log,
      clock,
    });
    const ac = new AbortController();
    src.start(ac.signal, recordingQueue().q);
    const synced = src.waitForSync(ac.signal);
    for (let i = 0; i < 50 && lookups < 5; i++) {
      await new Promise((r) => setImmediate(r));
      clock.step(1000);
    }
    await vi.waitFor(() => expect(fc.handler()).toBeDefined());
    fc.sync();
    expect(await synced).toBe(true);
    expect(lookups).toBe(5);
    expect(src.syncError()).toBeUndefined();
    // One line per kind of error: the 503 (twice, logged once), the refused connection, the no-match.
    expect(lines.map((l) => l.msg)).toEqual([
      'looking up the kind failed; retrying until the cache sync timeout',
      'looking up the kind failed; retrying until the cache sync timeout',
      expect.stringMatching(/not served/),
    ]);
    expect(lines[0]?.err).toBeInstanceOf(StatusError);
    ac.abort();
  });

  it('when the sync wait ends first, the last lookup error is kept for the final error', async () => {
    const clock = new FakeClock();
    let n = 0;
    const mapper = {
      restMapping: async () => {
        throw n++ === 0 ? new Error('connect ECONNREFUSED') : new NoKindMatchError('kind "Widget"');
      },
    } as unknown as RESTMapper;
    const fc = fakeCache();
    const src = new KindSource(fc.cache, Widget, enqueueRequestForObject(), { restMapper: mapper, clock });
    const ac = new AbortController();
    src.start(ac.signal, recordingQueue().q);
    const wait = new AbortController();
    const synced = src.waitForSync(wait.signal);
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setImmediate(r));
      clock.step(1000);
    }
    wait.abort();
    expect(await synced).toBe(false);
    expect(src.syncError()).toBeInstanceOf(NoKindMatchError);
    ac.abort();
  });

  it('15 sources retrying discovery on one signal add one abort listener to it, none once stopped', async () => {
    const clock = new FakeClock();
    const mapper = {
      restMapping: async () => {
        throw new NoKindMatchError('kind "Widget"');
      },
    } as unknown as RESTMapper;
    const ac = new AbortController();
    const waits: Promise<boolean>[] = [];
    for (let i = 0; i < 15; i++) {
      const src = new KindSource(fakeCache().cache, Widget, enqueueRequestForObject(), {
        restMapper: mapper,
        clock,
      });
      src.start(ac.signal, recordingQueue().q);
      waits.push(src.waitForSync(ac.signal));
    }
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setImmediate(r));
      expect(getEventListeners(ac.signal, 'abort').length).toBeLessThanOrEqual(1);
      clock.step(1000);
    }
    ac.abort();
    expect(await Promise.all(waits)).toEqual(Array(15).fill(false));
  });

  it('initial-list events and resyncs are enqueued at low priority, live changes at the default; predicates filter; handler failures are reported', async () => {
    const fc = fakeCache();
    const { q, added, errors } = recordingQueue();
    const src = new KindSource(fc.cache, Widget, enqueueRequestForObject(), {
      restMapper: new StaticRESTMapper([mapping]),
      predicates: [{ create: (o) => o.metadata?.name !== 'skip' }],
    });
    const ac = new AbortController();
    src.start(ac.signal, q);
    await vi.waitFor(() => expect(fc.handler()).toBeDefined());
    const h = fc.handler() as ResourceEventHandler;
    h.onAdd?.(w('listed'), true);
    h.onAdd?.(w('skip'), false);
    h.onAdd?.(w('live'), false);
    const same = w('resynced', '7');
    h.onUpdate?.(same, same);
    h.onUpdate?.(w('changed', '1'), w('changed', '2'));
    expect(added).toEqual([
      { namespace: 'ns', name: 'listed', priority: LOW_PRIORITY },
      { namespace: 'ns', name: 'live' },
      { namespace: 'ns', name: 'resynced', priority: LOW_PRIORITY },
      { namespace: 'ns', name: 'changed' },
    ]);
    expect(errors).toEqual([]);
    ac.abort();
    expect(fc.handler()).toBeUndefined();
  });

  it('initialListPriority sets the priority of initial-list and resync requests (C41); a non-finite one is refused', async () => {
    const fc = fakeCache();
    const { q, added } = recordingQueue();
    const src = new KindSource(fc.cache, Widget, enqueueRequestForObject(), {
      restMapper: new StaticRESTMapper([mapping]),
      initialListPriority: -5,
    });
    const ac = new AbortController();
    src.start(ac.signal, q);
    await vi.waitFor(() => expect(fc.handler()).toBeDefined());
    const h = fc.handler() as ResourceEventHandler;
    h.onAdd?.(w('listed'), true);
    h.onAdd?.(w('live'), false);
    expect(added).toEqual([
      { namespace: 'ns', name: 'listed', priority: -5 },
      { namespace: 'ns', name: 'live' },
    ]);
    ac.abort();
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, '1' as unknown as number])
      expect(
        () => new KindSource(fc.cache, Widget, enqueueRequestForObject(), { initialListPriority: bad }),
      ).toThrow(/initialListPriority/);
  });

  it('waitForSync resolves only once async handler calls of the initial list have enqueued (controller-runtime waits for the handler registration), so workers never start before them', async () => {
    // An owns() source maps through enqueueRequestForOwner, which awaits a RESTMapper lookup: before, the
    // source reported synced while those adds were still pending, the workers took the for() request and the
    // owner's late add reconciled it a second time at start-up.
    const fc = fakeCache();
    const { q, added } = recordingQueue();
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const src = new KindSource(fc.cache, Widget, {
      create: async (e, queue) => {
        await gate;
        queue.add({ namespace: 'ns', name: `owner-of-${e.object.metadata?.name}` });
      },
      update: () => undefined,
      delete: () => undefined,
    });
    const ac = new AbortController();
    src.start(ac.signal, q);
    await vi.waitFor(() => expect(fc.handler()).toBeDefined());
    (fc.handler() as ResourceEventHandler).onAdd?.(w('child'), true);
    fc.sync();
    let synced: boolean | undefined;
    const waiting = src.waitForSync(ac.signal).then((v) => {
      synced = v;
    });
    // The informer has synced; the handler's add is held by the gate, so the source must not be synced yet.
    await fc.cache.getInformer(Widget).waitForSync();
    for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
    expect(synced).toBeUndefined();
    expect(added).toEqual([]);
    release();
    await waiting;
    expect(synced).toBe(true);
    expect(added).toEqual([{ namespace: 'ns', name: 'owner-of-child', priority: LOW_PRIORITY }]);
    // after the sync nothing is tracked any more: a later async call does not hold anything
    (fc.handler() as ResourceEventHandler).onAdd?.(w('later'), false);
    expect(await src.waitForSync(ac.signal)).toBe(true);
    ac.abort();
  });

  it('waitForSync gives false when the signal aborts while an async handler call is pending', async () => {
    const fc = fakeCache();
    const { q } = recordingQueue();
    const src = new KindSource(fc.cache, Widget, {
      create: () => new Promise<void>(() => undefined), // never settles
      update: () => undefined,
      delete: () => undefined,
    });
    const ac = new AbortController();
    src.start(ac.signal, q);
    await vi.waitFor(() => expect(fc.handler()).toBeDefined());
    (fc.handler() as ResourceEventHandler).onAdd?.(w('stuck'), true);
    fc.sync();
    const waiting = src.waitForSync(ac.signal);
    ac.abort();
    expect(await waiting).toBe(false);
  });
});

describe('ChannelSource (controller-runtime source.Channel)', () => {
  it('delivers each object of an async iterable to the handler generic method, filtered by generic predicates', async () => {
    async function* ticks() {
      yield w('a');
      yield w('b');
      yield w('c');
    }
    const { q, added } = recordingQueue();
    const src = new ChannelSource(ticks(), enqueueRequestForObject(), {
      predicates: [{ generic: (o) => o.metadata?.name !== 'b' }],
    });
    expect(await src.waitForSync()).toBe(true);
    src.start(new AbortController().signal, q);
    await vi.waitFor(() => expect(added.map((r) => r.name)).toEqual(['a', 'c']));
    expect(() => new ChannelSource(ticks(), { create() {}, update() {}, delete() {} })).toThrow(TypeError);
  });
});

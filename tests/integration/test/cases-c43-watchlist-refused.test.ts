import { newManager } from '@kubeloop/builder';
import { InformerCache, WatchListSupport } from '@kubeloop/cache';
import { type ApiClient, ConfigMap, type KubeObject, kind, newClient, Secret } from '@kubeloop/client';
import { FakeClock } from '@kubeloop/core/testing';
import type { FaultSpec } from '@kubeloop/envtest';
import { describe, expect, it, vi } from 'vitest';
import { installCRD } from './support/crds.js';
import { realCluster, useFaultServer } from './support/fault-server.js';
import { probeWatchList } from './support/features.js';
import { recordingClient } from './support/recording-transport.js';
import { captureLogger, type LogRecord, uniqueName, useLiveCluster } from './support.js';

// C43: WatchList is the cache's default (as client-go's from 1.35), and a server that refuses it (the
// sendInitialEvents=true watch) in any way must not keep an informer from syncing: the reflector lists + watches
// in the same attempt (client-go reflector.go falls back on any watchList error but the retriable ones; a
// connection reset, retriable there without a bound, is retried 3 times in a row here). An answer that says the
// server does not serve streaming lists is logged once per cache and remembered for the server; a failure that a
// plain list would meet too (404, 403, 5xx, a stream cut short) is neither.

/** What kube-apiserver 1.32 on etcd 3.4 answers every streaming list (an ERROR event). */
const STORAGE_REFUSAL =
  'a watch stream was requested by the client but the required storage feature RequestWatchProgress is disabled';
const CustomResourceDefinition = kind('apiextensions.k8s.io/v1', 'CustomResourceDefinition');

const STREAMING = { verb: 'watch' as const, query: { sendInitialEvents: 'true' } };

/** Options of {@link watchListCache}. */
interface WatchListCacheOptions {
  /** Backoff between failed attempts, in ms. @defaultValue 60000 */
  backoffMs?: number;
  clock?: FakeClock;
  /** Passed as the cache's `useWatchList`; absent: the cache's default (WatchList on). */
  useWatchList?: boolean;
}

/**
 * A cache over `client` for `ns` (ConfigMaps and Secrets) with WatchList as the cache has it by default, stopped
 * through `cleanups`. `clock` times the 2 s wait for the end bookmark and the backoff: a test where a served
 * stream must not fall back gives a fake clock, so a loaded machine cannot turn a slow stream into a fallback.
 */
function watchListCache(
  client: ApiClient,
  ns: string,
  cleanups: Array<() => Promise<void>>,
  { backoffMs = 60_000, clock, useWatchList }: WatchListCacheOptions = {},
) {
  const records: LogRecord[] = [];
  const cache = new InformerCache({
    client,
    defaultNamespaces: [ns],
    ...(useWatchList !== undefined ? { useWatchList } : {}),
    logger: captureLogger(records),
    // The backoff is long on purpose: the fallback must happen within the attempt, not after a backoff step.
    reflector: { watchListTimeoutMs: 2000, backoff: { initialMs: backoffMs, maxMs: backoffMs } },
    ...(clock ? { clock } : {}),
  });
  const ac = new AbortController();
  const running = cache.start(ac.signal);
  cleanups.push(async () => {
    ac.abort();
    await running;
    await client.close();
  });
  return { cache, records };
}

describe.skipIf(realCluster)('C43: WatchList refused by the server (fault injection; envtest only)', () => {
  const ctx = useFaultServer('kubeloop-c43-test');

  /** Streaming-list watches the server saw in `ns`. */
  const streamingRequests = (ns: string) =>
    ctx.server.faults
      .requests({ verb: 'watch', namespace: ns })
      .filter((r) => new URLSearchParams(r.query).get('sendInitialEvents') === 'true');

  /**
   * A cache whose streaming lists meet `fault` syncs by list + watch; `remembered`: the answer is a refusal (told
   * once at warn and kept for the server), otherwise a failed request (no warning about streaming lists).
   */
  async function syncsDespite(
    fault: Omit<FaultSpec, 'match'> & { match?: object },
    remembered: boolean,
    backoffMs?: number,
  ) {
    const ns = await ctx.namespace('c43');
    for (const n of ['a', 'b', 'c'])
      await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: n } });
    ctx.server.faults.add({
      ...fault,
      match: { ...STREAMING, namespace: ns, ...(fault.match ?? {}) },
    } as FaultSpec);
    const { cache, records } = watchListCache(
      newClient(ctx.config),
      ns,
      ctx.cleanups,
      backoffMs !== undefined ? { backoffMs } : {},
    );
    cache.getInformer(ConfigMap);
    cache.getInformer(Secret);
    expect(await cache.waitForCacheSync()).toBe(true);
    expect((await cache.list(ConfigMap)).items.map((o) => o.metadata?.name).sort()).toEqual(['a', 'b', 'c']);
    const streaming = streamingRequests(ns);
    const lists = ctx.server.faults.requests({ verb: 'list', namespace: ns });
    // At most one streaming attempt per kind (the two informers may both try before the first refusal is
    // known; a 404 is tried again by the client itself after it refreshes its REST mapping), then plain lists.
    expect(streaming.length).toBeGreaterThanOrEqual(1);
    expect(lists.length).toBeGreaterThanOrEqual(1);
    // One informer at a time probes while the server's answer is unknown: one refusal, one warning. A failed
    // request says nothing about the server: no warning, each informer tries.
    const warns = records.filter((r) => r.level === 'warn' && /streaming list/.test(r.msg));
    expect(warns).toHaveLength(remembered ? 1 : 0);
    // Later changes arrive through the plain watch.
    await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: 'd' } });
    await expect.poll(async () => (await cache.list(ConfigMap)).items.length, { timeout: 20_000 }).toBe(4);
    return { streaming, ns, warns };
  }

  it.each([
    [500, 'InternalError', STORAGE_REFUSAL],
    [
      422,
      'Invalid',
      'sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled',
    ],
    [422, 'Invalid', 'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch'],
    [400, 'BadRequest', 'sendInitialEvents is not supported'],
  ])(
    'C43: a refusal, %i %s "%s", falls back to list + watch, syncs and is told once',
    async (status, reason, message) => {
      await syncsDespite({ type: 'fail', status, reason, message } as never, true);
    },
  );

  it.each([
    [500, 'InternalError'],
    [503, 'ServiceUnavailable'],
    [504, 'Timeout'],
    [400, 'BadRequest'],
    [403, 'Forbidden'],
    [404, 'NotFound'],
    [405, 'MethodNotAllowed'],
    [406, 'NotAcceptable'],
    [415, 'UnsupportedMediaType'],
    [422, 'Invalid'],
    [501, 'NotImplemented'],
  ])(
    'C43: a failed request, %i %s, to the streaming list falls back to list + watch and syncs',
    async (status, reason) => {
      await syncsDespite({ type: 'fail', status, reason, message: 'request failed' } as never, false);
    },
  );

  it('C43: a streaming list that sends the initial events but never the end bookmark falls back after watchListTimeoutMs and syncs', async () => {
    await syncsDespite({ type: 'suppressInitialEventsEnd' } as never, true);
  });

  it('C43: a streaming list whose stream ends cleanly without the end bookmark falls back and syncs', async () => {
    await syncsDespite({ type: 'shapeWatch', steps: [{ op: 'end' }] } as never, false);
  });

  it('C43: a streaming list answered with an ERROR event (the 500 of kube-apiserver 1.32 on etcd 3.4) falls back and syncs', async () => {
    await syncsDespite(
      {
        type: 'shapeWatch',
        steps: [{ op: 'error', code: 500, reason: 'InternalError', message: STORAGE_REFUSAL }],
      } as never,
      true,
    );
  });

  it('C43: a streaming list answered with an ERROR event of any other 500 falls back, syncs, and is not remembered', async () => {
    await syncsDespite(
      {
        type: 'shapeWatch',
        steps: [
          { op: 'error', code: 500, reason: 'InternalError', message: 'etcdserver: request timed out' },
        ],
      } as never,
      false,
    );
  });

  it('C43: a streaming list whose stream breaks mid-event (truncated JSON) before the end bookmark falls back and syncs', async () => {
    await syncsDespite({ type: 'shapeWatch', steps: [{ op: 'pass' }, { op: 'truncate' }] } as never, false);
  });

  it('C43: a server that resets every streaming list before its end bookmark is retried a bounded number of times, then listed', async () => {
    // A connection reset is retriable (client-go backs off and tries WatchList again); a server (or a proxy)
    // that resets every streaming list would be retried forever without the bound (3 in a row).
    const { streaming, warns } = await syncsDespite(
      { type: 'shapeWatch', steps: [{ op: 'pass' }, { op: 'destroy' }] } as never,
      true,
      20,
    );
    // The ConfigMaps' stream is cut after its first event every time: three attempts, then the fallback, told
    // once with the count (the transport sees the cut as undici's "other side closed", UND_ERR_SOCKET).
    expect(streaming.filter((r) => r.path.endsWith('/configmaps'))).toHaveLength(3);
    expect(warns).toHaveLength(1);
    expect(warns[0]).toMatchObject({ msg: expect.stringMatching(/connection reset/), resets: 3 });
  });

  it('C43: a streaming list that gets no response at all (no headers) falls back after watchListTimeoutMs and syncs', async () => {
    await syncsDespite({ type: 'blackhole', sendHeaders: false } as never, true);
  });

  it('C43: a server that answers the streaming list with nothing (no initial events, no bookmark) is given up after watchListTimeoutMs', async () => {
    await syncsDespite({ type: 'blackhole', sendHeaders: true } as never, true);
  });

  it('C43: useWatchList false on the cache sends no streaming list; byObject turns it back on for one kind', async () => {
    const ns = await ctx.namespace('c43off');
    await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: 'a' } });
    const client = newClient(ctx.config);
    const cache = new InformerCache({
      client,
      defaultNamespaces: [ns],
      useWatchList: false,
      byObject: [{ kind: Secret, useWatchList: true }],
    });
    const ac = new AbortController();
    const running = cache.start(ac.signal);
    ctx.cleanups.push(async () => {
      ac.abort();
      await running;
      await client.close();
    });
    cache.getInformer(ConfigMap);
    cache.getInformer(Secret);
    expect(await cache.waitForCacheSync()).toBe(true);
    const streamed = streamingRequests(ns).map((r) => r.path);
    expect(streamed).toEqual([`/api/v1/namespaces/${ns}/secrets`]);
    expect(ctx.server.faults.requests({ verb: 'list', namespace: ns }).map((r) => r.path)).toEqual([
      `/api/v1/namespaces/${ns}/configmaps`,
    ]);
  });

  it('C43: the manager option cache.useWatchList false reaches its informers: no streaming list', async () => {
    const ns = await ctx.namespace('c43mgr');
    await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: 'a' } });
    const mgr = newManager(ctx.config, { cache: { defaultNamespaces: [ns], useWatchList: false } });
    mgr.getCache().getInformer(ConfigMap);
    const ac = new AbortController();
    const running = mgr.start(ac.signal);
    ctx.cleanups.push(async () => {
      ac.abort();
      await running;
    });
    expect(await mgr.getCache().waitForCacheSync()).toBe(true);
    expect(streamingRequests(ns)).toEqual([]);
    expect(ctx.server.faults.requests({ verb: 'list', namespace: ns }).map((r) => r.path)).toEqual([
      `/api/v1/namespaces/${ns}/configmaps`,
    ]);
  });

  it('C43: by default the cache syncs by WatchList on a server that serves it (no list request)', async () => {
    const ns = await ctx.namespace('c43on');
    await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: 'a' } });
    const { cache, records } = watchListCache(newClient(ctx.config), ns, ctx.cleanups, {
      clock: new FakeClock(),
    });
    cache.getInformer(ConfigMap);
    expect(await cache.waitForCacheSync()).toBe(true);
    expect((await cache.list(ConfigMap)).items.map((o) => o.metadata?.name)).toEqual(['a']);
    expect(streamingRequests(ns)).toHaveLength(1);
    expect(ctx.server.faults.requests({ verb: 'list', namespace: ns })).toHaveLength(0);
    expect(records.filter((r) => r.level === 'warn')).toEqual([]);
  });

  it('C43: the refusal is remembered for the server: relists (410 on the plain watch) do not try WatchList again', async () => {
    const ns = await ctx.namespace('c43m');
    await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: 'a' } });
    ctx.server.faults.failRequests({
      match: { ...STREAMING, namespace: ns },
      status: 500,
      reason: 'InternalError',
      message: STORAGE_REFUSAL,
    });
    const { cache } = watchListCache(newClient(ctx.config), ns, ctx.cleanups, { backoffMs: 50 });
    cache.getInformer(ConfigMap);
    expect(await cache.waitForCacheSync()).toBe(true);
    // Three forced relists: the open watch is cut (a restart that keeps the state), and the re-watch gets a 410.
    const plainWatch = { verb: 'watch' as const, namespace: ns, resource: 'configmaps' };
    for (let i = 0; i < 3; i++) {
      const lists = ctx.server.faults.requests({ verb: 'list', namespace: ns }).length;
      ctx.server.faults.expire({ match: { ...plainWatch }, times: 1 });
      await ctx.server.faults.restart({ keepState: true });
      await expect
        .poll(() => ctx.server.faults.requests({ verb: 'list', namespace: ns }).length, { timeout: 20_000 })
        .toBeGreaterThan(lists);
    }
    expect(streamingRequests(ns)).toHaveLength(1);
  });
  it('C43: a CRD deleted and re-created under a running informer: its 404s are not a refusal, the informer streams again at once, and a kind started meanwhile streams', async () => {
    const ns = await ctx.namespace('c43crd');
    const group = `${uniqueName('c43crd')}.example.com`;
    const crd = { group, kind: 'Widget', plural: 'widgets', scope: 'Namespaced' as const };
    const Widget = kind(`${group}/v1`, 'Widget');
    const widget = (name: string) =>
      ({ apiVersion: `${group}/v1`, kind: 'Widget', metadata: { namespace: ns, name } }) as KubeObject;
    await installCRD(ctx.api, crd);
    await ctx.api.create(Widget, widget('w0'));
    // A fake clock drives the backoff and the client's kind-miss refreshes: an attempt starts only when the test
    // steps it, so none is under way while the CRD is re-created, whatever the load.
    const clock = new FakeClock();
    const support = new WatchListSupport({ clock });
    const records: LogRecord[] = [];
    const { client } = recordingClient(ctx.config, { mapper: { clock } });
    const cache = new InformerCache({
      client,
      defaultNamespaces: [ns],
      logger: captureLogger(records),
      clock,
      reflector: {
        watchListSupport: support,
        backoff: { initialMs: 1000, maxMs: 1000 },
        // Far beyond the clock steps below: a served stream is never given up for its end bookmark here.
        watchListTimeoutMs: 3_600_000,
      },
    });
    const ac = new AbortController();
    const running = cache.start(ac.signal);
    ctx.cleanups.push(async () => {
      ac.abort();
      await running;
      await client.close();
    });
    const inf = cache.getInformer(Widget);
    expect(await cache.waitForCacheSync()).toBe(true);
    const requests = (verb: 'list' | 'watch', resource: string, since = 0) =>
      ctx.server.faults
        .requests({ verb, namespace: ns, resource, since })
        .filter((r) => verb === 'list' || new URLSearchParams(r.query).get('sendInitialEvents') === 'true');
    expect(requests('watch', 'widgets')).toHaveLength(1);
    expect(requests('list', 'widgets')).toHaveLength(0);

    // Each failed attempt is logged once, just before its backoff starts (the reflector then waits on the clock).
    const failed = () => records.filter((r) => r.msg === 'watch ended with error').length;
    await ctx.api.delete(CustomResourceDefinition, { name: `widgets.${group}` });
    await vi.waitFor(() => expect(failed()).toBeGreaterThanOrEqual(1), { timeout: 20_000 });
    // Two more attempts, each a streaming list then a list, both failing (404, or no such kind).
    for (let i = 0; i < 2; i++) {
      const before = failed();
      clock.step(5000);
      await vi.waitFor(() => expect(failed()).toBe(before + 1), { timeout: 20_000 });
    }
    expect(inf.status().unserved).toBe(true);
    // Nothing said about streaming lists: nothing remembered, nothing warned about them.
    expect(support.shouldTry()).toBe(true);
    expect(records.filter((r) => r.level === 'warn' && /streaming list/.test(r.msg))).toEqual([]);
    // A kind started now streams (a remembered refusal would make it list).
    cache.getInformer(ConfigMap);
    await vi.waitFor(() => expect(cache.getInformer(ConfigMap).hasSynced()).toBe(true), { timeout: 20_000 });
    expect(requests('watch', 'configmaps')).toHaveLength(1);
    expect(requests('list', 'configmaps')).toHaveLength(0);

    // The CRD comes back: the first attempt that finds the kind (one clock step each) syncs by a streaming list.
    await installCRD(ctx.api, crd);
    await ctx.api.create(Widget, widget('x'));
    const back = Date.now();
    for (let i = 0; i < 5 && inf.status().unserved; i++) {
      const before = failed();
      clock.step(5000);
      await vi.waitFor(() => expect(failed() > before || !inf.status().unserved).toBe(true), {
        timeout: 20_000,
      });
    }
    expect(inf.status().unserved).toBe(false);
    expect((await cache.list(Widget)).items.map((w) => w.metadata?.name)).toEqual(['x']);
    expect(requests('list', 'widgets', back)).toHaveLength(0);
    expect(requests('watch', 'widgets', back).map((r) => r.status)).toEqual([200]);
  });
});

// Whether the run's server serves WatchList is asked (probeWatchList), never assumed from envtest vs real: kube-apiserver
// 1.30 and 1.31 refuse it with 422 (feature gate off), 1.32 on etcd 3.4 with 500, a newer one may serve it.
describe('C43 on the run server (envtest serves WatchList; a real server may refuse it)', () => {
  const live = useLiveCluster();

  it('C43: by default (WatchList on) the informer syncs whatever the server does with the streaming list', async () => {
    const { api, ns } = await live.namespace('c43live');
    for (const n of ['a', 'b']) await api.create(ConfigMap, { metadata: { namespace: ns, name: n } });
    const { cache, records } = watchListCache(live.client(), ns, live.cleanups);
    cache.getInformer(ConfigMap);
    expect(await cache.waitForCacheSync()).toBe(true);
    expect((await cache.list(ConfigMap)).items.map((o) => o.metadata?.name).sort()).toEqual(['a', 'b']);
    const fallbacks = records.filter((r) => r.level === 'warn' && /streaming list/.test(r.msg));
    if (realCluster)
      console.info(
        `C43 live: ${fallbacks.length} fallback(s)`,
        fallbacks.map((r) => r.code),
      );
    expect(fallbacks.length).toBeLessThanOrEqual(1);
  });

  it('C43: two kinds starting together send one streaming request to a refusing server and log one warning', async () => {
    const { api, ns } = await live.namespace('c43default');
    const probe = await probeWatchList(api, ns);
    // envtest serves it: there the probe must say so (a probe that always said "not served" would pass below).
    if (!realCluster) expect(probe, 'envtest serves WatchList').toMatchObject({ served: true });
    for (const n of ['a', 'b']) await api.create(ConfigMap, { metadata: { namespace: ns, name: n } });
    const { cache, records } = watchListCache(live.client(), ns, live.cleanups, { clock: new FakeClock() });
    const started = performance.now();
    cache.getInformer(ConfigMap);
    cache.getInformer(Secret);
    expect(await cache.waitForCacheSync()).toBe(true);
    const syncedMs = performance.now() - started;
    expect((await cache.list(ConfigMap)).items.map((o) => o.metadata?.name).sort()).toEqual(['a', 'b']);
    const fallbacks = records.filter((r) => r.level === 'warn' && /streaming list/.test(r.msg));
    if (realCluster)
      console.info(
        `C43 live, two kinds: synced in ${syncedMs.toFixed(0)} ms; ${fallbacks.length} warning(s); WatchList served: ${probe.served} (${probe.why})`,
        fallbacks.map((r) => `${r.code} ${r.msg}`),
      );
    // A server that serves WatchList gives no warning; a refusing one is told once for both kinds.
    expect(fallbacks.length, `WatchList served: ${probe.served} (${probe.why})`).toBe(probe.served ? 0 : 1);
  });
});

import { newControllerManagedBy, newManager } from '@kubeloop/builder';
import { InformerCache, listWatchFor, objectOfDelete, SharedIndexInformer } from '@kubeloop/cache';
import { ConfigMap, type KubeObject, kind, newClient, Pod } from '@kubeloop/client';
import { isTimeout, NoKindMatchError } from '@kubeloop/client/errors';
import type { V1Pod } from '@kubeloop/client/models';
import { FakeClock } from '@kubeloop/core/testing';
import { describe, expect, it } from 'vitest';
import { realCluster, useFaultServer } from './support/fault-server.js';
import { captureLogger, type LogRecord, podManifest, waitFor } from './support.js';

/**
 * Resolves `p`, or rejects naming `what` after WITHIN_MS: a bound on "it ends instead of hanging", not a timing
 * claim, set just under the test's 60 s budget. Shorter fixed deadlines (5-10 s) are what fail on an oversubscribed
 * machine while the code is only slow.
 */
const WITHIN_MS = 45_000;
async function within<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`timed out after ${WITHIN_MS} ms waiting for ${what}`)),
          WITHIN_MS,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

describe.skipIf(realCluster)('breaking the client → cache → builder stack (envtest fault injection)', () => {
  const ctx = useFaultServer('kubeloop-breaking');

  async function namespaceWithPods(prefix: string, names: string[]) {
    const ns = await ctx.namespace(prefix);
    for (const n of names) await ctx.api.create(Pod, podManifest(ns, n));
    return ns;
  }

  /** A running informer on pods of `ns` recording notifications and log records. */
  function podInformer(ns: string, records: LogRecord[] = []) {
    const client = newClient(ctx.config);
    const inf = new SharedIndexInformer<V1Pod>(listWatchFor(client, Pod, { namespace: ns }), {
      name: `pods/${ns}`,
      logger: captureLogger(records),
      reflector: { backoff: { initialMs: 10, maxMs: 50, jitter: 0 } },
    });
    const log: string[] = [];
    inf.addEventHandler({
      onAdd: (p) => log.push(`add ${p.metadata?.name}`),
      onUpdate: (_a, b) => log.push(`update ${b.metadata?.name}`),
      onDelete: (p) => log.push(`delete ${objectOfDelete(p).metadata?.name}`),
    });
    const ac = new AbortController();
    const running = inf.run(ac.signal);
    ctx.cleanups.push(async () => {
      ac.abort();
      await running;
      await client.close();
    });
    return { inf, log, records, ac, running };
  }

  it('B01: a 200 list reply that is not a list (a Status, no body, truncated JSON) is an error, never an empty list that deletes the cache', async () => {
    const ns = await namespaceWithPods('b01', ['a', 'b']);
    const { inf, log, records } = podInformer(ns);
    await waitFor(() => inf.hasSynced(), 'sync');
    await ctx.api.create(Pod, podManifest(ns, 'c'));
    await waitFor(() => inf.getIndexer().list().length === 3, 'c in the cache');
    // Force a relist: the next watch gets 410; then the next two lists get a 200 whose body is not a list.
    const bad1 = ctx.server.faults.failRequests({
      match: { verb: 'list', namespace: ns },
      status: 200,
      times: 1,
    });
    const bad2 = ctx.server.faults.failRequests({
      match: { verb: 'list', namespace: ns },
      status: 200,
      body: 'empty',
      times: 1,
    });
    const bad3 = ctx.server.faults.failRequests({
      match: { verb: 'list', namespace: ns },
      status: 200,
      body: { raw: '{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[{"meta' },
      times: 1,
    });
    const expire = ctx.server.faults.expire({ match: { verb: 'watch', namespace: ns }, times: 1 });
    // Drop the running watch so the informer re-watches (and meets the 410).
    await ctx.server.faults.restart({ keepState: true });
    // Either the informer comes through the three bad replies to a good relist, or it took a bad one for an
    // empty list and told its handlers every object was deleted.
    await waitFor(
      () =>
        (!bad1.active &&
          !bad2.active &&
          !bad3.active &&
          expire.hits === 1 &&
          inf.getIndexer().list().length === 3) ||
        log.some((l) => l.startsWith('delete')),
      () =>
        `the bad list replies served (${bad1.hits}, ${bad2.hits}, ${bad3.hits}, ${expire.hits}), then a good relist`,
    );
    expect(log.filter((l) => l.startsWith('delete'))).toEqual([]);
    expect(records.some((r) => r.level === 'warn' && /not a list|not JSON|empty/i.test(String(r.err)))).toBe(
      true,
    );
  });

  it('B02: a watch event whose object lacks metadata is a decode error: nothing half-made reaches the cache and the informer goes on', async () => {
    const ns = await namespaceWithPods('b02', ['a']);
    const shaped = ctx.server.faults.shapeWatch({
      match: { verb: 'watch', namespace: ns },
      times: 1,
      steps: [{ op: 'raw', data: '{"type":"ADDED","object":{"apiVersion":"v1","kind":"Pod"}}\n' }],
    });
    const { inf, log, records } = podInformer(ns);
    await waitFor(() => inf.hasSynced() && shaped.hits === 1, 'sync and the shaped watch');
    await ctx.api.create(Pod, podManifest(ns, 'b'));
    await waitFor(() => inf.getIndexer().list().length === 2, 'b in the cache');
    expect(inf.getIndexer().listKeys().sort()).toEqual([`${ns}/a`, `${ns}/b`]);
    expect(log).toEqual(['add a', 'add b']);
    expect(records.some((r) => r.level === 'warn' && /metadata/.test(String(r.err)))).toBe(true);
  });

  it('C06: a handler that throws is logged and neither stops the informer nor other handlers', async () => {
    const ns = await namespaceWithPods('c06', ['a']);
    const records: LogRecord[] = [];
    const { inf, log } = podInformer(ns, records);
    let thrown = 0;
    inf.addEventHandler({
      onAdd: () => {
        thrown++;
        throw new Error('handler bug');
      },
      onDelete: () => {
        thrown++;
        throw 'not even an Error';
      },
    });
    await waitFor(() => inf.hasSynced(), 'sync');
    await ctx.api.create(Pod, podManifest(ns, 'b'));
    await ctx.api.delete(Pod, { namespace: ns, name: 'a' });
    await waitFor(() => log.includes('delete a') && log.includes('add b'), 'events after the throws');
    expect(thrown).toBeGreaterThanOrEqual(2);
    const errors = records.filter((r) => r.level === 'error');
    // Errors are logged whole (stack and cause), so compare their messages.
    const message = (e: unknown) => (e instanceof Error ? e.message : e);
    expect(errors.map((r) => message(r.err))).toEqual(
      expect.arrayContaining(['handler bug', 'not even an Error']),
    );
    expect(inf.getIndexer().listKeys()).toEqual([`${ns}/b`]);
  });

  it('C06: an async handler whose promise rejects is logged too, not an unhandled rejection', async () => {
    const ns = await namespaceWithPods('c06async', ['a']);
    const records: LogRecord[] = [];
    const { inf, log } = podInformer(ns, records);
    let rejected = 0;
    inf.addEventHandler({
      // An async function is assignable to a void-returning handler: its rejection must not escape.
      onUpdate: async () => {
        rejected++;
        throw new Error('async handler bug');
      },
    });
    await waitFor(() => inf.hasSynced(), 'sync');
    await ctx.api.patch(
      Pod,
      { namespace: ns, name: 'a' },
      { type: 'merge', data: { metadata: { labels: { x: '1' } } } },
    );
    await waitFor(
      () => records.some((r) => r.level === 'error' && (r.err as Error)?.message === 'async handler bug'),
      'the logged rejection',
    );
    await ctx.api.create(Pod, podManifest(ns, 'b'));
    await waitFor(() => log.includes('add b'), 'events after the rejection');
    expect(rejected).toBe(1);
  });

  it('B03: a reconciler that throws, rejects with undefined or throws a non-Error is logged and retried', async () => {
    const ns = await ctx.namespace('b03');
    const records: LogRecord[] = [];
    const mgr = newManager(ctx.config, {
      logger: captureLogger(records),
      cache: { defaultNamespaces: [ns] },
    });
    let calls = 0;
    newControllerManagedBy(mgr)
      .for(ConfigMap)
      .complete({
        reconcile() {
          calls++;
          if (calls === 1) throw new Error('sync throw');
          if (calls === 2) return Promise.reject(undefined);
          if (calls === 3) return Promise.reject('a string');
          return Promise.resolve(undefined);
        },
      });
    const ac = new AbortController();
    const run = mgr.start(ac.signal);
    ctx.cleanups.push(async () => {
      ac.abort();
      await run;
    });
    await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: 'x' } });
    await waitFor(() => calls >= 4, 'the fourth reconcile');
    const errs = records.filter((r) => r.msg === 'Reconciler error').map((r) => String(r.err));
    expect(errs).toHaveLength(3);
    expect(errs[0]).toContain('sync throw');
  });

  it('B04: aborting while the list is in flight stops the informer at once', async () => {
    const ns = await namespaceWithPods('b04', ['a']);
    const held = ctx.server.faults.delayRequests({
      match: { verb: 'list', namespace: ns },
      delayMs: 60_000,
      times: 1,
    });
    const { inf, ac, running } = podInformer(ns);
    await waitFor(() => held.hits === 1, 'the list held at the server');
    ac.abort();
    await within(running, 'the informer to stop');
    expect(inf.hasSynced()).toBe(false);
    expect(inf.isStopped()).toBe(true);
  });

  it('B05: stopping the manager waits for in-flight reconciles, and is bounded by the graceful shutdown timeout', async () => {
    const ns = await ctx.namespace('b05');
    for (const hang of [false, true]) {
      const records: LogRecord[] = [];
      const mgr = newManager(ctx.config, {
        logger: captureLogger(records),
        // The hanging reconcile waits the grace period out; the other must stop the manager before it runs out,
        // so its grace period is one the test never reaches (a real 1 s ran out on a loaded machine first).
        gracefulShutdownTimeoutMs: hang ? 1000 : 10 * 60_000,
        cache: { defaultNamespaces: [ns] },
      });
      let release!: () => void;
      const gate = new Promise<void>((r) => {
        release = r;
      });
      let inFlight = 0;
      let finished = 0;
      newControllerManagedBy(mgr)
        .for(ConfigMap)
        .named(`b05-${hang}`)
        .complete({
          async reconcile() {
            inFlight++;
            if (hang) await new Promise(() => {});
            await gate;
            finished++;
          },
        });
      const ac = new AbortController();
      let stopped = false;
      let stopError: unknown;
      const run = mgr.start(ac.signal).then(
        () => {
          stopped = true;
        },
        (e: unknown) => {
          stopped = true;
          stopError = e;
        },
      );
      await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: `cm-${hang}` } }).catch(() => {});
      await waitFor(() => inFlight >= 1, 'a reconcile in flight');
      ac.abort();
      if (!hang) {
        // Still waiting for the reconcile; once it finishes, the manager stops.
        await waitFor(() => records.some((r) => r.msg === 'Stopping and waiting for runnables'), 'stopping');
        expect(stopped).toBe(false);
        release();
        await within(run, 'the manager to stop');
        expect(finished).toBe(1);
      } else {
        await within(run, 'the manager to give up after the graceful shutdown timeout');
        expect(records.some((r) => r.level === 'error' && /graceful shutdown timeout/.test(r.msg))).toBe(
          true,
        );
        expect(stopError).toMatchObject({ code: 'ERR_SHUTDOWN_TIMEOUT' });
      }
    }
  });

  // Its setup makes 40 namespaces with a pod each before the wait starts; on a starved worker that alone took
  // ~35 s of the default 60 s, leaving the sync wait 23 s. The wait is bounded by the test's own timeout, so
  // the timeout covers setup and sync together.
  it('B06: 40 informers started at the same moment all sync, over one client', async () => {
    const nss = await Promise.all(Array.from({ length: 40 }, (_, i) => namespaceWithPods(`b06-${i}`, ['a'])));
    const client = newClient(ctx.config);
    const ac = new AbortController();
    const infs = nss.map(
      (ns) => new SharedIndexInformer<V1Pod>(listWatchFor(client, Pod, { namespace: ns }), { name: ns }),
    );
    const runs = infs.map((i) => i.run(ac.signal));
    ctx.cleanups.push(async () => {
      ac.abort();
      await Promise.all(runs);
      await client.close();
    });
    await waitFor(
      () => infs.every((i) => i.hasSynced()),
      () => `${infs.filter((i) => i.hasSynced()).length}/40 synced`,
    );
    expect(infs.map((i) => i.getIndexer().list().length)).toEqual(infs.map(() => 1));
  }, 180_000);

  it('B07: a kind the server does not serve gives a clear error naming the GVK, instead of a hang', async () => {
    const Nope = kind<KubeObject>('nope.example.com/v1', 'Nope');
    const client = newClient(ctx.config);
    const cache = new InformerCache({ client });
    const ac = new AbortController();
    const run = cache.start(ac.signal);
    ctx.cleanups.push(async () => {
      ac.abort();
      await run;
      await client.close();
    });
    const err = await within(
      cache.list(Nope).catch((e: unknown) => e),
      'the cache read to fail',
    );
    expect(err).toBeInstanceOf(NoKindMatchError);
    expect(String((err as Error).message)).toContain('nope.example.com');
    expect(String((err as Error).message)).toContain('Nope');

    // controller-runtime waits for the kind until the sync timeout (a CRD may be installed meanwhile), then
    // fails naming it.
    // The sync timeout runs on the controller's clock: a real 1.5 s could run out on a loaded machine before
    // the source's first lookup had failed, leaving the error no cause to name. It runs out here only after.
    const mrecords: LogRecord[] = [];
    const mgr = newManager(ctx.config, { logger: captureLogger(mrecords) });
    const clock = new FakeClock();
    newControllerManagedBy(mgr)
      .for(Nope)
      .withOptions({ cacheSyncTimeoutMs: 1500, clock })
      .complete({ reconcile: async () => {} });
    const mac = new AbortController();
    let settled = false;
    const started = mgr
      .start(mac.signal)
      .then(
        () => undefined,
        (e: unknown) => e,
      )
      .finally(() => {
        settled = true;
      });
    const notServed = () =>
      mrecords.filter((r) => r.kind === 'Nope.v1.nope.example.com' && /not served/.test(r.msg));
    const merr = await within(
      (async () => {
        await waitFor(() => notServed().length > 0, 'the source to log the kind as not served');
        await waitFor(() => {
          clock.step(1500);
          return settled;
        }, 'the controller sync timeout');
        return started;
      })(),
      'the manager to fail',
    ).catch((e: unknown) => {
      throw new Error(
        `${(e as Error).message}; log: ${JSON.stringify(mrecords.map((r) => [r.level, r.msg, r.err]))}`,
      );
    });
    mac.abort();
    expect(String((merr as Error)?.message)).toMatch(/Nope.*nope\.example\.com|nope\.example\.com.*Nope/);
    // Logged once when first seen, naming the kind.
    expect(notServed()).toHaveLength(1);
  });

  it('B08: stopping the manager while its cache is still syncing (list held at the server) returns promptly, starting no controller', async () => {
    const ns = await ctx.namespace('b08');
    const held = ctx.server.faults.delayRequests({
      match: { initialList: true, namespace: ns },
      delayMs: 60_000,
      times: 1,
    });
    const records: LogRecord[] = [];
    const mgr = newManager(ctx.config, {
      logger: captureLogger(records),
      cache: { defaultNamespaces: [ns] },
    });
    let reconciles = 0;
    newControllerManagedBy(mgr)
      .for(ConfigMap)
      .complete({
        reconcile: async () => {
          reconciles++;
        },
      });
    // The controller's informer is created when the controller starts; a read through the cache creates it
    // now, so the manager's sync waits on the held list.
    const client = mgr.getClient();
    const ac = new AbortController();
    const run = mgr.start(ac.signal);
    const read = client.list(ConfigMap, { namespace: ns }).catch((e: unknown) => e);
    await waitFor(() => held.hits === 1, 'the list held at the server');
    ac.abort();
    await within(run, 'the manager to stop');
    expect(reconciles).toBe(0);
    expect(records.some((r) => r.msg === 'Starting workers')).toBe(false);
    // The read that was waiting for the sync fails instead of hanging.
    expect(await within(read, 'the pending cache read')).toBeInstanceOf(Error);
  });

  it('B09: a cache read whose own signal aborts while its informer syncs fails with a Timeout naming the kind, not "cache not started"', async () => {
    const ns = await ctx.namespace('b09');
    ctx.server.faults.delayRequests({
      match: { initialList: true, namespace: ns },
      delayMs: 60_000,
      times: 1,
    });
    const client = newClient(ctx.config);
    const cache = new InformerCache({ client, namespace: ns });
    const ac = new AbortController();
    const run = cache.start(ac.signal);
    ctx.cleanups.push(async () => {
      ac.abort();
      await run;
      await client.close();
    });
    const readAbort = new AbortController();
    const read = cache.list(ConfigMap, { signal: readAbort.signal }).catch((e: unknown) => e);
    await waitFor(
      () => ctx.server.faults.requests({ initialList: true, namespace: ns }).length === 1,
      'the held list',
    );
    readAbort.abort();
    const err = await within(read, 'the read to fail');
    expect(isTimeout(err)).toBe(true);
    expect(String((err as Error).message)).toContain('ConfigMap');
  });

  it('B10: a watch ERROR event carrying a 500, or a bare Status line in the stream, is survived without replays', async () => {
    const ns = await namespaceWithPods('b10', ['a', 'b']);
    const { inf, log, records } = podInformer(ns);
    await waitFor(() => inf.hasSynced(), 'sync');
    const err = ctx.server.faults.shapeWatch({
      match: { verb: 'watch', namespace: ns },
      times: 1,
      steps: [{ op: 'error', code: 500, message: 'etcd is unhappy' }],
    });
    const bare = ctx.server.faults.shapeWatch({
      match: { verb: 'watch', namespace: ns },
      times: 1,
      steps: [{ op: 'status', code: 500, message: 'a bare status' }],
    });
    // Drop the running watch so the next ones meet the shaped streams.
    await ctx.server.faults.restart({ keepState: true });
    await waitFor(() => err.hits === 1 && bare.hits === 1, 'both shaped watches');
    await ctx.api.patch(
      Pod,
      { namespace: ns, name: 'a' },
      { type: 'merge', data: { metadata: { labels: { x: '1' } } } },
    );
    await waitFor(() => log.includes('update a'), 'the real change');
    expect(log).toEqual(['add a', 'add b', 'update a']);
    expect(records.some((r) => r.level === 'warn' && /etcd is unhappy/.test(String(r.err)))).toBe(true);
  });
});

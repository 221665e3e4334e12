import { ConfigMap, type KubeObject, StatusError } from '@kubeloop/client';
import type { Logger } from '@kubeloop/core';
import { FakeClock } from '@kubeloop/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  CacheNotStartedError,
  CacheOptionsError,
  InformerCache,
  type InformerCacheOptions,
  InformerSyncError,
  Reflector,
  StoreError,
} from '../src/index.js';
import { FakeClient } from './support/fake-client.js';

const running: AbortController[] = [];
afterEach(() => {
  vi.restoreAllMocks();
  for (const ac of running.splice(0)) ac.abort();
});

function startCache(fc: FakeClient, opts: Partial<InformerCacheOptions> = {}) {
  const clock = new FakeClock();
  const cache = new InformerCache({ client: fc.asClient(), clock, ...opts });
  const ac = new AbortController();
  running.push(ac);
  const done = cache.start(ac.signal);
  const stop = async () => {
    ac.abort();
    await done;
  };
  return { cache, clock, ac, done, stop };
}

function recordingLogger(lines: Array<{ obj: Record<string, unknown>; msg: string }>): Logger {
  const log = (obj: Record<string, unknown>, msg: string) => lines.push({ obj, msg });
  const logger: Logger = { debug: log, info: log, warn: log, error: log, child: () => logger } as Logger;
  return logger;
}

describe('InformerCache: an informer that can not sync says why (the error is never lost)', () => {
  for (const namespaces of [undefined, ['a', 'b']]) {
    const where = namespaces ? 'per-namespace informers' : 'one cluster-wide informer';
    it(`an informer that stops with an error before it syncs (${where}): reads, waitForCacheSync and syncError() name the GVK and carry the error as cause`, async () => {
      const boom = new Error('boom: the reflector broke');
      vi.spyOn(Reflector.prototype, 'run').mockRejectedValue(boom);
      const fc = new FakeClient();
      const lines: Array<{ obj: Record<string, unknown>; msg: string }> = [];
      const t = startCache(fc, {
        ...(namespaces ? { defaultNamespaces: namespaces } : {}),
        logger: recordingLogger(lines),
      });
      const inf = t.cache.getInformer(ConfigMap);

      const waited = (await t.cache.waitForCacheSync().catch((e: unknown) => e)) as InformerSyncError;
      expect(waited).toBeInstanceOf(InformerSyncError);
      expect(waited.code).toBe('ERR_INFORMER_SYNC');
      expect(waited.kind).toBe('ConfigMap.v1');
      expect(waited.stopped).toBe(true);
      expect(waited.cause).toBe(boom);
      expect(waited.message).toContain('ConfigMap.v1');
      expect(waited.message).toContain('boom: the reflector broke');
      expect(waited).not.toBeInstanceOf(CacheNotStartedError);

      for (const read of [
        () => t.cache.list(ConfigMap),
        () => t.cache.get(ConfigMap, { namespace: 'a', name: 'x' }),
      ]) {
        const err = (await read().catch((e: unknown) => e)) as InformerSyncError;
        expect(err).toBeInstanceOf(InformerSyncError);
        expect(err.cause).toBe(boom);
        expect(err.message).toContain('ConfigMap.v1');
      }
      expect(inf.status().terminalError).toBe(boom);
      expect(t.cache.unsyncedInformers()).toEqual(['ConfigMap.v1']);
      const why = t.cache.syncError();
      expect(why).toBeInstanceOf(InformerSyncError);
      expect(why?.cause).toBe(boom);
      // The log line names the kind and carries the Error whole.
      await vi.waitFor(() =>
        expect(lines.find((l) => l.obj.err === boom && l.obj.kind === 'ConfigMap.v1')).toBeDefined(),
      );
      await t.stop();
    });
  }

  it('an informer whose store refuses the listed objects (an index function that throws) keeps the error: lastListError, the cause of a read Timeout, syncError()', async () => {
    const fc = new FakeClient();
    fc.server('ConfigMap').create('a1', { node: 'n1' }, 'a');
    const broken = new TypeError('index function failed on a/a1');
    const t = startCache(fc);
    t.cache.getInformer(ConfigMap).addIndexers({
      'by-node': () => {
        throw broken;
      },
    });
    // The store refuses the object whole (StoreError naming the index and key), and the list fails with it.
    await vi.waitFor(() =>
      expect(t.cache.getInformer(ConfigMap).status().lastListError).toBeInstanceOf(StoreError),
    );
    const listErr = t.cache.getInformer(ConfigMap).status().lastListError as StoreError;
    expect(listErr.cause).toBe(broken);
    expect(listErr.message).toContain('"by-node"');
    const ac = new AbortController();
    const read = t.cache.list(ConfigMap, { signal: ac.signal });
    ac.abort();
    const err = (await read.catch((e: unknown) => e)) as StatusError;
    expect(err).toBeInstanceOf(StatusError);
    expect(err.reason).toBe('Timeout');
    expect(err.message).toContain('ConfigMap.v1');
    expect(err.message).toContain('index function failed on a/a1');
    expect(err.cause).toBe(listErr);
    const why = t.cache.syncError();
    expect(why?.stopped).toBe(false);
    expect(why?.cause).toBe(listErr);
    expect(why?.message).toMatch(/ConfigMap\.v1 informer has not synced.*index function failed/);
    // Not started yet is not "stopped": waitForCacheSync answers false on its signal, it does not reject.
    const quick = new AbortController();
    quick.abort();
    expect(await t.cache.waitForCacheSync(quick.signal)).toBe(false);
    await t.stop();
  });

  it('a read that waits while its informer is removed is told so, naming the GVK (not "cache not started")', async () => {
    const fc = new FakeClient();
    fc.server('ConfigMap').listFaults.push(new Error('first list fails'));
    // The failing request is a list: WatchList (the cache's default) would sync at once by a watch.
    const t = startCache(fc, { useWatchList: false });
    const read = t.cache.list(ConfigMap).catch((e: unknown) => e);
    await vi.waitFor(() => expect(fc.calls.length).toBeGreaterThan(0));
    await t.cache.removeInformer(ConfigMap);
    const err = (await read) as InformerSyncError;
    expect(err).toBeInstanceOf(InformerSyncError);
    expect(err.stopped).toBe(true);
    expect(err.message).toContain('ConfigMap.v1');
    await t.stop();
  });

  it('reads before start and after stop throw CacheNotStartedError naming the GVK', async () => {
    const fc = new FakeClient();
    const cache = new InformerCache({ client: fc.asClient() });
    const err = (await cache.list(ConfigMap).catch((e: unknown) => e)) as CacheNotStartedError;
    expect(err).toBeInstanceOf(CacheNotStartedError);
    expect(err.message).toContain('ConfigMap.v1');
  });
});

describe('InformerCache: bad informer settings are refused where they are given, not when the informer runs', () => {
  it('a user index named "namespace" on a per-namespace informer throws StoreError at once (it used to stop the informer before sync)', () => {
    const fc = new FakeClient();
    const cache = new InformerCache({ client: fc.asClient(), defaultNamespaces: ['a', 'b'] });
    expect(() =>
      cache.getInformer(ConfigMap).addIndexers({ namespace: (o: KubeObject) => [o.metadata?.name ?? ''] }),
    ).toThrow(StoreError);
    // The single-namespace informer says the same.
    const all = new InformerCache({ client: fc.asClient() });
    expect(() =>
      all.getInformer(ConfigMap).addIndexers({ namespace: (o: KubeObject) => [o.metadata?.name ?? ''] }),
    ).toThrow(StoreError);
  });

  it('a negative handler resync period on a per-namespace informer throws RangeError at addEventHandler', () => {
    const fc = new FakeClient();
    const cache = new InformerCache({ client: fc.asClient(), defaultNamespaces: ['a'] });
    expect(() => cache.getInformer(ConfigMap).addEventHandler({}, { resyncPeriodMs: -1 })).toThrow(
      RangeError,
    );
  });

  it('an invalid reflector page size is refused by the constructor with CacheOptionsError', () => {
    const fc = new FakeClient();
    expect(() => new InformerCache({ client: fc.asClient(), reflector: { pageSize: 0 } })).toThrow(
      CacheOptionsError,
    );
    expect(
      () =>
        new InformerCache({ client: fc.asClient(), defaultNamespaces: ['a'], reflector: { pageSize: 1.5 } }),
    ).toThrow(/pageSize/);
  });
});

describe('InformerCache.syncError and unsyncedInformers', () => {
  it('name what is not synced even without an error (not started, or no list answered yet), and nothing once synced', async () => {
    const fc = new FakeClient();
    // The held request is a list: WatchList (the cache's default) would sync by a watch.
    const cache = new InformerCache({ client: fc.asClient(), clock: new FakeClock(), useWatchList: false });
    expect(cache.syncError()).toBeUndefined();
    cache.getInformer(ConfigMap);
    expect(cache.syncError()?.message).toBe(
      'the ConfigMap.v1 informer has not synced; last error: the cache has not started it',
    );
    let answer: (() => void) | undefined;
    const list = fc.list.bind(fc);
    fc.list = async (k, o) => {
      await new Promise<void>((r) => {
        answer = r;
      });
      return list(k, o);
    };
    const ac = new AbortController();
    running.push(ac);
    const done = cache.start(ac.signal);
    await vi.waitFor(() => expect(answer).toBeDefined());
    expect(cache.syncError()?.message).toContain('no list has completed yet');
    expect(cache.unsyncedInformers()).toEqual(['ConfigMap.v1']);
    answer?.();
    expect(await cache.waitForCacheSync()).toBe(true);
    expect(cache.syncError()).toBeUndefined();
    expect(cache.unsyncedInformers()).toEqual([]);
    ac.abort();
    await done;
  });
});

import { getEventListeners } from 'node:events';
import {
  ConfigMap,
  type DeepReadonly,
  type Kind,
  type KubeObject,
  kind,
  StatusError,
} from '@kubeloop/client';
import { NoKindMatchError, SelectorParseError } from '@kubeloop/client/errors';
import { FakeClock } from '@kubeloop/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  CacheNotStartedError,
  CacheOptionsError,
  CacheUnsupportedError,
  FieldNotIndexedError,
  InformerCache,
  type InformerCacheOptions,
  ResourceNotCachedError,
  StoreError,
  stripManagedFields,
} from '../src/index.js';
import { FakeClient } from './support/fake-client.js';
import { statusError } from './support/fake-server.js';
import { eachRetention, retention } from './support/retention.js';

const Namespace = kind('v1', 'Namespace');
const Secret = kind('v1', 'Secret');

const running: AbortController[] = [];
afterEach(() => {
  for (const ac of running.splice(0)) ac.abort();
});

function startCache(fc: FakeClient, opts: Partial<InformerCacheOptions> = {}) {
  const clock = new FakeClock();
  const cache = new InformerCache({ client: fc.asClient(), clock, objectRetention: retention(), ...opts });
  const ac = new AbortController();
  running.push(ac);
  const done = cache.start(ac.signal);
  const stop = async () => {
    ac.abort();
    await done;
  };
  return { cache, clock, ac, done, stop };
}

function seedConfigMaps(fc: FakeClient) {
  const s = fc.server('ConfigMap');
  s.create('a1', { node: 'n1' }, 'a', { app: 'web' });
  s.create('a2', { node: 'n2' }, 'a', { app: 'db' });
  s.create('b1', { node: 'n1' }, 'b', { app: 'web' });
  s.create('b2', { node: 'a,b' }, 'b');
  return s;
}

const names = (items: readonly DeepReadonly<KubeObject>[]) =>
  items.map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`).sort();
const byNode = (o: KubeObject) => [String((o as { data?: { node?: string } }).data?.node ?? '')];

eachRetention(() => {
  describe('InformerCache: signals and lifecycle', () => {
    it('40 informers put one abort listener on the start signal, not one per informer or request (no MaxListenersExceededWarning)', async () => {
      const fc = new FakeClient(
        Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`K${i}`, 'Namespaced' as const])),
      );
      const warnings: Error[] = [];
      const onWarning = (w: Error) => warnings.push(w);
      process.on('warning', onWarning);
      try {
        const t = startCache(fc);
        const kinds = Array.from({ length: 40 }, (_, i) => kind('v1', `K${i}`));
        for (const k of kinds) t.cache.getInformer(k);
        expect(await t.cache.waitForCacheSync()).toBe(true);
        await vi.waitFor(() => expect(fc.calls.filter((c) => c.verb === 'watch')).toHaveLength(40));
        expect(getEventListeners(t.ac.signal, 'abort').length).toBeLessThanOrEqual(1);
        // Each informer has its own signal.
        expect(new Set(fc.calls.map((c) => c.signal)).size).toBeGreaterThanOrEqual(40);
        await t.stop();
        await new Promise((r) => setImmediate(r));
        expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
      } finally {
        process.off('warning', onWarning);
      }
    });

    it('removeInformer stops its watch at once and frees it; a later read starts a fresh informer', async () => {
      const fc = new FakeClient();
      seedConfigMaps(fc);
      const t = startCache(fc);
      const inf = t.cache.getInformer(ConfigMap);
      expect(await t.cache.waitForCacheSync()).toBe(true);
      await vi.waitFor(() => expect(fc.server('ConfigMap').live).toHaveLength(1));
      await t.cache.removeInformer(ConfigMap);
      expect(inf.isStopped()).toBe(true);
      expect(fc.server('ConfigMap').live).toHaveLength(0);
      expect(fc.calls.filter((c) => c.verb === 'watch').every((c) => c.signal.aborted)).toBe(true);
      expect(t.cache.getInformer(ConfigMap)).not.toBe(inf);
      expect((await t.cache.list(ConfigMap)).items).toHaveLength(4);
      await t.cache.removeInformer(Secret); // no informer: no-op
      await t.stop();
    });

    it('reads before start throw CacheNotStartedError; a read whose signal aborts before sync is a Timeout', async () => {
      const fc = new FakeClient();
      const cache = new InformerCache({ client: fc.asClient() });
      await expect(cache.get(ConfigMap, { namespace: 'a', name: 'x' })).rejects.toBeInstanceOf(
        CacheNotStartedError,
      );
      const s = fc.server('ConfigMap');
      s.listFaults.push(statusError(500, 'InternalError', 'slow'));
      // The failing request is a list: WatchList (the cache's default) would sync at once by a watch.
      const t = startCache(fc, { useWatchList: false });
      const ac = new AbortController();
      const read = t.cache.list(ConfigMap, { signal: ac.signal });
      await vi.waitFor(() => expect(fc.calls.length).toBeGreaterThan(0));
      ac.abort();
      const err = await read.catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StatusError);
      expect((err as StatusError).reason).toBe('Timeout');
      expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
      await t.stop();
    });

    it('start twice is refused; waitForCacheSync honours its signal', async () => {
      const fc = new FakeClient();
      fc.server('ConfigMap').listFaults.push(statusError(500, 'InternalError', 'x'));
      const t = startCache(fc);
      await expect(t.cache.start(new AbortController().signal)).rejects.toBeInstanceOf(CacheOptionsError);
      t.cache.getInformer(ConfigMap);
      const ac = new AbortController();
      const w = t.cache.waitForCacheSync(ac.signal);
      ac.abort();
      expect(await w).toBe(false);
      await t.stop();
    });

    it('readerFailOnMissingInformer: a read of a kind with no informer throws ResourceNotCachedError and starts nothing', async () => {
      const fc = new FakeClient();
      seedConfigMaps(fc);
      const t = startCache(fc, { readerFailOnMissingInformer: true });
      const err = await t.cache.list(ConfigMap).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ResourceNotCachedError);
      expect((err as ResourceNotCachedError).code).toBe('ERR_RESOURCE_NOT_CACHED');
      expect(fc.calls).toHaveLength(0);
      t.cache.getInformer(ConfigMap);
      expect((await t.cache.list(ConfigMap)).items).toHaveLength(4);
      await t.stop();
    });

    it('a kind the server does not serve fails at once with NoKindMatchError; one that stops being served fails fast after sync (C36)', async () => {
      const fc = new FakeClient();
      seedConfigMaps(fc);
      // The 404s are list faults of the fake (a real server 404s the streaming list too, and the reflector falls
      // back to the list: reflector-watch-list-fallback.test.ts).
      const t = startCache(fc, { useWatchList: false });
      await expect(t.cache.list(kind('example.com/v1', 'Widget'))).rejects.toBeInstanceOf(NoKindMatchError);
      expect((await t.cache.list(ConfigMap)).items).toHaveLength(4);
      const s = fc.server('ConfigMap');
      for (let i = 0; i < 5; i++)
        s.listFaults.push(statusError(404, 'NotFound', 'the server could not find the requested resource'));
      s.endWatches(statusError(404, 'NotFound', 'the server could not find the requested resource'));
      await vi.waitFor(() => {
        t.clock.step(500);
        expect(t.cache.getInformer(ConfigMap).status().unserved).toBe(true);
      });
      await expect(t.cache.list(ConfigMap)).rejects.toBeInstanceOf(NoKindMatchError);
      // Recovers once the kind is served again.
      await vi.waitFor(() => {
        t.clock.step(30_000);
        expect(t.cache.getInformer(ConfigMap).status().unserved).toBe(false);
      });
      expect((await t.cache.list(ConfigMap)).items).toHaveLength(4);
      await t.stop();
    });
  });

  describe('InformerCache reader: field selectors answered from indexes only (C34)', () => {
    it('exact matches come from the index, with and without a namespace; object and escaped string forms agree', async () => {
      const fc = new FakeClient();
      seedConfigMaps(fc);
      const t = startCache(fc);
      t.cache.indexField(ConfigMap, 'data.node', byNode);
      expect(names((await t.cache.list(ConfigMap, { fieldSelector: 'data.node=n1' })).items)).toEqual([
        'a/a1',
        'b/b1',
      ]);
      expect(
        names((await t.cache.list(ConfigMap, { fieldSelector: 'data.node==n1', namespace: 'b' })).items),
      ).toEqual(['b/b1']);
      expect(names((await t.cache.list(ConfigMap, { fieldSelector: { 'data.node': 'n1' } })).items)).toEqual([
        'a/a1',
        'b/b1',
      ]);
      // A value with a comma, escaped as the client formats it.
      expect(names((await t.cache.list(ConfigMap, { fieldSelector: 'data.node=a\\,b' })).items)).toEqual([
        'b/b2',
      ]);
      expect(names((await t.cache.list(ConfigMap, { fieldSelector: { 'data.node': 'a,b' } })).items)).toEqual(
        ['b/b2'],
      );
      await t.stop();
    });

    it('two requirements intersect; metadata.name and metadata.namespace need no index', async () => {
      const fc = new FakeClient();
      seedConfigMaps(fc);
      const t = startCache(fc);
      t.cache.indexField(ConfigMap, 'data.node', byNode);
      const r = await t.cache.list(ConfigMap, { fieldSelector: 'data.node=n1,metadata.namespace=a' });
      expect(names(r.items)).toEqual(['a/a1']);
      expect(names((await t.cache.list(ConfigMap, { fieldSelector: 'metadata.name=b2' })).items)).toEqual([
        'b/b2',
      ]);
      expect(
        names(
          (await t.cache.list(ConfigMap, { fieldSelector: 'metadata.namespace=a', namespace: 'b' })).items,
        ),
      ).toEqual([]);
      await t.stop();
    });

    it('an unindexed field throws FieldNotIndexedError naming the field and indexField; != is answered exactly', async () => {
      const fc = new FakeClient();
      seedConfigMaps(fc);
      const t = startCache(fc);
      t.cache.indexField(ConfigMap, 'data.node', byNode);
      const err = (await t.cache
        .list(ConfigMap, { fieldSelector: 'status.phase=Running' })
        .catch((e: unknown) => e)) as Error;
      expect(err).toBeInstanceOf(FieldNotIndexedError);
      expect(err.message).toContain('"status.phase"');
      expect(err.message).toContain('indexField');
      expect(err).toBeInstanceOf(CacheUnsupportedError);
      expect((err as FieldNotIndexedError).code).toBe('ERR_FIELD_NOT_INDEXED');
      const list = async (fieldSelector: string, namespace?: string) =>
        names((await t.cache.list(ConfigMap, { fieldSelector, ...(namespace ? { namespace } : {}) })).items);
      expect(await list('data.node!=n1')).toEqual(['a/a2', 'b/b2']);
      expect(await list('data.node!=n1', 'a')).toEqual(['a/a2']);
      expect(await list('metadata.name!=a1,data.node=n1')).toEqual(['b/b1']);
      expect(await list('metadata.namespace!=a')).toEqual(['b/b1', 'b/b2']);
      await expect(t.cache.list(ConfigMap, { fieldSelector: 'data.node' })).rejects.toBeInstanceOf(
        SelectorParseError,
      );
      await expect(t.cache.list(ConfigMap, { fieldSelector: 'data.node=a\\b' })).rejects.toBeInstanceOf(
        SelectorParseError,
      );
      expect(() => t.cache.indexField(ConfigMap, 'data.node', byNode)).toThrow(StoreError);
      await expect(t.cache.list(ConfigMap, { continue: 'x' })).rejects.toBeInstanceOf(CacheUnsupportedError);
      await t.stop();
    });

    it('an index added after sync covers the objects already cached', async () => {
      const fc = new FakeClient();
      seedConfigMaps(fc);
      const t = startCache(fc);
      expect((await t.cache.list(ConfigMap)).items).toHaveLength(4);
      t.cache.indexField(ConfigMap, 'data.node', byNode);
      expect(names((await t.cache.list(ConfigMap, { fieldSelector: 'data.node=n2' })).items)).toEqual([
        'a/a2',
      ]);
      await t.stop();
    });
  });

  describe('InformerCache reader: labels, limit, get', () => {
    it('label selectors as a string, a map and a LabelSelector object give the same answer', async () => {
      const fc = new FakeClient();
      seedConfigMaps(fc);
      const t = startCache(fc);
      const want = ['a/a1', 'b/b1'];
      expect(names((await t.cache.list(ConfigMap, { labelSelector: 'app=web' })).items)).toEqual(want);
      expect(names((await t.cache.list(ConfigMap, { labelSelector: { app: 'web' } })).items)).toEqual(want);
      expect(
        names((await t.cache.list(ConfigMap, { labelSelector: { matchLabels: { app: 'web' } } })).items),
      ).toEqual(want);
      expect(
        names(
          (
            await t.cache.list(ConfigMap, {
              labelSelector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'db'] }] },
            })
          ).items,
        ),
      ).toEqual(['a/a1', 'a/a2', 'b/b1']);
      expect(names((await t.cache.list(ConfigMap, { labelSelector: '!app' })).items)).toEqual(['b/b2']);
      expect((await t.cache.list(ConfigMap, { limit: 3 })).items).toHaveLength(3);
      await t.stop();
    });

    it('get returns the frozen cached object or a NotFound phrased like the server; cluster-scoped keys ignore the namespace', async () => {
      const fc = new FakeClient({ ConfigMap: 'Namespaced', Namespace: 'Cluster' });
      seedConfigMaps(fc);
      fc.server('Namespace').create('a', {}, '');
      const t = startCache(fc);
      const got = await t.cache.get(ConfigMap, { namespace: 'a', name: 'a1' });
      expect(Object.isFrozen(got)).toBe(true);
      const nf = (await t.cache
        .get(ConfigMap, { namespace: 'a', name: 'zz' })
        .catch((e: unknown) => e)) as StatusError;
      expect(nf.reason).toBe('NotFound');
      expect(nf.message).toBe('configmaps "zz" not found');
      expect((await t.cache.get(Namespace, { namespace: 'whatever', name: 'a' })).metadata?.name).toBe('a');
      await t.stop();
    });
  });

  describe('InformerCache options (controller-runtime cache.Options)', () => {
    it('defaultNamespaces: one informer per namespace, merged reads, never a cluster-wide request; cluster-scoped kinds get one informer', async () => {
      const fc = new FakeClient({ ConfigMap: 'Namespaced', Namespace: 'Cluster' });
      const s = seedConfigMaps(fc);
      s.create('c1', {}, 'c');
      fc.server('Namespace').create('a', {}, '');
      const t = startCache(fc, { defaultNamespaces: ['a', 'b'] });
      expect(names((await t.cache.list(ConfigMap)).items)).toEqual(['a/a1', 'a/a2', 'b/b1', 'b/b2']);
      expect(names((await t.cache.list(ConfigMap, { namespace: 'b' })).items)).toEqual(['b/b1', 'b/b2']);
      expect((await t.cache.get(ConfigMap, { namespace: 'b', name: 'b1' })).metadata?.name).toBe('b1');
      const cmCalls = fc.calls.filter((c) => c.kind === 'ConfigMap');
      expect(new Set(cmCalls.map((c) => c.namespace))).toEqual(new Set(['a', 'b']));
      expect((await t.cache.list(Namespace)).items).toHaveLength(1);
      expect(fc.calls.filter((c) => c.kind === 'Namespace').every((c) => c.namespace === undefined)).toBe(
        true,
      );
      // Handlers see events of every namespace; merged index reads work.
      const seen: string[] = [];
      t.cache.getInformer(ConfigMap).addEventHandler({ onAdd: (o) => seen.push(String(o.metadata?.name)) });
      s.create('a3', {}, 'a');
      s.create('c2', {}, 'c');
      await vi.waitFor(() => expect(seen).toContain('a3'));
      expect(seen).not.toContain('c2');
      t.cache.indexField(ConfigMap, 'data.node', byNode);
      expect(names((await t.cache.list(ConfigMap, { fieldSelector: 'data.node=n1' })).items)).toEqual([
        'a/a1',
        'b/b1',
      ]);
      await t.stop();
    });

    it('defaultLabelSelector restricts what is cached (others read as NotFound); byObject overrides it per kind', async () => {
      const fc = new FakeClient();
      seedConfigMaps(fc);
      fc.server('Secret').create('s1', {}, 'a');
      const t = startCache(fc, {
        defaultLabelSelector: 'app=web',
        byObject: [{ kind: Secret, labelSelector: '' }],
      });
      expect(names((await t.cache.list(ConfigMap)).items)).toEqual(['a/a1', 'b/b1']);
      await expect(t.cache.get(ConfigMap, { namespace: 'a', name: 'a2' })).rejects.toThrow(/not found/);
      expect((await t.cache.list(Secret)).items).toHaveLength(1);
      expect(fc.calls.find((c) => c.kind === 'ConfigMap')?.labelSelector).toBe('app=web');
      await t.stop();
    });

    it('defaultTransform applies to every kind; byObject may replace it or turn it off (null)', async () => {
      const fc = new FakeClient({ ConfigMap: 'Namespaced', Secret: 'Namespaced', Other: 'Namespaced' });
      for (const k of ['ConfigMap', 'Secret', 'Other']) {
        const o = fc.server(k).create('x', {}, 'a');
        (o.metadata as Record<string, unknown>).managedFields = [{ manager: 'm' }];
      }
      const Other = kind('v1', 'Other');
      const t = startCache(fc, {
        defaultTransform: stripManagedFields,
        byObject: [
          { kind: Secret, transform: null },
          { kind: Other, transform: (o) => ({ ...o, metadata: { ...o.metadata, labels: { t: 'other' } } }) },
        ],
      });
      const one = async (k: Kind) => (await t.cache.list(k)).items[0]!;
      expect((await one(ConfigMap)).metadata?.managedFields).toBeUndefined();
      expect((await one(Secret)).metadata?.managedFields).toBeDefined();
      expect((await one(Other)).metadata?.labels).toEqual({ t: 'other' });
      await t.stop();
    });

    it('syncPeriodMs defaults to 10 h, jittered ±10 %: one resync per handler after 11 h, none before 9 h', async () => {
      const fc = new FakeClient();
      seedConfigMaps(fc);
      const t = startCache(fc);
      const inf = t.cache.getInformer(ConfigMap);
      let resyncs = 0;
      inf.addEventHandler({ onUpdate: (a, b) => void (a === b && resyncs++) });
      expect(await t.cache.waitForCacheSync()).toBe(true);
      t.clock.step(9 * 3600_000 - 1);
      expect(resyncs).toBe(0);
      t.clock.step(2 * 3600_000);
      expect(resyncs).toBe(4);
      await t.stop();
    });

    it('refuses a kind twice in byObject and a negative syncPeriodMs', () => {
      const client = new FakeClient().asClient();
      expect(() => new InformerCache({ client, byObject: [{ kind: Secret }, { kind: Secret }] })).toThrow(
        CacheOptionsError,
      );
      expect(() => new InformerCache({ client, syncPeriodMs: -1 })).toThrow(CacheOptionsError);
    });

    it('a metadata-only descriptor gets its own informer beside the typed one (C37 shape)', () => {
      const fc = new FakeClient();
      const cache = new InformerCache({ client: fc.asClient() });
      const meta = { apiVersion: 'v1', kind: 'Secret', metadataOnly: true } as Kind;
      expect(cache.getInformer(meta)).not.toBe(cache.getInformer(Secret));
      expect(cache.getInformer(meta)).toBe(cache.getInformer({ ...meta }));
    });
  });
});

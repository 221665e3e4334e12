import type { KubeObject } from '@kubeloop/client';
import { onAbort } from '@kubeloop/core';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
// store modules directly (not the package index), so these tests do not load the informer
import { CompactIndexer } from '../src/compact-store.js';
import { StoreError } from '../src/indexes.js';
import { Indexer, type IndexerStore, metaNamespaceIndexFunc, NAMESPACE_INDEX } from '../src/store.js';

const pod = (ns: string, name: string, labels: Record<string, string> = {}, rv = '1'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { namespace: ns, name, labels, resourceVersion: rv },
});
const byApp = (o: KubeObject) => (o.metadata?.labels?.app ? [o.metadata.labels.app] : []);
const indexers = { app: byApp, [NAMESPACE_INDEX]: metaNamespaceIndexFunc };

const stores: Array<[string, () => IndexerStore]> = [
  ['Indexer', () => new Indexer({ indexers })],
  ['CompactIndexer (2 hot)', () => new CompactIndexer({ indexers, maxCachedObjects: 2 })],
];

describe.each(stores)('%s', (_name, make) => {
  it('an update that keeps an index value leaves that index untouched (key order in the value is kept)', () => {
    const s = make();
    s.upsert(pod('a', 'p1', { app: 'x' }));
    s.upsert(pod('a', 'p2', { app: 'x' }));
    // p1 changes only its resourceVersion: removing and re-adding it would move it behind p2.
    s.upsert(pod('a', 'p1', { app: 'x' }, '2'));
    expect(s.indexKeys(NAMESPACE_INDEX, 'a')).toEqual(['a/p1', 'a/p2']);
    expect(s.indexKeys('app', 'x')).toEqual(['a/p1', 'a/p2']);
    // a changed value moves the key
    s.upsert(pod('a', 'p1', { app: 'y' }, '3'));
    expect(s.indexKeys('app', 'x')).toEqual(['a/p2']);
    expect(s.byIndex('app', 'y').map((o) => o.metadata?.resourceVersion)).toEqual(['3']);
  });

  it('returns the previous object from upsert and deleteKey; objects handed out are deeply frozen', () => {
    const s = make();
    expect(s.upsert(pod('a', 'p1', { app: 'x' }))).toBeUndefined();
    for (const n of ['p2', 'p3', 'p4']) s.upsert(pod('a', n)); // p1 leaves a 2-entry hot set
    const old = s.upsert(pod('a', 'p1', { app: 'y' }, '2'));
    expect(old?.metadata?.labels).toEqual({ app: 'x' });
    expect(Object.isFrozen(old?.metadata?.labels)).toBe(true);
    const got = s.get('a/p1');
    expect(got?.metadata?.resourceVersion).toBe('2');
    expect(Object.isFrozen(got) && Object.isFrozen(got?.metadata)).toBe(true);
    expect(s.deleteKey('a/p1')?.metadata?.resourceVersion).toBe('2');
    expect(s.deleteKey('a/p1')).toBeUndefined();
    expect(() => s.byIndex('nope', 'x')).toThrow(StoreError);
  });

  it('property: after any sequence of upserts, deletes, replaces and late indexes, reads equal a plain Map model', () => {
    const op = fc.oneof(
      fc.record({
        kind: fc.constantFrom('upsert', 'delete'),
        name: fc.constantFrom('p1', 'p2', 'p3', 'p4', 'p5'),
        ns: fc.constantFrom('a', 'b'),
        app: fc.constantFrom('x', 'y', ''),
        rv: fc.nat(99).map(String),
      }),
      fc.record({
        kind: fc.constant('replace'),
        keep: fc.array(fc.constantFrom('p1', 'p2', 'p3'), { maxLength: 3 }),
      }),
      fc.record({ kind: fc.constant('read'), name: fc.constantFrom('p1', 'p2', 'p3', 'p4', 'p5') }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 50 }), fc.nat(40), (ops, lateAt) => {
        const s = make();
        const model = new Map<string, KubeObject>();
        ops.forEach((o, i) => {
          if (i === lateAt) s.addIndexers({ rv: (x) => [x.metadata?.resourceVersion ?? ''] });
          if (o.kind === 'upsert') {
            const p = pod(o.ns, o.name, o.app ? { app: o.app } : {}, o.rv);
            const key = `${o.ns}/${o.name}`;
            expect(s.upsert(p)).toEqual(model.get(key));
            model.set(key, p);
          } else if (o.kind === 'delete') {
            const key = `${o.ns}/${o.name}`;
            expect(s.deleteKey(key)).toEqual(model.get(key));
            model.delete(key);
          } else if (o.kind === 'replace') {
            const objs = [...new Set(o.keep)].map((n) => pod('a', n, { app: 'x' }, '7'));
            s.replace(objs);
            model.clear();
            for (const p of objs) model.set(`a/${p.metadata?.name}`, p);
          } else {
            expect(s.get(`a/${o.name}`)).toEqual(model.get(`a/${o.name}`));
          }
        });
        expect(s.size()).toBe(model.size);
        expect(s.listKeys().sort()).toEqual([...model.keys()].sort());
        const sorted = (xs: KubeObject[]) => xs.map((x) => JSON.stringify(x)).sort();
        expect(sorted(s.list())).toEqual(sorted([...model.values()]));
        for (const [name, fn] of Object.entries(indexers)) {
          const want = new Map<string, string[]>();
          for (const [k, obj] of model) for (const v of fn(obj)) want.set(v, [...(want.get(v) ?? []), k]);
          expect(s.listIndexFuncValues(name).sort()).toEqual([...want.keys()].sort());
          for (const [v, keys] of want) {
            expect(s.indexKeys(name, v).sort()).toEqual(keys.sort());
            expect(sorted(s.byIndex(name, v))).toEqual(sorted(keys.map((k) => model.get(k) as KubeObject)));
          }
        }
        if (s.indexerNames().includes('rv'))
          for (const [k, obj] of model)
            expect(s.indexKeys('rv', obj.metadata?.resourceVersion ?? '')).toContain(k);
      }),
      { numRuns: 150 },
    );
  });
});

describe('CompactIndexer', () => {
  it('keeps JSON bytes and at most maxCachedObjects parsed objects; a scan does not fill the hot set', () => {
    const s = new CompactIndexer({ maxCachedObjects: 3 });
    for (let i = 0; i < 10; i++) s.upsert(pod('a', `p${i}`, { app: 'é' }));
    const stats = s.debugStats();
    expect(stats.hotObjects).toBe(3);
    expect(stats.jsonBytes).toBe(
      // characters of the JSON kept (bytes for ASCII; 'é' is one character)
      s.list().reduce((n, o) => n + JSON.stringify(o).length, 0),
    );
    expect(s.debugStats().hotObjects).toBe(3);
    const cold = s.get('a/p0');
    expect(cold?.metadata?.labels?.app).toBe('é');
    expect(s.get('a/p0')).toBe(cold); // now hot: the same instance
    expect(() => new CompactIndexer({ maxCachedObjects: 0 })).toThrow(StoreError);
  });
});

describe('SharedIndexInformer with compactStore', () => {
  it('stores into a CompactIndexer, serves frozen reads and hands handlers the previous object on update', async () => {
    const { SharedIndexInformer } = await import('../src/shared-index-informer.js');
    const ac = new AbortController();
    const lw = {
      list: async () => ({
        apiVersion: 'v1',
        kind: 'PodList',
        metadata: { resourceVersion: '10' },
        items: [pod('a', 'p1', { app: 'x' }, '5'), pod('b', 'p2', { app: 'y' }, '6')],
      }),
      watch: () => ({
        async *[Symbol.asyncIterator]() {
          yield { type: 'MODIFIED' as const, object: pod('a', 'p1', { app: 'z' }, '11') };
          await new Promise((resolve) => onAbort(ac.signal, () => resolve(undefined)));
        },
      }),
    };
    const inf = new SharedIndexInformer(lw, {
      compactStore: { maxCachedObjects: 1 },
      indexers: { app: byApp },
    });
    const updates: string[] = [];
    inf.addEventHandler({
      onUpdate: (o, n) => updates.push(`${o.metadata?.labels?.app}->${n.metadata?.labels?.app}`),
    });
    const running = inf.run(ac.signal);
    expect(await inf.waitForSync()).toBe(true);
    expect(inf.getIndexer()).toBeInstanceOf(CompactIndexer);
    await vi.waitFor(() => expect(updates).toEqual(['x->z']));
    const got = inf.getIndexer().get('a/p1');
    expect(got?.metadata?.resourceVersion).toBe('11');
    expect(Object.isFrozen(got?.metadata?.labels)).toBe(true);
    expect(inf.getIndexer().indexKeys('app', 'z')).toEqual(['a/p1']);
    expect(
      inf
        .getIndexer()
        .byIndex(NAMESPACE_INDEX, 'b')
        .map((o) => o.metadata?.name),
    ).toEqual(['p2']);
    ac.abort();
    await running;
  });
});

describe.each([
  ['Indexer', (freeze: 'deep' | 'none') => new Indexer({ indexers, freeze }) as IndexerStore],
  [
    'CompactIndexer',
    (freeze: 'deep' | 'none') => new CompactIndexer({ indexers, freeze, maxCachedObjects: 1 }),
  ],
])('%s freeze option', (_name, make) => {
  it("'deep' (default) freezes nested objects; 'none' hands out the objects unfrozen", () => {
    const deep = make('deep');
    deep.upsert(pod('a', 'p1', { app: 'x' }));
    deep.upsert(pod('a', 'p2')); // p1 leaves the 1-entry hot set: the next read parses it
    expect(Object.isFrozen(deep.get('a/p1')?.metadata?.labels)).toBe(true);
    const none = make('none');
    none.upsert(pod('a', 'p1', { app: 'x' }));
    none.upsert(pod('a', 'p2'));
    expect(Object.isFrozen(none.get('a/p1')?.metadata?.labels)).toBe(false);
    expect(none.byIndex('app', 'x').map((o) => o.metadata?.name)).toEqual(['p1']);
  });
});

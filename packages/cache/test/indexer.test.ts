import type { KubeObject } from '@kubeloop/client';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CompactIndexer,
  Indexer,
  metaNamespaceIndexFunc,
  NAMESPACE_INDEX,
  StoreError,
} from '../src/index.js';

const pod = (ns: string, name: string, labels: Record<string, string> = {}, rv = '1'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { namespace: ns, name, labels, resourceVersion: rv },
});

const byApp = (o: KubeObject) => (o.metadata?.labels?.app ? [o.metadata.labels.app] : []);

describe('Indexer', () => {
  it('keys by namespace/name and indexes by namespace', () => {
    const s = new Indexer({ indexers: { [NAMESPACE_INDEX]: metaNamespaceIndexFunc } });
    s.upsert(pod('a', 'p1'));
    s.upsert(pod('a', 'p2'));
    s.upsert(pod('b', 'p1'));
    s.upsert({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' } });
    expect(s.listKeys().sort()).toEqual(['a', 'a/p1', 'a/p2', 'b/p1']);
    expect(s.byIndex(NAMESPACE_INDEX, 'a').map((o) => o.metadata?.name)).toEqual(['p1', 'p2']);
    expect(s.indexKeys(NAMESPACE_INDEX, '')).toEqual(['a']);
    expect(() => s.byIndex('nope', 'x')).toThrow(StoreError);
  });

  it('moves an object between index values on update and cleans empty values on delete', () => {
    const s = new Indexer({ indexers: { app: byApp } });
    s.upsert(pod('a', 'p1', { app: 'x' }));
    s.upsert(pod('a', 'p1', { app: 'y' }, '2'));
    expect(s.byIndex('app', 'x')).toEqual([]);
    expect(s.byIndex('app', 'y').map((o) => o.metadata?.resourceVersion)).toEqual(['2']);
    s.deleteKey('a/p1');
    expect(s.size()).toBe(0);
    expect(s.debugIndexSizes()).toEqual({ app: 0 });
  });

  it('indexes existing items when an index is added later; duplicate names are refused', () => {
    const s = new Indexer();
    s.upsert(pod('a', 'p1', { app: 'x' }));
    s.addIndexers({ app: byApp });
    expect(s.indexKeys('app', 'x')).toEqual(['a/p1']);
    expect(() => s.addIndexers({ app: byApp })).toThrow(/already exists/);
  });

  it('freezes stored objects deeply and hands out the same instance', () => {
    const s = new Indexer();
    const p = {
      ...pod('a', 'p1', { app: 'x' }),
      spec: { containers: [{ name: 'c', image: 'i', ports: [{ containerPort: 80 }] }] },
    };
    s.upsert(p);
    const got = s.get('a/p1')!;
    expect(got).toBe(p);
    expect(Object.isFrozen(got.metadata?.labels)).toBe(true);
    // Arrays and the objects inside them are frozen too.
    expect(Object.isFrozen(p.spec.containers)).toBe(true);
    expect(Object.isFrozen(p.spec.containers[0])).toBe(true);
    expect(Object.isFrozen(p.spec.containers[0]?.ports[0])).toBe(true);
    expect(() => {
      (got.metadata!.labels as Record<string, string>).app = 'z';
    }).toThrow(TypeError);
  });

  it('property: after any sequence of upserts and deletes the index equals a recomputation', () => {
    const op = fc.record({
      del: fc.boolean(),
      name: fc.constantFrom('p1', 'p2', 'p3', 'p4'),
      ns: fc.constantFrom('a', 'b'),
      app: fc.constantFrom('x', 'y', 'z'),
    });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const s = new Indexer({ indexers: { app: byApp, [NAMESPACE_INDEX]: metaNamespaceIndexFunc } });
        for (const o of ops) {
          if (o.del) s.deleteKey(`${o.ns}/${o.name}`);
          else s.upsert(pod(o.ns, o.name, { app: o.app }));
        }
        for (const app of ['x', 'y', 'z']) {
          const expected = s
            .list()
            .filter((o) => o.metadata?.labels?.app === app)
            .map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`)
            .sort();
          expect(s.indexKeys('app', app).sort()).toEqual(expected);
        }
        const values = s.listIndexFuncValues('app');
        for (const v of values) expect(s.indexKeys('app', v).length).toBeGreaterThan(0);
      }),
    );
  });
});

describe('an index function that throws leaves the store as it was (both stores)', () => {
  const picky = (o: KubeObject) => {
    if (o.metadata?.labels?.bad) throw new TypeError(`no index value for ${o.metadata.name}`);
    return byApp(o);
  };
  for (const [name, make] of [
    ['Indexer', () => new Indexer({ indexers: { app: picky } })],
    ['CompactIndexer', () => new CompactIndexer({ indexers: { app: picky }, maxCachedObjects: 1 })],
  ] as const) {
    it(`${name}: upsert throws StoreError naming the index and key (cause: the error), and stores nothing`, () => {
      const s = make();
      s.upsert(pod('a', 'p1', { app: 'x' }));
      const err = (() => {
        try {
          s.upsert(pod('a', 'p1', { app: 'y', bad: '1' }, '2'));
        } catch (e) {
          return e as StoreError;
        }
        return undefined;
      })();
      expect(err).toBeInstanceOf(StoreError);
      expect(err?.message).toContain('"app"');
      expect(err?.message).toContain('a/p1');
      expect(((err as StoreError).cause as Error).message).toBe('no index value for p1');
      // The old version is still the stored one, under its old index value.
      expect(s.get('a/p1')?.metadata?.resourceVersion).toBe('1');
      expect(s.indexKeys('app', 'x')).toEqual(['a/p1']);
      expect(s.indexKeys('app', 'y')).toEqual([]);
      expect(() => s.upsert(pod('a', 'p2', { bad: '1' }))).toThrow(StoreError);
      expect(s.has('a/p2')).toBe(false);
      expect(s.size()).toBe(1);
    });

    it(`${name}: addIndexers with a function that throws on a stored object registers nothing`, () => {
      const s = make();
      s.upsert(pod('a', 'p1', { app: 'x' }));
      s.upsert(pod('a', 'p2', { app: 'x' }));
      let calls = 0;
      expect(() =>
        s.addIndexers({
          fine: () => ['v'],
          second: (o: KubeObject) => {
            if (++calls === 2) throw new Error(`boom on ${o.metadata?.name}`);
            return ['v'];
          },
        }),
      ).toThrow(StoreError);
      expect(s.indexerNames()).toEqual(['app']);
      expect(() => s.byIndex('fine', 'v')).toThrow(StoreError);
      // A later, good indexer is accepted under the same names.
      s.addIndexers({ fine: () => ['v'] });
      expect(s.indexKeys('fine', 'v').sort()).toEqual(['a/p1', 'a/p2']);
    });
  }
});

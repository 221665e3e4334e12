import type { DeepReadonly, KubeObject, ObjectList, WatchEvent } from '@kubeloop/client';
import { onAbort } from '@kubeloop/core';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { deepFreeze } from '../src/freeze.js';
import {
  CompactIndexer,
  Indexer,
  type ListCallOptions,
  type ListerWatcher,
  SharedIndexInformer,
  type WatchCallOptions,
} from '../src/index.js';

/** A pod with the parts whose shapes matter to the freeze: nested arrays, `managedFields` `{}` leaves, `[]`. */
const pod = (name: string, rv: string): KubeObject =>
  JSON.parse(
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        namespace: 'ns',
        name,
        resourceVersion: rv,
        labels: { app: 'a' },
        finalizers: [],
        managedFields: [
          {
            manager: 'kubelet',
            fieldsV1: { 'f:status': { 'f:conditions': { '.': {}, 'k:{"type":"Ready"}': {} } } },
          },
        ],
      },
      spec: {
        containers: [{ name: 'c', env: [{ name: 'E', value: 'v' }], ports: [] }],
        volumes: [{ emptyDir: {} }],
      },
    }),
  ) as KubeObject;

// biome-ignore lint/suspicious/noExplicitAny: the tests walk JSON of any shape and try to write into it
type Json = any;

/** Every object reachable from `v`. */
function objectsIn(v: unknown, out: object[] = []): object[] {
  if (v === null || typeof v !== 'object') return out;
  out.push(v);
  for (const k of Object.keys(v)) objectsIn((v as Record<string, unknown>)[k], out);
  return out;
}

/** Each way a handler or reader could change a cached object; every one must throw (strict-mode ESM). */
function mutations(o: KubeObject): Array<[string, () => void]> {
  const any = o as unknown as Record<string, Json>;
  return [
    ['set a top-level field', () => (any.kind = 'X')],
    ['add a label', () => (any.metadata.labels.b = 'b')],
    ['delete a label', () => delete any.metadata.labels.app],
    ['push to an array', () => any.spec.containers.push({})],
    ['push to an empty array', () => any.metadata.finalizers.push('f')],
    ['set an element field', () => (any.spec.containers[0].env[0].value = 'w')],
    [
      'fill an empty object of managedFields',
      () => (any.metadata.managedFields[0].fieldsV1['f:status']['f:conditions']['.'].x = 1),
    ],
    ['fill an emptyDir', () => (any.spec.volumes[0].emptyDir.medium = 'Memory')],
  ];
}

describe('deep freeze of cached objects (the default)', () => {
  it('every mutation of an object stored by the Indexer throws, at any depth, empty objects and arrays included', () => {
    const s = new Indexer();
    s.upsert(pod('a', '1'));
    const got = s.get('ns/a')!;
    for (const [what, mutate] of mutations(got)) expect(mutate, what).toThrow(TypeError);
    for (const o of objectsIn(got)) expect(Object.isFrozen(o)).toBe(true);
    // the object is unchanged by the attempts
    expect(got).toEqual(pod('a', '1'));
  });

  it('a handler of a SharedIndexInformer cannot mutate what it is given, on add, update or delete', async () => {
    const src: ListerWatcher = {
      list: async (_o: ListCallOptions): Promise<ObjectList> => ({
        metadata: { resourceVersion: '10' },
        items: [pod('a', '5')],
      }),
      watch: (o: WatchCallOptions): AsyncIterable<WatchEvent> =>
        (async function* () {
          if (o.resourceVersion !== '10') {
            await new Promise<void>((r) => onAbort(o.signal, () => r()));
            return;
          }
          yield { type: 'MODIFIED', object: pod('a', '11') } as WatchEvent;
          yield { type: 'DELETED', object: pod('a', '12') } as WatchEvent;
        })(),
    };
    const inf = new SharedIndexInformer(src, { reflector: { backoff: { initialMs: 1, maxMs: 2 } } });
    const failures: string[] = [];
    const seen: string[] = [];
    // the types forbid these writes (handler objects are read-only); the test checks the runtime agrees
    const tryAll = (event: string, cached: DeepReadonly<KubeObject>) => {
      const o = cached as KubeObject;
      seen.push(event);
      for (const [what, mutate] of mutations(o)) {
        try {
          mutate();
          failures.push(`${event}: ${what} did not throw`);
        } catch (err) {
          if (!(err instanceof TypeError)) failures.push(`${event}: ${what} threw ${String(err)}`);
        }
      }
    };
    inf.addEventHandler({
      onAdd: (o) => tryAll('add', o),
      onUpdate: (old, o) => {
        tryAll('update old', old);
        tryAll('update new', o);
      },
      onDelete: (o) => tryAll('delete', o as KubeObject),
    });
    const ac = new AbortController();
    const run = inf.run(ac.signal);
    await vi.waitFor(() => expect(seen).toContain('delete'));
    ac.abort();
    await run;
    expect(seen).toEqual(['add', 'update old', 'update new', 'delete']);
    expect(failures).toEqual([]);
  });

  it('the compact store hands out frozen objects too', () => {
    const s = new CompactIndexer({ maxCachedObjects: 1 });
    s.upsert(pod('a', '1'));
    s.upsert(pod('b', '1')); // pushes a out of the hot set: the next read parses it
    for (const key of ['ns/a', 'ns/b']) {
      const got = s.get(key)!;
      for (const [what, mutate] of mutations(got)) expect(mutate, `${key}: ${what}`).toThrow(TypeError);
    }
  });

  it('freezeObjects off (freeze: none) leaves objects mutable, as documented', () => {
    const s = new Indexer({ freeze: 'none' });
    s.upsert(pod('a', '1'));
    const got = s.get('ns/a') as unknown as { metadata: { labels: Record<string, string> } };
    got.metadata.labels.b = 'b';
    expect(got.metadata.labels.b).toBe('b');
  });
});

describe('deepFreeze', () => {
  it('returns the same top-level object, frozen, equal to what it was', () => {
    const p = pod('a', '1');
    const before = structuredClone(p);
    expect(deepFreeze(p)).toBe(p);
    expect(Object.isFrozen(p)).toBe(true);
    expect(p).toEqual(before);
  });

  it('shares one frozen empty object and one frozen empty array between stored objects', () => {
    const a = deepFreeze(pod('a', '1')) as Json;
    const b = deepFreeze(pod('b', '1')) as Json;
    expect(a.spec.volumes[0].emptyDir).toBe(b.spec.volumes[0].emptyDir);
    expect(a.metadata.finalizers).toBe(b.metadata.finalizers);
    expect(a.spec.containers[0].ports).toBe(a.metadata.finalizers);
    expect(Object.isFrozen(a.spec.volumes[0].emptyDir)).toBe(true);
  });

  it('keeps an own "__proto__" member as a member (no prototype is set) and keeps class instances', () => {
    class Marker {}
    const marker = new Marker();
    const o = JSON.parse('{"a":{"__proto__":{}},"b":[]}') as Record<string, Json>;
    o.m = marker;
    deepFreeze(o);
    expect(Object.getPrototypeOf(o.a)).toBe(Object.prototype);
    expect(Object.hasOwn(o.a, '__proto__')).toBe(true);
    expect(o.m).toBe(marker); // an empty class instance is frozen, not swapped for a plain {}
    expect(Object.isFrozen(marker)).toBe(true);
  });

  it('freezes an own "__proto__" member in place, empty or not, with or without a previous version', () => {
    // The fast-check property found {"__proto__":{}}: an empty member is normally swapped for the shared frozen
    // {}, which an own "__proto__" cannot be (assigning it sets the prototype), and it was left mutable.
    for (const text of ['{"__proto__":{}}', '{"__proto__":[]}', '{"__proto__":{"a":{},"b":[]}}']) {
      const alone = JSON.parse(`{"v":${text},"x":1}`) as Json;
      deepFreeze(alone);
      for (const o of objectsIn(alone)) expect(Object.isFrozen(o), text).toBe(true);
      expect(Object.getPrototypeOf(alone.v), text).toBe(Object.prototype);
      // against a previous version: equal, and with a member after it that differs (the equal prefix is shared)
      const prev = deepFreeze(JSON.parse(`{"v":${text},"x":1}`)) as Json;
      for (const x of ['1', '2']) {
        const next = JSON.parse(`{"v":${text},"x":${x}}`) as Json;
        const nextV = JSON.parse(`{"v":{"__proto__":${text.slice(13, -1)},"y":${x}}}`) as Json;
        deepFreeze(next, prev);
        deepFreeze(nextV, deepFreeze(JSON.parse(`{"v":{"__proto__":${text.slice(13, -1)},"y":1}}`)));
        for (const got of [next, nextV]) {
          for (const o of objectsIn(got)) expect(Object.isFrozen(o), `${text} x=${x}`).toBe(true);
          expect(Object.getPrototypeOf(got.v), `${text} x=${x}`).toBe(Object.prototype);
        }
        expect(Object.hasOwn(nextV.v, '__proto__')).toBe(true);
      }
    }
    // the property's counterexample: {"__proto__":{}} frozen against a previous {}
    const found = JSON.parse('{"__proto__":{}}') as Json;
    const next = structuredClone({ v: found, w: [found] });
    deepFreeze(next, deepFreeze({ v: {}, w: [{}] }));
    for (const o of objectsIn(next)) expect(Object.isFrozen(o)).toBe(true);
  });

  it('ends on a cycle, and leaves an already frozen subtree as it is', () => {
    const cyc: Record<string, unknown> = { name: 'x' };
    cyc.self = { back: cyc, deeper: { back: cyc } };
    expect(deepFreeze(cyc)).toBe(cyc);
    expect(Object.isFrozen(cyc.self)).toBe(true);
    const shared = Object.freeze({ x: 1 });
    const holder = deepFreeze({ shared, empty: {} });
    expect(holder.shared).toBe(shared);
  });

  it('property: any JSON value comes out deep-equal to its input, with every object frozen', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const copy = structuredClone(v);
        const frozen = deepFreeze(copy);
        expect(frozen).toEqual(v);
        for (const o of objectsIn(frozen)) expect(Object.isFrozen(o)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

describe('deepFreeze against the previous version (an update)', () => {
  it('shares the unchanged subtrees of the cached version and freezes only the changed paths', () => {
    const prev = deepFreeze(pod('a', '1')) as Json;
    const next = pod('a', '2') as Json;
    next.metadata.labels.app = 'b';
    expect(deepFreeze(next, prev)).toBe(next);
    expect(next).not.toBe(prev);
    expect(next.spec).toBe(prev.spec); // unchanged: the cached frozen subtree itself
    expect(next.metadata.managedFields).toBe(prev.metadata.managedFields);
    expect(next.metadata).not.toBe(prev.metadata); // resourceVersion and labels changed
    expect(next.metadata.labels).not.toBe(prev.metadata.labels);
    expect(next.metadata.labels).toEqual({ app: 'b' });
    expect(next.metadata.resourceVersion).toBe('2');
    for (const o of objectsIn(next)) expect(Object.isFrozen(o)).toBe(true);
    expect(prev.metadata.labels).toEqual({ app: 'a' }); // the previous version is untouched
  });

  it('never shares a subtree that differs: a member added, removed, an array grown or shrunk, a type changed', () => {
    const base = { a: { x: 1 }, b: [1, 2], c: { y: { z: 'q' } }, d: [{ k: 1 }], e: {} };
    const variants: Array<[string, (o: Json) => void, (o: Json) => unknown]> = [
      ['member added', (o) => (o.a.w = 2), (o) => o.a],
      ['member removed', (o) => delete o.a.x, (o) => o.a],
      ['array grown', (o) => o.b.push(3), (o) => o.b],
      ['array shrunk', (o) => o.b.pop(), (o) => o.b],
      ['deep leaf changed', (o) => (o.c.y.z = 'r'), (o) => o.c.y],
      ['object became an array', (o) => (o.a = [1]), (o) => o.a],
      ['array became an object', (o) => (o.b = { 0: 1, 1: 2 }), (o) => o.b],
      ['number became a string', (o) => (o.a.x = '1'), (o) => o.a],
      ['element of an array of objects', (o) => (o.d[0].k = 2), (o) => o.d[0]],
      ['empty object gained a member', (o) => (o.e.n = null), (o) => o.e],
    ];
    for (const [what, change, pick] of variants) {
      const prev = deepFreeze(structuredClone(base)) as Json;
      const next = structuredClone(base) as Json;
      change(next);
      const want = structuredClone(next);
      deepFreeze(next, prev);
      expect(next, what).toEqual(want);
      expect(pick(next), what).not.toBe(pick(prev));
      for (const o of objectsIn(next)) expect(Object.isFrozen(o), what).toBe(true);
    }
  });

  it('does not take an own "__proto__" member from the previous version, nor a previous that is not frozen', () => {
    const prev = deepFreeze(JSON.parse('{"a":{"__proto__":{"x":1}}}')) as Json;
    const next = JSON.parse('{"a":{"__proto__":{"x":1}}}') as Json;
    deepFreeze(next, prev);
    expect(Object.getPrototypeOf(next.a)).toBe(Object.prototype);
    expect(Object.hasOwn(next.a, '__proto__')).toBe(true);
    const mutable = { s: { v: 1 } };
    const next2 = deepFreeze({ s: { v: 1 } }, mutable);
    expect(next2.s).not.toBe(mutable.s); // a mutable previous is never shared into a frozen object
    expect(Object.isFrozen(next2.s)).toBe(true);
  });

  it('the Indexer shares unchanged subtrees between versions, and the informer hands both to onUpdate frozen', () => {
    const idx = new Indexer();
    idx.upsert(pod('a', '1'));
    const prev = idx.get('ns/a') as Json;
    const next = pod('a', '2');
    expect(idx.upsert(next)).toBe(prev);
    const got = idx.get('ns/a') as Json;
    expect(got).toBe(next);
    expect(got.spec).toBe(prev.spec);
    for (const [what, mutate] of mutations(got)) expect(mutate, what).toThrow(TypeError);
    // freeze: none shares nothing (mutable objects must not alias each other's parts)
    const loose = new Indexer({ freeze: 'none' });
    loose.upsert(pod('a', '1'));
    const p1 = loose.get('ns/a') as Json;
    loose.upsert(pod('a', '2'));
    expect((loose.get('ns/a') as Json).spec).not.toBe(p1.spec);
  });

  it('property: any JSON value frozen against any previous one comes out deep-equal to itself, every object frozen', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), fc.boolean(), (a, b, sameBase) => {
        const before = sameBase ? a : b;
        const prev = deepFreeze(structuredClone({ v: before, w: [before] }));
        const next = structuredClone({ v: a, w: [a] });
        deepFreeze(next, prev);
        expect(next).toEqual({ v: a, w: [a] });
        for (const o of objectsIn(next)) expect(Object.isFrozen(o)).toBe(true);
        for (const o of objectsIn(prev)) expect(Object.isFrozen(o)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});

/** A small deterministic random source (mulberry32), so a fast-check seed reproduces a mutation. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Changes a few places of a JSON value in place (a leaf, a member added or removed, an array grown, a type). */
function mutate(v: Json, rand: () => number, rate: number): Json {
  if (v === null || typeof v !== 'object') return rand() < rate ? (typeof v === 'number' ? `${v}` : 7) : v;
  if (rand() < rate / 3) return Array.isArray(v) ? { ...v } : Object.values(v);
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) v[i] = mutate(v[i], rand, rate);
    if (rand() < rate) v.push({});
    if (rand() < rate) v.pop();
    return v;
  }
  for (const k of Object.keys(v)) {
    if (rand() < rate / 2) delete v[k];
    else v[k] = mutate(v[k], rand, rate);
  }
  if (rand() < rate) v[`n${Math.floor(rand() * 4)}`] = rand() < 0.5 ? {} : [];
  return v;
}

/** Deep equality as the freeze defines it: same own enumerable keys, `===` primitives, same prototypes. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b) || Object.getPrototypeOf(a) !== Object.getPrototypeOf(b))
    return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every(
    (k) =>
      Object.hasOwn(b, k) && sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
  );
}

/**
 * Whether `v` holds, at any depth, an own "__proto__" member whose value is an object. deepFreeze never shares
 * such a member (writing it back into the new version would set a prototype, not a member): the member is
 * frozen in place, and a subtree that holds one is never the previous version's even when deeply equal to it.
 */
function holdsOwnProtoObject(v: unknown): boolean {
  if (v === null || typeof v !== 'object') return false;
  const rec = v as Record<string, unknown>;
  return Object.keys(rec).some(
    (k) =>
      (k === '__proto__' && rec[k] !== null && typeof rec[k] === 'object') || holdsOwnProtoObject(rec[k]),
  );
}

/**
 * Walks the frozen `next` and `prev` in step with the unfrozen copies they were made from, and checks the
 * sharing rule at every path below the top: a subtree is the previous version's own object exactly when it is
 * deeply equal to it. Below an object that was an array before (or the reverse) nothing is compared.
 */
function checkSharing(next: unknown, prev: unknown, nextSrc: unknown, prevSrc: unknown, path: string): void {
  if (next === null || typeof next !== 'object') return;
  const hasPrev = prev !== null && typeof prev === 'object' && Array.isArray(prev) === Array.isArray(next);
  if (path !== '') {
    const equal =
      hasPrev && sameJson(nextSrc, prevSrc) && !holdsOwnProtoObject(nextSrc) && !path.endsWith('/__proto__');
    expect(next === prev, `shared at ${path || '.'}`).toBe(equal);
    if (equal) return;
  }
  for (const k of Object.keys(next)) {
    const p = hasPrev && Object.hasOwn(prev as object, k) ? (prev as Json)[k] : undefined;
    const ps = hasPrev && Object.hasOwn(prevSrc as object, k) ? (prevSrc as Json)[k] : undefined;
    checkSharing((next as Json)[k], p, (nextSrc as Json)[k], ps, `${path}/${k}`);
  }
}

describe('deepFreeze against the previous version: the comparison writes only where it differs', () => {
  it("property: a subtree is the previous version's exactly when deeply equal to it, at every path", () => {
    fc.assert(
      fc.property(
        fc.jsonValue({ maxDepth: 4 }),
        fc.integer(),
        fc.constantFrom(0, 0.05, 0.2, 0.6),
        (base, seed, rate) => {
          const prevSrc = { o: structuredClone(base), list: [structuredClone(base), 1] };
          const nextSrc = mutate(structuredClone(prevSrc), rng(seed), rate);
          const prev = deepFreeze(structuredClone(prevSrc));
          const next = structuredClone(nextSrc);
          expect(deepFreeze(next, prev)).toBe(next);
          expect(next).toEqual(nextSrc);
          expect(prev).toEqual(prevSrc); // the previous version is untouched
          for (const o of objectsIn(next)) expect(Object.isFrozen(o)).toBe(true);
          checkSharing(next, prev, nextSrc, prevSrc, '');
        },
      ),
      {
        numRuns: 200,
        // soak run (seed 86259417): fast-check's own seed -876330734 drew an own "__proto__" holding an object,
        // equal in both versions; the oracle expected it shared, which deepFreeze never does (see above)
        examples: [[JSON.parse('{"__proto__":[]}') as Json, 0, 0]],
      },
    );
  }, 30_000);

  it('a value equal to the previous one holds the previous members, and stays the object returned', () => {
    const prev = deepFreeze(pod('a', '1')) as Json;
    const next = pod('a', '1') as Json;
    expect(deepFreeze(next, prev)).toBe(next);
    expect(next).not.toBe(prev);
    expect(next.metadata).toBe(prev.metadata);
    expect(next.spec).toBe(prev.spec);
  });

  it('members equal before the first difference, and a member the previous version has more, are shared', () => {
    const prev = deepFreeze({ o: { a: { x: 1 }, b: [{ y: 2 }], c: 3 }, p: { a: { x: 1 }, z: 1 } }) as Json;
    const n2 = { o: { a: { x: 1 }, b: [{ y: 2 }], c: 4 }, p: { a: { x: 1 } } } as Json;
    deepFreeze(n2, prev);
    expect(n2.o).not.toBe(prev.o);
    expect(n2.o.a).toBe(prev.o.a);
    expect(n2.o.b).toBe(prev.o.b);
    expect(n2.p).not.toBe(prev.p);
    expect(n2.p.a).toBe(prev.p.a);
    expect(n2).toEqual({ o: { a: { x: 1 }, b: [{ y: 2 }], c: 4 }, p: { a: { x: 1 } } });
  });

  it('never shares across prototypes: a class instance and a plain object with the same members', () => {
    class Box {
      constructor(readonly v: number) {}
    }
    const prev = deepFreeze({ plain: { v: 1 }, boxed: Object.freeze(new Box(1)), rv: '1' }) as Json;
    const next = { plain: new Box(1), boxed: { v: 1 }, rv: '2' } as Json;
    deepFreeze(next, prev);
    expect(next.plain).not.toBe(prev.plain);
    expect(next.plain).toBeInstanceOf(Box);
    expect(next.boxed).not.toBe(prev.boxed);
    expect(Object.getPrototypeOf(next.boxed)).toBe(Object.prototype);
    for (const o of objectsIn(next)) expect(Object.isFrozen(o)).toBe(true);
  });

  it('does not share a member of a frozen previous version that is itself not frozen', () => {
    const prev = Object.freeze({ s: { v: 1 }, e: {}, rv: '1' }); // frozen on top only
    const next = deepFreeze({ s: { v: 1 }, e: {}, rv: '2' }, prev) as Json;
    expect(next.s).not.toBe(prev.s);
    expect(Object.isFrozen(next.s)).toBe(true);
    expect(Object.isFrozen(next.e)).toBe(true);
    expect(Object.isFrozen(prev.s)).toBe(false); // the previous version is not changed
  });

  it('leaves a frozen subtree of the value as it is, equal to the previous one or not', () => {
    const prev = deepFreeze({ a: { x: 1, inner: { y: 1 } }, b: { x: 1 }, rv: '1' }) as Json;
    const frozenEqual = Object.freeze({ x: 1, inner: Object.freeze({ y: 1 }) });
    const frozenOther = Object.freeze({ x: 2 });
    const next = { a: frozenEqual, b: frozenOther, rv: '2' } as Json;
    expect(() => deepFreeze(next, prev)).not.toThrow();
    expect(next.b).toBe(frozenOther);
    expect([frozenEqual, prev.a]).toContain(next.a); // equal: either is the same value
    expect(next).toEqual({ a: { x: 1, inner: { y: 1 } }, b: { x: 2 }, rv: '2' });
    // a frozen member whose own members are shared by the previous version's would need a write: left alone
    const inner = prev.a.inner;
    const holder = Object.freeze({ x: 1, inner: { y: 1 }, z: 1 });
    const n3 = { a: holder, rv: '3' } as Json;
    expect(() => deepFreeze(n3, prev)).not.toThrow();
    expect(n3.a).toBe(holder);
    expect(holder.inner).not.toBe(inner);
  });
});

import type { KubeObject, ObjectList, WatchEvent } from '@kubeloop/client';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import {
  CompactIndexer,
  Indexer,
  type ListCallOptions,
  type ListerWatcher,
  SharedIndexInformer,
  type WatchCallOptions,
} from '../src/index.js';
import { deepFreeze } from '../src/store.js';

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
            await new Promise<void>((r) => o.signal.addEventListener('abort', () => r(), { once: true }));
            return;
          }
          yield { type: 'MODIFIED', object: pod('a', '11') } as WatchEvent;
          yield { type: 'DELETED', object: pod('a', '12') } as WatchEvent;
        })(),
    };
    const inf = new SharedIndexInformer(src, { reflector: { backoff: { initialMs: 1, maxMs: 2 } } });
    const failures: string[] = [];
    const seen: string[] = [];
    const tryAll = (event: string, o: KubeObject) => {
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

/**
 * The types say what the runtime does: a cached object is read-only all the way down, a timestamp is a string,
 * a writer does not take a cached object until it is copied, and deepCopy gives an editable object back.
 * Each `@ts-expect-error` is a compile error `npm run typecheck` requires (an unused one fails it).
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  type Cached,
  type CachedClient,
  type CacheReader,
  type Client,
  ConfigMap,
  Deployment,
  deepCopy,
  type ObjectOf,
  Pod,
  type Stored,
} from '../src/index.js';
import type { V1ConfigMap, V1Pod } from '../src/models/index.js';

declare const cached: Cached<V1Pod>;
declare const cachedClient: CachedClient;
declare const live: Client;

// Wrapped in functions that never run: the assertions are the compile errors.
export function compileErrors(): void {
  // mutating a cached object
  // @ts-expect-error labels are read-only
  cached.metadata.labels = { a: 'b' };
  if (cached.metadata.labels) {
    // @ts-expect-error a map of a cached object is read-only
    cached.metadata.labels.app = 'x';
  }
  // @ts-expect-error an array of a cached object is read-only
  cached.spec?.containers.push({ name: 'c' });
  // calling Date methods on a timestamp (a string on the wire)
  // @ts-expect-error creationTimestamp is a string (RFC 3339), not a Date
  cached.metadata.creationTimestamp.getTime();
  // passing a cached object to a writer without copying
  // @ts-expect-error a Cached<V1Pod> is not a V1Pod (read-only arrays)
  void live.update(Pod, cached);
}

export async function compiles(): Promise<void> {
  const pod = await cachedClient.get(Pod, { namespace: 'n', name: 'p' });
  expectTypeOf(pod).toEqualTypeOf<Cached<V1Pod>>();
  // what a stored object always has needs no `?.`
  expectTypeOf(pod.metadata.name).toEqualTypeOf<string>();
  expectTypeOf(pod.metadata.creationTimestamp).toEqualTypeOf<string>();
  const copy = deepCopy(pod);
  copy.metadata.labels = { ...copy.metadata.labels, app: 'web' };
  copy.spec?.containers.push({ name: 'sidecar' });
  await cachedClient.update(Pod, copy); // the copy is a Stored<V1Pod>, so a V1Pod
  const list = await cachedClient.list(ConfigMap);
  expectTypeOf(list.items).toEqualTypeOf<readonly Cached<V1ConfigMap>[]>();
  // the live client's objects are mutable
  const fresh = await live.get(Deployment, { namespace: 'n', name: 'd' });
  expectTypeOf(fresh).toEqualTypeOf<ObjectOf<typeof Deployment>>();
  // a CachedClient is a CacheReader, and a live Client's objects fit where Cached ones are read
  const reader: CacheReader = cachedClient;
  void reader;
}

describe('read-only cache reads and deepCopy', () => {
  it('deepCopy round-trips a frozen object into an equal, editable, unshared one', () => {
    const stored: Stored<V1Pod> = {
      metadata: {
        name: 'p',
        namespace: 'n',
        uid: 'u',
        resourceVersion: '1',
        creationTimestamp: '2026-12-01T05:27:55Z',
        labels: { a: 'b' },
      },
      spec: { containers: [{ name: 'c', image: 'nginx' }] },
    };
    const frozen = deepFreeze(structuredClone(stored)) as Cached<V1Pod>;
    expect(() => {
      (frozen.metadata as { labels: unknown }).labels = {};
    }).toThrow(TypeError);
    const copy = deepCopy(frozen);
    expectTypeOf(copy).toMatchTypeOf<V1Pod>();
    expect(copy).toEqual(stored);
    expect(Object.isFrozen(copy)).toBe(false);
    expect(Object.isFrozen(copy.metadata.labels)).toBe(false);
    copy.metadata.labels = { a: 'c' };
    copy.spec?.containers.push({ name: 'd' });
    expect(frozen.metadata.labels).toEqual({ a: 'b' });
    expect(frozen.spec?.containers).toHaveLength(1);
  });
});

function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object') {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}

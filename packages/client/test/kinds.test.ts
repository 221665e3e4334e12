import type { V1ConfigMap, V1Deployment, V1Pod, V1Status } from '@kubeloop/client/models';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { gvkOf, gvkString, parseApiVersion } from '../src/entries/apiutil.js';
import {
  type ApiClient,
  ConfigMap,
  Deployment,
  type Kind,
  kind,
  type ListOf,
  type ObjectList,
  type ObjectOf,
  objectKeyFromObject,
  Pod,
  type WatchEvent,
} from '../src/index.js';

describe('kind descriptors', () => {
  it('carry the object type through the client (checked by tsc)', () => {
    type GetPod = Awaited<ReturnType<typeof getPod>>;
    const getPod = (c: ApiClient) => c.get(Pod, { namespace: 'n', name: 'p' });
    expectTypeOf<GetPod>().toEqualTypeOf<V1Pod>();
    const listDeps = (c: ApiClient) => c.list(Deployment);
    expectTypeOf<Awaited<ReturnType<typeof listDeps>>>().toEqualTypeOf<ObjectList<V1Deployment>>();
    const create = (c: ApiClient) =>
      c.create(ConfigMap, { metadata: { name: 'x', namespace: 'n' }, data: { a: '1' } });
    expectTypeOf<Awaited<ReturnType<typeof create>>>().toEqualTypeOf<V1ConfigMap>();
    expectTypeOf<WatchEvent<V1Pod>>().toMatchTypeOf<
      { type: 'ERROR'; object: V1Status } | { type: string; object: V1Pod }
    >();
    expectTypeOf(kind<V1Pod>('v1', 'Pod')).toEqualTypeOf<Kind<V1Pod>>();
  });

  it('name the object and list types of a descriptor with ObjectOf / ListOf (checked by tsc)', () => {
    expectTypeOf<ObjectOf<typeof Pod>>().toEqualTypeOf<V1Pod>();
    expectTypeOf<ObjectOf<typeof Deployment>>().toEqualTypeOf<V1Deployment>();
    expectTypeOf<ListOf<typeof ConfigMap>>().toEqualTypeOf<ObjectList<V1ConfigMap>>();
    interface Widget {
      metadata?: { name?: string };
      spec: { size: number };
    }
    const Widget = kind<Widget>('example.com/v1', 'Widget');
    expectTypeOf<ObjectOf<typeof Widget>>().toEqualTypeOf<Widget>();
    // ObjectOf of a descriptor is what get resolves to
    const getW = (c: ApiClient) => c.get(Widget, { name: 'w' });
    expectTypeOf<Awaited<ReturnType<typeof getW>>>().toEqualTypeOf<ObjectOf<typeof Widget>>();
  });

  it('name group, version and kind', () => {
    expect(parseApiVersion('apps/v1')).toEqual({ group: 'apps', version: 'v1' });
    expect(parseApiVersion('v1')).toEqual({ group: '', version: 'v1' });
    expect(gvkOf(Deployment)).toEqual({ group: 'apps', version: 'v1', kind: 'Deployment' });
    expect(gvkString(gvkOf(Pod))).toBe('Pod.v1');
    expect(Object.isFrozen(Pod)).toBe(true);
    expect(objectKeyFromObject({ metadata: { name: 'a', namespace: 'n' } })).toEqual({
      namespace: 'n',
      name: 'a',
    });
    expect(objectKeyFromObject({ metadata: { name: 'ns1' } })).toEqual({ name: 'ns1' });
  });
});

describe('toTime / toMicroTime', () => {
  it('write the layouts of metav1.Time and metav1.MicroTime', async () => {
    const { toMicroTime, toTime } = await import('../src/index.js');
    const d = new Date(Date.UTC(2026, 11, 1, 5, 27, 55, 926));
    expect(toTime(d)).toBe('2026-12-01T05:27:55Z');
    expect(toMicroTime(d)).toBe('2026-12-01T05:27:55.926000Z');
    expect(() => toTime(new Date(Number.NaN))).toThrow(RangeError);
    expect(() => toMicroTime(new Date(Number.NaN))).toThrow('toMicroTime: invalid Date');
  });
});

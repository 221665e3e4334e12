import { describe, expect, it } from 'vitest';
import {
  ApiClient,
  type HttpRequest,
  type HttpResponse,
  type HttpTransport,
  InvalidRequestError,
  Namespace,
  Pod,
  StaticRESTMapper,
  UnexpectedResponseError,
} from '../src/index.js';

/** Records request paths and answers every request with `reply`. */
function recording(reply: unknown): HttpTransport & { paths: string[] } {
  const paths: string[] = [];
  return {
    paths,
    async request(req: HttpRequest): Promise<HttpResponse> {
      paths.push(req.path);
      const text = JSON.stringify(reply);
      return {
        status: 200,
        headers: {},
        body: {
          text: async () => text,
          async *[Symbol.asyncIterator]() {
            yield text;
          },
        },
      };
    },
    close: async () => {},
  };
}

const mapper = new StaticRESTMapper([
  {
    gvk: { group: '', version: 'v1', kind: 'Namespace' },
    resource: { group: '', version: 'v1', resource: 'namespaces' },
    scope: 'Cluster',
  },
  {
    gvk: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    scope: 'Namespaced',
  },
]);

describe('ApiClient request paths (issue 16 item 11)', () => {
  it('a cluster-scoped get with a namespace in the key ignores the namespace (controller-runtime)', async () => {
    const t = recording({ metadata: { name: 'kube-system' } });
    const c = new ApiClient({ transport: t, restMapper: mapper });
    await c.get(Namespace, { namespace: 'default', name: 'kube-system' });
    expect(t.paths).toEqual(['/api/v1/namespaces/kube-system']);
  });

  it('refuses a list limit that is negative or not a whole number, naming it; 0 means unpaged', async () => {
    const t = recording({ items: [], metadata: {} });
    const c = new ApiClient({ transport: t, restMapper: mapper });
    for (const limit of [-1, 1.5, Number.NaN]) {
      await expect(c.list(Pod, { namespace: 'a', limit })).rejects.toThrow(InvalidRequestError);
    }
    await expect(c.list(Pod, { namespace: 'a', limit: -1 })).rejects.toThrow(/limit/);
    await c.list(Pod, { namespace: 'a', limit: 0 });
    await c.list(Pod, { namespace: 'a', limit: 7 });
    expect(t.paths).toEqual(['/api/v1/namespaces/a/pods', '/api/v1/namespaces/a/pods?limit=7']);
  });
});

describe('ApiClient reply shapes (a reply that is not what the protocol promises is a typed error)', () => {
  it('a list whose items are not all objects is refused, naming the first bad item', async () => {
    for (const [items, what] of [
      [[1, 'x', null], /items\[0\] is a number/],
      [[{ metadata: { name: 'a' } }, 'x'], /items\[1\] is a string/],
      [[{ metadata: { name: 'a' } }, null], /items\[1\] is null/],
      [[[{ metadata: {} }]], /items\[0\] is an array/],
    ] as const) {
      const c = new ApiClient({
        transport: recording({ kind: 'PodList', items, metadata: {} }),
        restMapper: mapper,
      });
      const err = await c.list(Pod, { namespace: 'a' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UnexpectedResponseError);
      expect((err as Error).message).toMatch(what);
      expect((err as Error).message).toContain('GET /api/v1/namespaces/a/pods');
    }
  });

  it('items that are not an array are refused, naming what they are', async () => {
    const c = new ApiClient({
      transport: recording({ kind: 'PodList', items: 'x', metadata: {} }),
      restMapper: mapper,
    });
    await expect(c.list(Pod, { namespace: 'a' })).rejects.toThrow(/items is a string, not an array/);
  });

  it('a get, create, update or patch whose reply is not one object is refused', async () => {
    for (const reply of [[{ metadata: { name: 'p' } }], 7, 'x', null]) {
      const c = new ApiClient({ transport: recording(reply), restMapper: mapper, fieldOwner: 'test' });
      const obj = { metadata: { namespace: 'a', name: 'p' } };
      for (const call of [
        () => c.get(Pod, { namespace: 'a', name: 'p' }),
        () => c.create(Pod, obj),
        () => c.update(Pod, obj),
        () => c.patch(Pod, { namespace: 'a', name: 'p' }, { type: 'merge', data: {} }),
      ]) {
        const err = await call().catch((e: unknown) => e);
        expect(err).toBeInstanceOf(UnexpectedResponseError);
        expect((err as Error).message).toMatch(/not an object/);
      }
    }
  });
});

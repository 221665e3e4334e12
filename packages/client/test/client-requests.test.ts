import { describe, expect, it } from 'vitest';
import {
  type HttpRequest,
  type HttpResponse,
  type HttpTransport,
  StaticRESTMapper,
} from '../src/entries/apiutil.js';
import { InvalidRequestError, UnexpectedResponseError } from '../src/entries/errors.js';
import { ApiClient, Namespace, Pod } from '../src/index.js';

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

describe('ApiClient request paths', () => {
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

describe('request bodies: Date values (client-node types timestamps as Date)', () => {
  /** Records the bodies sent; answers `{}` objects. */
  function bodies(): HttpTransport & { sent: string[] } {
    const sent: string[] = [];
    const t = recording({ metadata: { name: 'x' } });
    return {
      sent,
      request: (req: HttpRequest) => {
        if (req.body !== undefined) sent.push(String(req.body));
        return t.request(req);
      },
      close: async () => {},
    };
  }

  it('a Date goes out as RFC 3339 with six fractional digits in UTC, which metav1.MicroTime (Lease renewTime, Event eventTime) requires and metav1.Time accepts', async () => {
    // kube-apiserver parses MicroTime with the exact layout 2006-01-02T15:04:05.000000Z07:00: the three-digit
    // "…:55.926Z" JSON.stringify makes of a Date is a 400 for a Lease's renewTime.
    const t = bodies();
    const c = new ApiClient({ transport: t, restMapper: mapper, fieldOwner: 'test' });
    const at = new Date(Date.UTC(2026, 11, 1, 5, 27, 55, 926));
    const pod = {
      metadata: { namespace: 'default', name: 'x', creationTimestamp: at },
      status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: at }] },
    } as never;
    await c.create(Pod, pod);
    await c.update(Pod, pod);
    await c.patch(
      Pod,
      { namespace: 'default', name: 'x' },
      { type: 'merge', data: { status: { startTime: at } } },
    );
    await c.status().update(Pod, pod);
    await c.status().patch(Pod, { namespace: 'default', name: 'x' }, { type: 'merge', data: { t: [at] } });
    // server-side apply: the apply body keeps a Date a Date (it was pruned into {} before)
    await c.apply(Pod, { metadata: { namespace: 'default', name: 'x' }, spec: { t: at } } as never);
    await c.status().apply(Pod, pod);
    expect(t.sent).toHaveLength(7);
    for (const body of t.sent) {
      expect(body).toContain('"2026-12-01T05:27:55.926000Z"');
      expect(body).not.toContain('55.926Z');
    }
    // bytes (a Buffer or Uint8Array in Secret.data / ConfigMap.binaryData) go out as base64, as Go encodes []byte
    await c.patch(
      Pod,
      { namespace: 'default', name: 'x' },
      {
        type: 'merge',
        data: { data: { a: Buffer.from('héllo'), b: new Uint8Array([0, 255]) } },
      },
    );
    expect(t.sent.at(-1)).toBe('{"data":{"a":"aMOpbGxv","b":"AP8="}}');
    await c.apply(Pod, {
      metadata: { namespace: 'default', name: 'x' },
      data: { a: Buffer.from('hi') },
    } as never);
    expect(JSON.parse(t.sent.at(-1) ?? '{}').data).toEqual({ a: 'aGk=' });
    // an invalid Date stays null, as JSON.stringify makes it
    await c.patch(
      Pod,
      { namespace: 'default', name: 'x' },
      { type: 'merge', data: { d: new Date(Number.NaN) } },
    );
    expect(t.sent.at(-1)).toBe('{"d":null}');
  });
});

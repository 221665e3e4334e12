import { describe, expect, it } from 'vitest';
import { createOrPatch, createOrUpdate } from '../src/controllerutil/index.js';
import {
  type HttpRequest,
  type HttpResponse,
  type HttpTransport,
  StaticRESTMapper,
} from '../src/entries/apiutil.js';
import { ApiClient, ConfigMap } from '../src/index.js';

/**
 * Breaker report item 10: `mutate` setting a property to `undefined` — documented as "not set, the value as
 * read is kept" — was dropped from createOrUpdate's PUT body by JSON.stringify, so the PUT cleared it, while
 * createOrPatch (and the `unchanged` test) kept it. Both now keep it; `delete` or `null` clears.
 */

const stored = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { namespace: 'default', name: 'c1', resourceVersion: '7', labels: { x: 'y' } },
  data: { a: '1', b: '2' },
};

/** Answers GET with `stored` and every write with its own body; records the writes as sent on the wire. */
function server(): HttpTransport & { writes: Array<{ method: string; body: unknown }> } {
  const writes: Array<{ method: string; body: unknown }> = [];
  const reply = (text: string): HttpResponse => ({
    status: 200,
    headers: {},
    body: {
      text: async () => text,
      async *[Symbol.asyncIterator]() {
        yield text;
      },
    },
  });
  return {
    writes,
    async request(req: HttpRequest): Promise<HttpResponse> {
      if (req.method === 'GET') return reply(JSON.stringify(stored));
      const body = JSON.parse(String(req.body));
      writes.push({ method: req.method, body });
      return reply(JSON.stringify(req.method === 'PUT' ? body : stored));
    },
    close: async () => {},
  };
}

const mapper = new StaticRESTMapper([
  {
    gvk: { group: '', version: 'v1', kind: 'ConfigMap' },
    resource: { group: '', version: 'v1', resource: 'configmaps' },
    scope: 'Namespaced',
  },
]);

const key = { namespace: 'default', name: 'c1' };

describe('createOrUpdate and createOrPatch: a property mutate sets to undefined keeps its value as read', () => {
  it('createOrUpdate PUTs the value as read for an undefined property, the change for the others', async () => {
    const t = server();
    const c = new ApiClient({ transport: t, restMapper: mapper });
    const r = await createOrUpdate(c, ConfigMap, key, (cm) => {
      cm.data = { ...cm.data, a: undefined as unknown as string, b: '3' };
      cm.metadata = { ...cm.metadata, labels: undefined };
    });
    expect(r.result).toBe('updated');
    expect(t.writes).toHaveLength(1);
    expect(t.writes[0]?.method).toBe('PUT');
    expect(t.writes[0]?.body).toMatchObject({ data: { a: '1', b: '3' }, metadata: { labels: { x: 'y' } } });
  });

  it('createOrPatch sends only the change: the same object results', async () => {
    const t = server();
    const c = new ApiClient({ transport: t, restMapper: mapper });
    await createOrPatch(c, ConfigMap, key, (cm) => {
      cm.data = { ...cm.data, a: undefined as unknown as string, b: '3' };
    });
    expect(t.writes).toEqual([{ method: 'PATCH', body: { data: { b: '3' } } }]);
  });

  it('delete and null still clear; an undefined-only mutate writes nothing', async () => {
    const t = server();
    const c = new ApiClient({ transport: t, restMapper: mapper });
    const r = await createOrUpdate(c, ConfigMap, key, (cm) => {
      cm.data = { ...cm.data, a: undefined as unknown as string };
    });
    expect(r.result).toBe('unchanged');
    await createOrUpdate(c, ConfigMap, key, (cm) => {
      delete cm.data?.a;
      cm.metadata = { ...cm.metadata, labels: null as unknown as Record<string, string> };
    });
    expect(t.writes).toHaveLength(1);
    expect(t.writes[0]?.body).toMatchObject({ data: { b: '2' }, metadata: { labels: null } });
    expect(t.writes[0]?.body).not.toHaveProperty('data.a');
  });
});

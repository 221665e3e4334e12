import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KObject } from '../../src/index.js';
import { type Json, startTestServer, type TestServer, waitFor } from './helpers.js';

/**
 * Scale: many objects in one store, paged consistently while writes happen, and a watch fan-out that
 * shares one encoded line per event (no timing assertions).
 */
describe('scale', () => {
  let t: TestServer;
  const N = 20_000;
  beforeAll(async () => {
    t = await startTestServer();
    const podsType = t.server.resources.lookup('', 'v1', 'pods')!;
    for (let i = 0; i < N; i++) {
      const body: KObject = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `p-${String(i).padStart(6, '0')}`, labels: { shard: String(i % 10) } },
        spec: { containers: [{ name: 'c', image: 'img:1' }] },
      };
      t.server.registry.create(podsType, 'default', body, { fieldManager: 'scale-test' });
    }
  }, 120_000);
  afterAll(async () => {
    await t.close();
  });

  it('pages through every object exactly once, as a snapshot, while objects are created and deleted', async () => {
    const seen: string[] = [];
    let cont: string | undefined;
    let firstRv: string | undefined;
    let page = 0;
    do {
      const q = `limit=1000${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`;
      const r = await t.req('GET', `/api/v1/namespaces/default/pods?${q}`);
      expect(r.status).toBe(200);
      firstRv ??= r.body.metadata.resourceVersion;
      expect(r.body.metadata.resourceVersion).toBe(firstRv);
      for (const item of r.body.items as Json[]) seen.push(item.metadata.name);
      if (r.body.metadata.continue) expect(r.body.metadata.remainingItemCount).toBe(N - seen.length);
      cont = r.body.metadata.continue;
      // churn between pages: none of it may show up in this list
      await t.req('DELETE', `/api/v1/namespaces/default/pods/p-${String(page * 7).padStart(6, '0')}`);
      await t.req('POST', '/api/v1/namespaces/default/pods', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `zz-new-${page}` },
        spec: { containers: [{ name: 'c', image: 'img:1' }] },
      });
      page++;
    } while (cont);
    expect(seen).toHaveLength(N);
    expect(new Set(seen).size).toBe(N);
    expect([...seen].sort()).toEqual(seen);
    expect(seen.some((n) => n.startsWith('zz-new'))).toBe(false);
  }, 120_000);

  it('fans one event out to 100 watchers with one shared encoded line', async () => {
    // its own namespace: the paging test counts exactly the N pods of default, in any test order
    expect((await t.req('POST', '/api/v1/namespaces', { metadata: { name: 'fanout' } })).status).toBe(201);
    const rv = (await t.req('GET', '/api/v1/namespaces/fanout/pods?limit=1')).body.metadata.resourceVersion;
    const watchers = await Promise.all(
      Array.from({ length: 100 }, () =>
        t.watch(`/api/v1/namespaces/fanout/pods?watch=true&resourceVersion=${rv}`),
      ),
    );
    const captured: { lines: Map<string, string> }[] = [];
    const off = t.server.store.subscribe('/pods', undefined, (ev) => captured.push(ev));
    await t.req('POST', '/api/v1/namespaces/fanout/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'fanout' },
      spec: { containers: [{ name: 'c', image: 'img:1' }] },
    });
    await waitFor(
      () => watchers.every((w) => w.events.some((e) => e.object.metadata.name === 'fanout')),
      10_000,
    );
    off.cancel();
    // every watcher received the same bytes, and the store event holds exactly one cached line for them
    const lines = new Set(watchers.map((w) => w.raw()));
    expect(lines.size).toBe(1);
    expect(captured).toHaveLength(1);
    expect(captured[0]!.lines.size).toBe(1);
    for (const w of watchers) w.close();
  }, 60_000);
});

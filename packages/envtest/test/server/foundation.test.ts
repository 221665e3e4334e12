import { connect } from 'node:http2';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pod, startTestServer, type TestServer, waitFor } from './helpers.js';

describe('foundation: CRUD, list and watch over real HTTPS', () => {
  let t: TestServer;
  // a fresh server per test: tests write objects (and compact) that others list
  beforeEach(async () => {
    t = await startTestServer();
  });
  afterEach(async () => {
    await t.close();
  });

  it('serves /version without auth and rejects a bad token with a 401 Status', async () => {
    const v = await t.req('GET', '/version', undefined, { authorization: '' });
    expect(v.status).toBe(200);
    expect(v.body.gitVersion).toMatch(/^v1\.32\./);
    const bad = await t.req('GET', '/api/v1/namespaces', undefined, { authorization: 'Bearer nope' });
    expect(bad.status).toBe(401);
    expect(bad.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Unauthorized',
      reason: 'Unauthorized',
      code: 401,
    });
    const none = await t.req('GET', '/api/v1/namespaces', undefined, { authorization: '' });
    expect(none.status).toBe(401);
  });

  it('creates, gets, updates, lists and deletes pods', async () => {
    const c = await t.req('POST', '/api/v1/namespaces/default/pods', pod('p1', { app: 'web' }));
    expect(c.status).toBe(201);
    expect(c.body.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(c.body.metadata.resourceVersion).toMatch(/^\d+$/);
    expect(c.body.status.phase).toBe('Pending');
    const g = await t.req('GET', '/api/v1/namespaces/default/pods/p1');
    expect(g.status).toBe(200);
    expect(g.body.metadata.resourceVersion).toBe(c.body.metadata.resourceVersion);
    const upd = { ...g.body, metadata: { ...g.body.metadata, labels: { app: 'api' } } };
    const u = await t.req('PUT', '/api/v1/namespaces/default/pods/p1', upd);
    expect(u.status).toBe(200);
    expect(Number(u.body.metadata.resourceVersion)).toBeGreaterThan(Number(c.body.metadata.resourceVersion));
    const stale = await t.req('PUT', '/api/v1/namespaces/default/pods/p1', upd);
    expect(stale.status).toBe(409);
    expect(stale.body.reason).toBe('Conflict');
    const l = await t.req('GET', '/api/v1/namespaces/default/pods');
    expect(l.status).toBe(200);
    expect(l.body.kind).toBe('PodList');
    expect(l.body.items.map((p: { metadata: { name: string } }) => p.metadata.name)).toEqual(['p1']);
    const d = await t.req('DELETE', '/api/v1/namespaces/default/pods/p1');
    expect(d.status).toBe(200);
    expect(d.body.kind).toBe('Pod');
    const gone = await t.req('GET', '/api/v1/namespaces/default/pods/p1');
    expect(gone.status).toBe(404);
    expect(gone.body.message).toBe('pods "p1" not found');
  });

  it('watches from a list resourceVersion and sees only later changes, one JSON event per line', async () => {
    await t.req('POST', '/api/v1/namespaces/default/pods', pod('before'));
    const l = await t.req('GET', '/api/v1/namespaces/default/pods');
    const rv = l.body.metadata.resourceVersion;
    const w = await t.watch(`/api/v1/namespaces/default/pods?watch=true&resourceVersion=${rv}`);
    expect(w.status).toBe(200);
    expect(w.headers['transfer-encoding']).toBe('chunked');
    await t.req('POST', '/api/v1/namespaces/default/pods', pod('after'));
    await t.req('DELETE', '/api/v1/namespaces/default/pods/after');
    await w.until((ev) => ev.length >= 3);
    // a pod delete is graceful with period 0: marked (MODIFIED with deletionTimestamp), then DELETED
    expect(w.events.map((e) => [e.type, e.object.metadata.name])).toEqual([
      ['ADDED', 'after'],
      ['MODIFIED', 'after'],
      ['DELETED', 'after'],
    ]);
    expect(w.events[1].object.metadata.deletionTimestamp).toBeTruthy();
    expect(w.events[0].object.kind).toBe('Pod');
    expect(w.raw().split('\n').filter(Boolean)).toHaveLength(3);
    w.close();
  });

  it('speaks HTTP/2 (ALPN h2, many streams on one connection, watches as DATA frames) beside HTTP/1.1', async () => {
    const session = connect(t.server.url, { ca: t.server.caPem });
    try {
      await new Promise<void>((resolve, reject) => {
        session.once('connect', () => resolve());
        session.once('error', reject);
      });
      expect(session.alpnProtocol).toBe('h2');
      const auth = { authorization: `Bearer ${t.server.token}` };
      const get = (path: string) =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          const s = session.request({ ':path': path, ...auth });
          let status = 0;
          let body = '';
          s.on('response', (h) => {
            status = Number(h[':status']);
          });
          s.setEncoding('utf8');
          s.on('data', (c: string) => {
            body += c;
          });
          s.on('end', () => resolve({ status, body }));
          s.on('error', reject);
        });
      const [ns, missing] = await Promise.all([
        get('/api/v1/namespaces/default'),
        get('/api/v1/namespaces/default/pods/none'),
      ]);
      expect(ns.status).toBe(200);
      expect(JSON.parse(ns.body).metadata.name).toBe('default');
      expect(missing.status).toBe(404);
      // a watch on an HTTP/2 stream: no Transfer-Encoding (forbidden in h2), events arrive as they happen
      const rv = JSON.parse((await get('/api/v1/namespaces/default/configmaps')).body).metadata
        .resourceVersion;
      const w = session.request({
        ':path': `/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${rv}`,
        ...auth,
      });
      let headers: Record<string, unknown> = {};
      w.on('response', (h) => {
        headers = h;
      });
      let text = '';
      w.setEncoding('utf8');
      w.on('data', (c: string) => {
        text += c;
      });
      await t.req('POST', '/api/v1/namespaces/default/configmaps', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'over-h2' },
      });
      await waitFor(() => text.includes('\n'), 5000, 'the watch event');
      expect(headers[':status']).toBe(200);
      expect(headers['transfer-encoding']).toBeUndefined();
      const ev = JSON.parse(text.split('\n')[0]!);
      expect([ev.type, ev.object.metadata.name]).toEqual(['ADDED', 'over-h2']);
      w.close();
    } finally {
      session.close();
    }
  });
});

import { describe, expect, it } from 'vitest';
import { serverLifecycle } from '../../src/api-server.js';
import { createInProcessApiServer, EnvtestError } from '../../src/index.js';

const json = { 'content-type': 'application/json', accept: 'application/json' };

describe('createInProcessApiServer + serveInProcess (no socket)', () => {
  it('serves the same request path: auth, CRUD, the request log', async () => {
    const s = createInProcessApiServer();
    try {
      const auth = { authorization: `Bearer ${s.token}` };
      const anon = await s.serveInProcess({ method: 'GET', path: '/api/v1/namespaces' });
      expect(anon.status).toBe(401);
      await anon.body.text();
      const created = await s.serveInProcess({
        method: 'POST',
        path: '/api/v1/namespaces/default/configmaps',
        headers: { ...json, ...auth },
        body: JSON.stringify({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'a' },
          data: { k: 'v' },
        }),
      });
      expect(created.status).toBe(201);
      expect(created.headers['content-type']).toBe('application/json');
      const obj = JSON.parse(await created.body.text());
      expect(obj.metadata.uid).toBeTruthy();
      const missing = await s.serveInProcess({
        method: 'GET',
        path: '/api/v1/namespaces/default/configmaps/b',
        headers: auth,
      });
      expect(missing.status).toBe(404);
      expect(JSON.parse(await missing.body.text()).reason).toBe('NotFound');
      expect(s.faults.requests({ verb: 'create' }).map((r) => r.status)).toEqual([201]);
    } finally {
      await s.stop();
    }
  });

  it('streams a watch event by event; destroying the body ends the watch at the server', async () => {
    const s = createInProcessApiServer();
    try {
      const auth = { authorization: `Bearer ${s.token}` };
      const w = await s.serveInProcess({
        method: 'GET',
        path: '/api/v1/namespaces/default/configmaps?watch=true',
        headers: auth,
      });
      expect(w.status).toBe(200);
      expect(w.headers['transfer-encoding']).toBeUndefined();
      expect(s.activeWatches()).toBe(1);
      const it = w.body[Symbol.asyncIterator]();
      const post = await s.serveInProcess({
        method: 'POST',
        path: '/api/v1/namespaces/default/configmaps',
        headers: { ...json, ...auth },
        body: JSON.stringify({ metadata: { name: 'a' } }),
      });
      await post.body.text();
      const first = await it.next();
      expect(JSON.parse(Buffer.from(first.value as Uint8Array).toString('utf8'))).toMatchObject({
        type: 'ADDED',
        object: { metadata: { name: 'a' } },
      });
      w.body.destroy();
      await expect.poll(() => s.activeWatches()).toBe(0);
    } finally {
      await s.stop();
    }
  });

  it('an abort before the answer rejects; an abort after it ends the body', async () => {
    const s = createInProcessApiServer();
    try {
      const auth = { authorization: `Bearer ${s.token}` };
      const early = new AbortController();
      early.abort(new Error('gave up'));
      await expect(
        s.serveInProcess({ method: 'GET', path: '/api/v1/namespaces', headers: auth, signal: early.signal }),
      ).rejects.toThrow('gave up');
      const late = new AbortController();
      const w = await s.serveInProcess({
        method: 'GET',
        path: '/api/v1/namespaces/default/configmaps?watch=true',
        headers: auth,
        signal: late.signal,
      });
      const reading = (async () => {
        for await (const _ of w.body) {
          /* no events */
        }
      })();
      late.abort();
      await expect(reading).rejects.toThrow();
      await expect.poll(() => s.activeWatches()).toBe(0);
    } finally {
      await s.stop();
    }
  });

  it('a connection the server drops before answering rejects with ECONNRESET', async () => {
    const s = createInProcessApiServer();
    try {
      s.faults.blackhole({ match: { verb: 'list' }, sendHeaders: false, times: 1 });
      const pending = s
        .serveInProcess({
          method: 'GET',
          path: '/api/v1/namespaces',
          headers: { authorization: `Bearer ${s.token}` },
        })
        .then(
          () => undefined,
          (e: unknown) => e as { code?: string },
        );
      await expect.poll(() => s.faults.blackholedCount()).toBe(1);
      s.faults.releaseBlackholes(true);
      expect((await pending)?.code).toBe('ECONNRESET');
    } finally {
      await s.stop();
    }
  });

  it('has no listener or CA: listen and client certificates are refused by name', async () => {
    const s = createInProcessApiServer();
    try {
      expect(s.url).toBe('');
      expect(s.caPem).toBe('');
      await expect(serverLifecycle.listen(s, 0)).rejects.toBeInstanceOf(EnvtestError);
      await expect(s.issueClientCertificate('u')).rejects.toThrow(/ENVTEST_NO_TLS|no listener or CA/);
    } finally {
      await s.stop();
    }
  });
});

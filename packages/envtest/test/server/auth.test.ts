import { X509Certificate } from 'node:crypto';
import { request as httpsRequest } from 'node:https';
import { Agent, request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pod, startTestServer, type TestServer, waitFor } from './helpers.js';

describe('authentication and test-only authorization', () => {
  let t: TestServer;
  // a fresh server per test: tests change objects others read
  beforeEach(async () => {
    t = await startTestServer({ tokens: ['static-token'] });
    await t.req('POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'a' },
    });
    await t.req('POST', '/api/v1/namespaces/a/pods', pod('p1'));
  });
  afterEach(async () => {
    await t.close();
  });

  it('accepts configured and runtime tokens; unknown, removed and expired tokens get 401', async () => {
    const as = (tok: string) =>
      t.req('GET', '/api/v1/namespaces', undefined, { authorization: `Bearer ${tok}` });
    expect((await as('static-token')).status).toBe(200);
    t.server.auth.addToken('rt', { user: 'u1' });
    expect((await as('rt')).status).toBe(200);
    t.server.auth.removeToken('rt');
    expect((await as('rt')).status).toBe(401);
    t.server.auth.addToken('old', { expiresAt: new Date(Date.now() - 1000) });
    const expired = await as('old');
    expect(expired.status).toBe(401);
    expect(expired.body.reason).toBe('Unauthorized');
    // public endpoints need no token
    for (const p of ['/version', '/healthz', '/livez', '/readyz'])
      expect((await t.req('GET', p, undefined, { authorization: '' })).status).toBe(200);
  });

  it('restricts a token to namespaces (403 Forbidden outside them)', async () => {
    t.server.auth.addToken('ns-a', { user: 'alice', namespaces: ['a'] });
    const h = { authorization: 'Bearer ns-a' };
    expect((await t.req('GET', '/api/v1/namespaces/a/pods', undefined, h)).status).toBe(200);
    const other = await t.req('GET', '/api/v1/namespaces/default/pods', undefined, h);
    expect(other.status).toBe(403);
    expect(other.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Forbidden', code: 403 });
    expect(other.body.message).toMatch(
      /^pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"/,
    );
    expect((await t.req('GET', '/api/v1/pods', undefined, h)).status).toBe(403);
  });

  it('restricts a token to a field selector on list/watch and to that name on get', async () => {
    t.server.auth.addToken('only-p1', { user: 'bob', fieldSelectors: ['metadata.name=p1'] });
    const h = { authorization: 'Bearer only-p1' };
    expect((await t.req('GET', '/api/v1/namespaces/a/pods', undefined, h)).status).toBe(403);
    expect(
      (await t.req('GET', '/api/v1/namespaces/a/pods?fieldSelector=metadata.name%3Dp1', undefined, h)).status,
    ).toBe(200);
    expect((await t.req('GET', '/api/v1/namespaces/a/pods/p1', undefined, h)).status).toBe(200);
    expect((await t.req('GET', '/api/v1/namespaces/a/pods/p2', undefined, h)).status).toBe(403);
    expect((await t.req('GET', '/api/v1/namespaces/a/pods?watch=true', undefined, h)).status).toBe(403);
  });

  it('authenticates client certificates signed by the server CA', async () => {
    const { certPem, keyPem } = await t.server.issueClientCertificate('carol', ['devs']);
    const cert = new X509Certificate(certPem);
    expect(cert.subject).toContain('CN=carol');
    expect(cert.checkIssued(new X509Certificate(t.server.caPem))).toBe(true);
    const agent = new Agent({ connect: { ca: t.server.caPem, cert: certPem, key: keyPem } });
    const res = await request(`${t.server.url}/api/v1/namespaces`, { dispatcher: agent });
    await res.body.text();
    expect(res.statusCode).toBe(200);
    await waitFor(() => t.server.requestLog.some((e) => e.user === 'carol'));
    await agent.close();
  });

  it('logs requests and counts open connections; restart drops them and keeps state', async () => {
    const before = t.server.requestLog.length;
    await t.req('GET', '/api/v1/namespaces/a/pods/p1');
    const last = t.server.requestLog[t.server.requestLog.length - 1]!;
    expect(t.server.requestLog.length).toBe(before + 1);
    expect(last).toMatchObject({
      method: 'GET',
      path: '/api/v1/namespaces/a/pods/p1',
      status: 200,
      verb: 'get',
      resource: 'pods',
    });
    expect(t.server.openConnections()).toBeGreaterThanOrEqual(1);
    const w = await t.watch('/api/v1/namespaces/a/pods?watch=true');
    await w.until((ev) => ev.length >= 1);
    const port = t.server.port;
    await t.server.restart({ keepState: true });
    await w.ended;
    expect(t.server.port).toBe(port);
    expect((await t.req('GET', '/api/v1/namespaces/a/pods/p1')).status).toBe(200);
    await t.server.restart({ keepState: false });
    expect((await t.req('GET', '/api/v1/namespaces/a/pods/p1')).status).toBe(404);
    expect((await t.req('GET', '/api/v1/namespaces/default')).status).toBe(200);
  });
});

describe('serving certificate SANs', () => {
  it('with sans [api.internal] the certificate has only that name: a client must use it as server name', async () => {
    const t = await startTestServer({ tls: { sans: ['api.internal'] } });
    try {
      const get = (servername?: string) =>
        new Promise<number>((resolve, reject) => {
          const r = httpsRequest(
            `${t.server.url}/version`,
            { ca: t.server.caPem, ...(servername ? { servername } : {}) },
            (res) => {
              res.resume();
              resolve(res.statusCode ?? 0);
            },
          );
          r.on('error', reject);
          r.end();
        });
      await expect(get()).rejects.toThrow(/altnames|IP: 127\.0\.0\.1 is not in the cert/);
      expect(await get('api.internal')).toBe(200);
    } finally {
      await t.close();
    }
  });
});

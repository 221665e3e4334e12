// The admin endpoint's own behaviour: routes, validation, loopback-only. (Its server-side operations
// — compact, restart, connections — are exercised against the real API server in fault-wire.test.ts.)
import { request } from 'node:http';
import { networkInterfaces } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { AdminServerError, startAdminServer } from '../../src/admin.js';
import { FaultInjector } from '../../src/faults/index.js';

interface Reply {
  status: number;
  body: unknown;
}

function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  localAddress?: string,
) {
  return new Promise<Reply>((resolve, reject) => {
    const url = new URL(path, base);
    const req = request(
      url,
      {
        method,
        headers: { 'content-type': 'application/json', ...headers },
        ...(localAddress ? { localAddress } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // plain text (healthz)
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    req.on('error', reject);
    req.end(body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body));
  });
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!();
});

async function start() {
  const faults = new FaultInjector(undefined);
  const admin = await startAdminServer({ faults });
  closers.push(admin.close);
  return { faults, admin };
}

describe('admin endpoint', () => {
  it('listens on 127.0.0.1 on a free port and answers healthz', async () => {
    const { admin } = await start();
    expect(admin.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await call(admin.url, 'GET', '/healthz')).toEqual({ status: 200, body: 'ok' });
  });

  it('refuses to bind to a non-loopback address', async () => {
    const faults = new FaultInjector(undefined);
    await expect(startAdminServer({ faults }, { host: '0.0.0.0' as never })).rejects.toBeInstanceOf(
      AdminServerError,
    );
  });

  // A connection to 127.0.0.1 whose source is this machine's non-loopback address is a non-loopback peer.
  const external = Object.values(networkInterfaces())
    .flat()
    .find((a) => a !== undefined && a.family === 'IPv4' && !a.internal)?.address;
  it.skipIf(external === undefined)('refuses a peer whose address is not loopback', async () => {
    const { admin } = await start();
    const r = await call(admin.url, 'GET', '/faults', undefined, {}, external);
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ error: { code: 'EFORBIDDEN' } });
    // The same request from a loopback source is served.
    expect((await call(admin.url, 'GET', '/faults')).status).toBe(200);
  });

  it('refuses requests whose Host is not a loopback name (DNS rebinding)', async () => {
    const { admin } = await start();
    const r = await call(admin.url, 'GET', '/faults', undefined, { host: 'attacker.example:80' });
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ error: { code: 'EFORBIDDEN' } });
  });

  it('adds, lists, reads and clears rules; the typed injector sees the same rules', async () => {
    const { admin, faults } = await start();
    const spec = { type: 'fail', status: 503, times: 2, match: { verb: 'list', resource: 'pods' } };
    const added = await call(admin.url, 'POST', '/faults', spec);
    expect(added.status).toBe(201);
    const id = (added.body as { id: string }).id;
    expect(added.body).toEqual({ id, spec, hits: 0, active: true });
    expect(faults.get(id)?.spec).toEqual(spec);

    await call(admin.url, 'POST', '/faults', { type: 'endWatch', afterMs: 10 });
    const listed = await call(admin.url, 'GET', '/faults');
    expect((listed.body as unknown[]).length).toBe(2);
    expect((await call(admin.url, 'GET', `/faults/${id}`)).body).toMatchObject({ id, active: true });

    const removed = await call(admin.url, 'DELETE', `/faults/${id}`);
    expect(removed.body).toMatchObject({ id, active: false });
    expect(faults.list()).toHaveLength(1);
    expect((await call(admin.url, 'GET', `/faults/${id}`)).status).toBe(404);

    expect((await call(admin.url, 'DELETE', '/faults')).body).toEqual({ cleared: 1 });
    expect(faults.list()).toHaveLength(0);
  });

  it('answers 400 naming the bad field for an invalid rule or a non-JSON body', async () => {
    const { admin } = await start();
    const bad = await call(admin.url, 'POST', '/faults', { type: 'fail', status: 'x' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: { code: 'EINVALID' } });
    expect(JSON.stringify(bad.body)).toContain('fail.status');
    const typo = await call(admin.url, 'POST', '/faults', {
      type: 'fail',
      status: 500,
      match: { verb: 'lst' },
    });
    expect(typo.status).toBe(400);
    expect(JSON.stringify(typo.body)).toContain('match.verb \\"lst\\" is not one of get|list|watch');
    const notJson = await call(admin.url, 'POST', '/faults', '{nope');
    expect(notJson.status).toBe(400);
    expect(notJson.body).toMatchObject({ error: { code: 'EBODY' } });
  });

  it('answers 501 for server operations the host does not support, 404 for unknown routes', async () => {
    const { admin } = await start();
    expect((await call(admin.url, 'POST', '/compact', {})).status).toBe(501);
    expect((await call(admin.url, 'GET', '/nope')).status).toBe(404);
    expect((await call(admin.url, 'POST', '/watch-history', { limit: 'x' })).status).toBe(400);
  });
});

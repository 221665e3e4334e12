import type { RestConfig } from '@kubeloop/config';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Transport } from '../../src/transport/index.js';
import { startTestServer, type TestServer } from './support/https-server.js';
import { createTestCa, type TestCa } from './support/pki.js';
import { startConnectProxy, startSocks5Proxy, type TestProxy } from './support/proxies.js';

let ca: TestCa;
let server: TestServer;
let proxyA: TestProxy;
let proxyB: TestProxy;
let socks: TestProxy;

beforeAll(async () => {
  ca = await createTestCa();
  server = await startTestServer(await ca.issue({ ips: ['127.0.0.1'] }), (req, res) =>
    res.end(JSON.stringify({ auth: req.headers.authorization ?? null })),
  );
  proxyA = await startConnectProxy();
  proxyB = await startConnectProxy();
  socks = await startSocks5Proxy();
});
afterAll(async () => {
  await Promise.all([server.close(), proxyA.close(), proxyB.close(), socks.close()]);
});

function config(over: Partial<RestConfig> = {}): RestConfig {
  return {
    host: server.url,
    tlsClientConfig: { caData: ca.certPem },
    bearerToken: 'proxied-token',
    qps: -1,
    burst: 0,
    timeoutMs: 0,
    userAgent: 'proxy-test',
    ...over,
  };
}

async function getThrough(t: Transport): Promise<unknown> {
  try {
    const res = await t.request({ method: 'GET', path: '/api' });
    return await res.body.json();
  } finally {
    await t.close();
  }
}

describe('Transport proxies', () => {
  it('tunnels through proxy-url (CONNECT), keeping TLS to the API server end to end', async () => {
    const before = proxyA.tunnels.length;
    const body = await getThrough(new Transport(config({ proxyUrl: proxyA.url }), { env: {} }));
    expect(body).toEqual({ auth: 'Bearer proxied-token' });
    const host = new URL(server.url).host;
    expect(proxyA.tunnels.slice(before)).toEqual([host]);
  });

  it('honours HTTPS_PROXY when there is no proxy-url', async () => {
    const before = proxyB.tunnels.length;
    await getThrough(new Transport(config(), { env: { HTTPS_PROXY: proxyB.url } }));
    expect(proxyB.tunnels.length).toBe(before + 1);
  });

  it('honours NO_PROXY for the env proxy', async () => {
    const before = proxyB.tunnels.length;
    const body = await getThrough(
      new Transport(config(), { env: { HTTPS_PROXY: proxyB.url, NO_PROXY: '127.0.0.1' } }),
    );
    expect(body).toEqual({ auth: 'Bearer proxied-token' });
    expect(proxyB.tunnels.length).toBe(before);
  });

  it('proxy-url wins over HTTPS_PROXY and NO_PROXY', async () => {
    const a = proxyA.tunnels.length;
    const b = proxyB.tunnels.length;
    await getThrough(
      new Transport(config({ proxyUrl: proxyA.url }), {
        env: { HTTPS_PROXY: proxyB.url, NO_PROXY: '127.0.0.1' },
      }),
    );
    expect(proxyA.tunnels.length).toBe(a + 1);
    expect(proxyB.tunnels.length).toBe(b);
  });

  it('tunnels through a socks5 proxy-url', async () => {
    const before = socks.tunnels.length;
    const body = await getThrough(new Transport(config({ proxyUrl: socks.url }), { env: {} }));
    expect(body).toEqual({ auth: 'Bearer proxied-token' });
    expect(socks.tunnels.slice(before)).toEqual([new URL(server.url).host]);
  });
});

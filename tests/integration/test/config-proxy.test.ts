// The counting CONNECT / SOCKS5 proxies are the transport tests' own (one copy for both suites).
// proxy-url and HTTPS_PROXY/NO_PROXY through small proxies on loopback that count their tunnels, against envtest.
import { Transport } from '@kubeloop/client/transport';
import { loadRestConfig } from '@kubeloop/config';
import { type ApiServer, startApiServer } from '@kubeloop/envtest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startConnectProxy,
  startSocks5Proxy,
  type TestProxy,
} from '../../../packages/client/test/transport/support/proxies.js';
import { tempDir, writeKubeconfig } from './support/config-support.js';

const tmp = tempDir('kubeloop-proxy-');
let server: ApiServer;
let proxyA: TestProxy;
let proxyB: TestProxy;
let socks: TestProxy;

beforeAll(async () => {
  server = await startApiServer();
  [proxyA, proxyB, socks] = await Promise.all([startConnectProxy(), startConnectProxy(), startSocks5Proxy()]);
});
afterAll(async () => {
  await Promise.all([server.stop(), proxyA.close(), proxyB.close(), socks.close()]);
  tmp.cleanup();
});

let n = 0;
async function listNamespaces(proxyUrl: string | undefined, env: Record<string, string>): Promise<number> {
  const file = writeKubeconfig(
    `${tmp.dir}/kubeconfig-${n++}`,
    {
      server: server.url,
      'certificate-authority-data': Buffer.from(server.caPem).toString('base64'),
      ...(proxyUrl ? { 'proxy-url': proxyUrl } : {}),
    },
    { token: server.token },
  );
  const t = new Transport(loadRestConfig({ kubeconfig: file, env, qps: -1 }), { env });
  try {
    const res = await t.request({ method: 'GET', path: '/api/v1/namespaces' });
    await res.body.dump();
    return res.status;
  } finally {
    await t.close();
  }
}

const target = () => new URL(server.url).host;

describe('proxies against envtest', () => {
  it('proxy-url (http CONNECT) carries the request', async () => {
    const before = proxyA.tunnels.length;
    expect(await listNamespaces(proxyA.url, {})).toBe(200);
    expect(proxyA.tunnels.slice(before)).toEqual([target()]);
  });

  it('HTTPS_PROXY is honoured without proxy-url', async () => {
    const before = proxyB.tunnels.length;
    expect(await listNamespaces(undefined, { HTTPS_PROXY: proxyB.url })).toBe(200);
    expect(proxyB.tunnels.slice(before)).toEqual([target()]);
  });

  it('NO_PROXY bypasses HTTPS_PROXY', async () => {
    const before = proxyB.tunnels.length;
    expect(await listNamespaces(undefined, { HTTPS_PROXY: proxyB.url, NO_PROXY: '127.0.0.1' })).toBe(200);
    expect(proxyB.tunnels.length).toBe(before);
  });

  it('proxy-url beats HTTPS_PROXY and NO_PROXY', async () => {
    const a = proxyA.tunnels.length;
    const b = proxyB.tunnels.length;
    expect(await listNamespaces(proxyA.url, { HTTPS_PROXY: proxyB.url, NO_PROXY: '127.0.0.1' })).toBe(200);
    expect(proxyA.tunnels.length).toBe(a + 1);
    expect(proxyB.tunnels.length).toBe(b);
  });

  it('a socks5 proxy-url carries the request', async () => {
    const before = socks.tunnels.length;
    expect(await listNamespaces(socks.url, {})).toBe(200);
    expect(socks.tunnels.slice(before)).toEqual([target()]);
  });
});

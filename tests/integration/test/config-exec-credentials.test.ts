// C16: exec credential plugins through the real request path (kubeconfig → loadRestConfig → Transport) against
// envtest, whose token table answers 401 to expired or removed tokens.
import { Transport } from '@kubeloop/client/transport';
import { loadRestConfig } from '@kubeloop/config';
import { type ApiServer, startApiServer } from '@kubeloop/envtest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, waitUntil, writeExecPlugin, writeKubeconfig } from './support/config-support.js';

const tmp = tempDir('kubeloop-c16-');
let server: ApiServer;

beforeAll(async () => {
  server = await startApiServer();
});
afterAll(async () => {
  await server.stop();
  tmp.cleanup();
});

function transportFor(command: string, extraUser: Record<string, unknown> = {}): Transport {
  const file = writeKubeconfig(
    `${tmp.dir}/kubeconfig-${Math.random().toString(36).slice(2)}`,
    {
      server: server.url,
      'certificate-authority-data': Buffer.from(server.caPem).toString('base64'),
      extensions: [{ name: 'client.authentication.k8s.io/exec', extension: { audience: 'c16' } }],
    },
    {
      exec: {
        apiVersion: 'client.authentication.k8s.io/v1',
        command,
        args: ['token', '--audience=c16'],
        env: [{ name: 'C16_FROM_KUBECONFIG', value: 'yes' }],
        interactiveMode: 'Never',
        provideClusterInfo: true,
        ...extraUser,
      },
    },
  );
  const config = loadRestConfig({ kubeconfig: file, env: { PATH: process.env.PATH }, qps: -1 });
  return new Transport(config);
}

async function get(t: Transport, path: string): Promise<number> {
  const res = await t.request({ method: 'GET', path });
  await res.body.dump();
  return res.status;
}

function logFor(user: string) {
  return server.requestLog.filter((e) => e.user === user);
}

describe('C16 exec credentials', () => {
  it('runs the plugin once for 20 concurrent requests, again once after expiry, with env, args and cluster info', async () => {
    const plugin = writeExecPlugin(tmp.dir, {
      prefix: 'exp',
      expiresInMs: 2000,
      envNames: ['C16_FROM_KUBECONFIG'],
    });
    server.auth.addToken('exp-2', { user: 'exp-2' });
    server.auth.addToken('exp-1', { user: 'exp-1' });
    const t = transportFor(plugin.command);
    // The server's log is shared by the file's tests, and the other two meet 401s on purpose: in shuffled order
    // (soak seed 237651374) they ran first, so only this test's own requests are counted.
    const before = server.requestLog.length;
    try {
      const first = await Promise.all(Array.from({ length: 20 }, () => get(t, '/api/v1/namespaces')));
      expect(first).toEqual(Array(20).fill(200));
      expect(plugin.runs()).toHaveLength(1);
      expect(logFor('exp-1')).toHaveLength(20);

      // The server expires exp-1 exactly when the plugin said it would; at t = 3 s (after issue) the client
      // must have moved on by itself, without meeting a 401.
      const issued = plugin.runs()[0]!;
      const expiresAt = Date.parse(issued.expiresAt ?? '');
      expect(expiresAt - issued.at).toBe(2000);
      server.auth.addToken('exp-1', { user: 'exp-1', expiresAt: new Date(expiresAt) });
      await waitUntil(() => Date.now() >= issued.at + 3000, 10_000, 't = 3 s');
      const second = await Promise.all(Array.from({ length: 20 }, () => get(t, '/api/v1/namespaces')));
      expect(second).toEqual(Array(20).fill(200));
      const runs = plugin.runs();
      expect(runs).toHaveLength(2);
      expect(runs[1]!.at).toBeGreaterThanOrEqual(expiresAt);
      expect(logFor('exp-2')).toHaveLength(20);
      expect(server.requestLog.slice(before).filter((e) => e.status === 401)).toHaveLength(0);

      expect(runs[0]).toMatchObject({
        args: ['token', '--audience=c16'],
        env: { C16_FROM_KUBECONFIG: 'yes' },
        info: {
          apiVersion: 'client.authentication.k8s.io/v1',
          kind: 'ExecCredential',
          spec: {
            interactive: false,
            cluster: {
              server: server.url,
              'certificate-authority-data': Buffer.from(server.caPem).toString('base64'),
              config: { audience: 'c16' },
            },
          },
        },
      });
    } finally {
      await t.close();
    }
  });

  it('re-runs a plugin whose credential has no expiry once after a 401 and retries once', async () => {
    const plugin = writeExecPlugin(tmp.dir, { prefix: 'noexp' });
    server.auth.addToken('noexp-1', { user: 'noexp-1' });
    const t = transportFor(plugin.command);
    try {
      expect(await get(t, '/api/v1/namespaces/default')).toBe(200);
      expect(await get(t, '/api/v1/namespaces/default')).toBe(200);
      expect(plugin.runs()).toHaveLength(1);

      // The server revokes the credential; the plugin's next answer is valid.
      server.auth.removeToken('noexp-1');
      server.auth.addToken('noexp-2', { user: 'noexp-2' });
      const before = server.requestLog.length;
      const statuses = await Promise.all(
        Array.from({ length: 10 }, () => get(t, '/api/v1/namespaces/default')),
      );
      expect(statuses).toEqual(Array(10).fill(200));
      expect(plugin.runs()).toHaveLength(2);
      const after = server.requestLog.slice(before).filter((e) => e.path === '/api/v1/namespaces/default');
      expect(after.filter((e) => e.status === 401).length).toBeGreaterThanOrEqual(1);
      expect(after.filter((e) => e.status === 200 && e.user === 'noexp-2')).toHaveLength(10);
    } finally {
      await t.close();
    }
  });

  it('gives the 401 back when the re-run credential is also refused (one retry only)', async () => {
    const plugin = writeExecPlugin(tmp.dir, { prefix: 'refused' });
    const t = transportFor(plugin.command);
    try {
      const before = server.requestLog.length;
      expect(await get(t, '/api/v1/namespaces/default')).toBe(401);
      expect(plugin.runs()).toHaveLength(2);
      expect(server.requestLog.slice(before).map((e) => e.status)).toEqual([401, 401]);
    } finally {
      await t.close();
    }
  });
});

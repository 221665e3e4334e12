// Token-file rotation through the real request path against envtest: re-read every minute and right after a 401.
import fs from 'node:fs';
import { Transport } from '@kubeloop/client/transport';
import { credentialProviderFor, loadRestConfig } from '@kubeloop/config';
import { type ApiServer, startApiServer } from '@kubeloop/envtest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, writeKubeconfig } from './support/config-support.js';

const tmp = tempDir('kubeloop-tokenfile-');
let server: ApiServer;

beforeAll(async () => {
  server = await startApiServer();
});
afterAll(async () => {
  await server.stop();
  tmp.cleanup();
});

async function getUser(t: Transport): Promise<{ status: number; user: string | undefined }> {
  const res = await t.request({ method: 'GET', path: '/api/v1/namespaces/default' });
  await res.body.dump();
  return { status: res.status, user: server.requestLog.at(-1)?.user };
}

describe('token file rotation', () => {
  it('uses the rotated token after a minute, and at once after a 401', async () => {
    fs.mkdirSync(`${tmp.dir}/secrets`);
    fs.writeFileSync(`${tmp.dir}/secrets/token`, 'rot-a\n');
    server.auth.addToken('rot-a', { user: 'rot-a' });
    // tokenFile is relative: it resolves against the kubeconfig's folder.
    const file = writeKubeconfig(
      `${tmp.dir}/kubeconfig`,
      { server: server.url, 'certificate-authority-data': Buffer.from(server.caPem).toString('base64') },
      { tokenFile: 'secrets/token' },
    );
    const config = loadRestConfig({ kubeconfig: file, env: {}, qps: -1 });
    expect(config.bearerTokenFile).toBe(`${tmp.dir}/secrets/token`);
    const clock = { t: Date.now() };
    const t = new Transport(config, { credentials: credentialProviderFor(config, { now: () => clock.t }) });
    try {
      expect(await getUser(t)).toEqual({ status: 200, user: 'rot-a' });

      // Rotation that the server still accepts both ways: picked up once the minute has passed.
      server.auth.addToken('rot-b', { user: 'rot-b' });
      fs.writeFileSync(`${tmp.dir}/secrets/token`, 'rot-b\n');
      clock.t += 30_000;
      expect(await getUser(t)).toEqual({ status: 200, user: 'rot-a' });
      clock.t += 30_000;
      expect(await getUser(t)).toEqual({ status: 200, user: 'rot-b' });

      // Hard rotation: the old token is revoked before the minute is up → 401 → re-read → one retry.
      server.auth.addToken('rot-c', { user: 'rot-c' });
      fs.writeFileSync(`${tmp.dir}/secrets/token`, 'rot-c\n');
      server.auth.removeToken('rot-b');
      const before = server.requestLog.length;
      expect(await getUser(t)).toEqual({ status: 200, user: 'rot-c' });
      expect(server.requestLog.slice(before).map((e) => e.status)).toEqual([401, 200]);

      // A failed read keeps the last good token.
      fs.rmSync(`${tmp.dir}/secrets/token`);
      clock.t += 120_000;
      expect(await getUser(t)).toEqual({ status: 200, user: 'rot-c' });
    } finally {
      await t.close();
    }
  });
});

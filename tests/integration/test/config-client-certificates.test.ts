// Client certificates against envtest (CN = user): static files resolved relative to the kubeconfig, and
// certificates issued by an exec plugin, rotated when they expire (a new connection pool per certificate).
import fs from 'node:fs';
import { Transport } from '@kubeloop/client/transport';
import { loadRestConfig } from '@kubeloop/config';
import { type ApiServer, startApiServer } from '@kubeloop/envtest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, waitUntil, writeKubeconfig } from './support/config-support.js';

const tmp = tempDir('kubeloop-certs-');
let server: ApiServer;

beforeAll(async () => {
  server = await startApiServer();
});
afterAll(async () => {
  await server.stop();
  tmp.cleanup();
});

const ca = () => ({
  server: server.url,
  'certificate-authority-data': Buffer.from(server.caPem).toString('base64'),
});

async function whoAmI(t: Transport): Promise<{ status: number; user: string | undefined }> {
  const res = await t.request({ method: 'GET', path: '/api/v1/namespaces/default' });
  await res.body.dump();
  return { status: res.status, user: server.requestLog.at(-1)?.user };
}

describe('client certificates', () => {
  it('static client-certificate/client-key files, relative to the kubeconfig', async () => {
    const pair = await server.issueClientCertificate('static-cert-user', ['system:masters']);
    fs.mkdirSync(`${tmp.dir}/static/pki`, { recursive: true });
    fs.writeFileSync(`${tmp.dir}/static/pki/client.crt`, pair.certPem);
    fs.writeFileSync(`${tmp.dir}/static/pki/client.key`, pair.keyPem, { mode: 0o600 });
    const file = writeKubeconfig(`${tmp.dir}/static/kubeconfig`, ca(), {
      'client-certificate': 'pki/client.crt',
      'client-key': 'pki/client.key',
    });
    const t = new Transport(loadRestConfig({ kubeconfig: file, env: {}, qps: -1 }));
    try {
      expect(await whoAmI(t)).toEqual({ status: 200, user: 'static-cert-user' });
    } finally {
      await t.close();
    }
  });

  it('a certificate from an exec plugin, replaced after its expirationTimestamp', async () => {
    const dir = `${tmp.dir}/exec`;
    fs.mkdirSync(dir);
    for (const n of [1, 2]) {
      const pair = await server.issueClientCertificate(`exec-cert-${n}`, ['system:masters']);
      fs.writeFileSync(`${dir}/cert-${n}.pem`, pair.certPem);
      fs.writeFileSync(`${dir}/key-${n}.pem`, pair.keyPem, { mode: 0o600 });
    }
    const log = `${dir}/runs.log`;
    const plugin = `${dir}/cert-plugin.mjs`;
    fs.writeFileSync(
      plugin,
      `#!${process.execPath}
import fs from 'node:fs';
const log = ${JSON.stringify(log)};
const n = (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\\n').filter(Boolean).length : 0) + 1;
fs.appendFileSync(log, n + '\\n');
process.stdout.write(JSON.stringify({
  apiVersion: 'client.authentication.k8s.io/v1beta1',
  kind: 'ExecCredential',
  status: {
    clientCertificateData: fs.readFileSync(${JSON.stringify(dir)} + '/cert-' + n + '.pem', 'utf8'),
    clientKeyData: fs.readFileSync(${JSON.stringify(dir)} + '/key-' + n + '.pem', 'utf8'),
    expirationTimestamp: new Date(Date.now() + 1000).toISOString(),
  },
}));
`,
      { mode: 0o755 },
    );
    const file = writeKubeconfig(`${dir}/kubeconfig`, ca(), {
      exec: { apiVersion: 'client.authentication.k8s.io/v1beta1', command: plugin },
    });
    const t = new Transport(loadRestConfig({ kubeconfig: file, env: {}, qps: -1 }));
    try {
      const first = await Promise.all([whoAmI(t), whoAmI(t), whoAmI(t)]);
      expect(first.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(server.requestLog.at(-1)?.user).toBe('exec-cert-1');
      const started = Date.now();
      await waitUntil(() => Date.now() >= started + 1100, 5000, 'the plugin certificate to expire');
      expect(await whoAmI(t)).toEqual({ status: 200, user: 'exec-cert-2' });
      expect(fs.readFileSync(log, 'utf8').trim().split('\n')).toEqual(['1', '2']);
    } finally {
      await t.close();
    }
  });
});

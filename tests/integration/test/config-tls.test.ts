// C17 against envtest serving a certificate whose only SAN is `api.internal` (not the IP it listens on):
// kubeconfig → loadRestConfig → Transport, for plain requests and watches.
import { Transport, TransportError } from '@kubeloop/client/transport';
import { KubeconfigError, loadRestConfig } from '@kubeloop/config';
import { type ApiServer, startApiServer } from '@kubeloop/envtest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, writeKubeconfig } from './support/config-support.js';

const tmp = tempDir('kubeloop-c17-');
let server: ApiServer;
let other: ApiServer;

beforeAll(async () => {
  server = await startApiServer({ tls: { sans: ['api.internal'] } });
  other = await startApiServer(); // its CA is the "wrong CA"
});
afterAll(async () => {
  await Promise.all([server.stop(), other.stop()]);
  tmp.cleanup();
});

let n = 0;
function load(cluster: Record<string, unknown>) {
  const file = writeKubeconfig(
    `${tmp.dir}/kubeconfig-${n++}`,
    { server: server.url, ...cluster },
    { token: server.token },
  );
  return loadRestConfig({ kubeconfig: file, env: {}, qps: -1 });
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

/** A GET and the first event of a watch; each either the result or the thrown error's code. */
async function getAndWatch(cluster: Record<string, unknown>): Promise<{ get: unknown; watch: unknown }> {
  const t = new Transport(load(cluster));
  const code = (e: unknown) => (e instanceof TransportError ? e.code : e);
  try {
    const get = await t
      .request({ method: 'GET', path: '/api/v1/namespaces/default' })
      .then(async (r) => ({
        status: r.status,
        name: ((await r.body.json()) as { metadata: { name: string } }).metadata.name,
      }))
      .catch(code);
    const ac = new AbortController();
    const watch = await t
      .request({
        method: 'GET',
        path: '/api/v1/namespaces?watch=true&resourceVersion=0',
        stream: true,
        signal: ac.signal,
      })
      .then(async (r) => {
        let text = '';
        for await (const chunk of r.body) {
          text += chunk.toString();
          if (text.includes('\n')) break;
        }
        ac.abort();
        return { status: r.status, firstType: (JSON.parse(text.split('\n')[0]!) as { type: string }).type };
      })
      .catch(code);
    return { get, watch };
  } finally {
    await t.close();
  }
}

const OK = { get: { status: 200, name: 'default' }, watch: { status: 200, firstType: 'ADDED' } };

describe('C17 TLS knobs against envtest (SAN api.internal only)', () => {
  it('CA C + tls-server-name api.internal works', async () => {
    expect(
      await getAndWatch({
        'certificate-authority-data': b64(server.caPem),
        'tls-server-name': 'api.internal',
      }),
    ).toEqual(OK);
  });

  it('CA C alone fails on the host name', async () => {
    expect(await getAndWatch({ 'certificate-authority-data': b64(server.caPem) })).toEqual({
      get: 'TLSFailed',
      watch: 'TLSFailed',
    });
  });

  it('insecure-skip-tls-verify alone works', async () => {
    expect(await getAndWatch({ 'insecure-skip-tls-verify': true })).toEqual(OK);
  });

  it('CA and insecure together is a config error', () => {
    expect(() =>
      load({ 'certificate-authority-data': b64(server.caPem), 'insecure-skip-tls-verify': true }),
    ).toThrow(KubeconfigError);
  });

  it('a wrong CA fails, even with the right tls-server-name', async () => {
    expect(
      await getAndWatch({
        'certificate-authority-data': b64(other.caPem),
        'tls-server-name': 'api.internal',
      }),
    ).toEqual({ get: 'TLSFailed', watch: 'TLSFailed' });
  });
});

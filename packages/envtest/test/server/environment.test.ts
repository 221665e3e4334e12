import { stat } from 'node:fs/promises';
import { Agent, request } from 'undici';
import { describe, expect, it } from 'vitest';
import { Environment } from '../../src/index.js';

describe('Environment (embedded mode)', () => {
  it('starts, gives a RestConfig and a 0600 kubeconfig, and stops', async () => {
    const env = new Environment({ env: {} });
    const config = await env.start();
    try {
      expect(env.mode).toBe('embedded');
      expect(config.host).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect(config.tlsClientConfig.caData).toContain('BEGIN CERTIFICATE');
      expect(config.bearerToken).toBeTruthy();
      expect(env.server).toBeDefined();
      const st = await stat(env.kubeconfigPath);
      expect(st.mode & 0o777).toBe(0o600);
      const dispatcher = new Agent({ connect: { ca: config.tlsClientConfig.caData } });
      const res = await request(`${config.host}/api/v1/namespaces`, {
        headers: { authorization: `Bearer ${config.bearerToken}` },
        dispatcher,
      });
      const body = (await res.body.json()) as { items: { metadata: { name: string } }[] };
      expect(res.statusCode).toBe(200);
      expect(body.items.map((n) => n.metadata.name)).toEqual([
        'default',
        'kube-node-lease',
        'kube-public',
        'kube-system',
      ]);
      await dispatcher.close();
    } finally {
      await env.stop();
    }
    expect(env.server).toBeUndefined();
  });
});

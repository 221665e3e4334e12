import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newManager } from '@kubeloop/builder';
import { ConfigMap, newClient, Secret } from '@kubeloop/client';
import { ClusterRole, ClusterRoleBinding, TokenReview } from '@kubeloop/client/kinds';
import { SelfSignedCertificates } from '@kubeloop/webhook';
import { describe, expect, it } from 'vitest';
import { realCluster, useFaultServer } from './support/fault-server.js';

/** GET over HTTPS, trusting `ca`; resolves to the status and the body. */
function get(url: string, ca: string, token?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca, headers: token ? { authorization: `Bearer ${token}` } : {} }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

// controller-runtime's secure metrics (SecureServing + filters.WithAuthenticationAndAuthorization) against
// envtest with its RBAC authorizer on: TokenReview authenticates, SubjectAccessReview of the non-resource URL
// authorizes.
describe.skipIf(realCluster)('metrics over HTTPS with authentication and authorization', () => {
  const ctx = useFaultServer('kubeloop-secure-metrics', { authorization: 'RBAC' });

  it('no token 401, an unknown token 401, a token without get on /metrics 403, an allowed token 200; profiling behind the same filter', async () => {
    const ns = await ctx.namespace('secure-metrics');
    // A serving certificate for 127.0.0.1 from the webhook package's self-signed CA.
    const certs = new SelfSignedCertificates({
      client: ctx.api,
      secret: { name: 'metrics-cert', namespace: ns },
      names: ['127.0.0.1', 'localhost'],
      checkIntervalMs: 0,
    });
    const certsStop = new AbortController();
    await certs.start(certsStop.signal);
    const secret = await ctx.api.get(Secret, { namespace: ns, name: 'metrics-cert' });
    const ca = Buffer.from(secret.data?.['ca.crt'] ?? '', 'base64').toString('utf8');
    const dir = await mkdtemp(join(tmpdir(), 'kubeloop-metrics-'));
    await writeFile(join(dir, 'tls.crt'), certs.current().cert);
    await writeFile(join(dir, 'tls.key'), certs.current().key);

    const users = { reader: `reader-${ns}`, other: `other-${ns}`, profiler: `profiler-${ns}` };
    ctx.server.auth.addToken('reader-token', { user: users.reader });
    ctx.server.auth.addToken('other-token', { user: users.other });
    ctx.server.auth.addToken('profiler-token', { user: users.profiler });
    const role = (name: string, urls: string[]) =>
      ctx.api.create(ClusterRole, {
        metadata: { name },
        rules: [{ nonResourceURLs: urls, verbs: ['get'] }],
      });
    const bind = (name: string, user: string) =>
      ctx.api.create(ClusterRoleBinding, {
        metadata: { name: `${name}-${user}` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
        subjects: [{ kind: 'User', name: user, apiGroup: 'rbac.authorization.k8s.io' }],
      });
    await role(`metrics-reader-${ns}`, ['/metrics']);
    await role(`profiler-${ns}`, ['/debug/*']);
    await bind(`metrics-reader-${ns}`, users.reader);
    await bind(`profiler-${ns}`, users.profiler);
    // The other user may only read a different path.
    await role(`healthz-${ns}`, ['/healthz']);
    await bind(`healthz-${ns}`, users.other);

    const mgr = newManager(ctx.config, {
      cache: { defaultNamespaces: [ns] },
      metrics: {
        bindAddress: '127.0.0.1:0',
        secureServing: true,
        certDir: dir,
        authenticationAndAuthorization: true,
        profiling: true,
      },
    });
    const ac = new AbortController();
    const run = mgr.start(ac.signal);
    try {
      await mgr.elected();
      const base = `https://${mgr.metricsServerAddress()}`;
      expect((await get(`${base}/metrics`, ca)).status).toBe(401);
      expect((await get(`${base}/metrics`, ca, 'not-a-token')).status).toBe(401);
      expect((await get(`${base}/metrics`, ca, 'other-token')).status).toBe(403);
      const ok = await get(`${base}/metrics`, ca, 'reader-token');
      expect(ok.status).toBe(200);
      expect(ok.body).toContain('informer_store_objects');
      // The filter covers every path: the reader may not read /debug/cache, the profiler may.
      expect((await get(`${base}/debug/cache`, ca, 'reader-token')).status).toBe(403);
      expect((await get(`${base}/debug/cache`, ca, 'profiler-token')).status).toBe(200);
      const profile = await get(`${base}/debug/pprof/profile?seconds=0.2`, ca, 'profiler-token');
      expect(profile.status).toBe(200);
      expect(JSON.parse(profile.body)).toHaveProperty('nodes');
      expect((await get(`${base}/debug/pprof/profile?seconds=0.2`, ca, 'reader-token')).status).toBe(403);
      expect((await get(`${base}/debug/pprof/profile?seconds=-1`, ca, 'profiler-token')).status).toBe(400);
    } finally {
      ac.abort();
      await run;
      certsStop.abort();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("envtest with RBAC on: a TokenReview authenticates the server's tokens; a SubjectAccessReview follows ClusterRoleBindings; requests without a binding are 403", async () => {
    ctx.server.auth.addToken('rbac-nobody', { user: 'nobody' });
    const tr = await ctx.api.create(TokenReview, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token: 'rbac-nobody' },
    });
    expect(tr.status).toMatchObject({ authenticated: true, user: { username: 'nobody' } });
    const none = await ctx.api.create(TokenReview, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token: 'unknown' },
    });
    expect(none.status?.authenticated).toBeUndefined();
    const nobody = newClient({ ...ctx.config, bearerToken: 'rbac-nobody' });
    try {
      await expect(nobody.list(ConfigMap, { namespace: 'default' })).rejects.toMatchObject({
        status: { code: 403 },
      });
    } finally {
      await nobody.close();
    }
  });
});

// Secrets: run the real stack with logging at trace, capture every log line, every
// client diagnostics message and every error, and check that no bearer token, password, client key, exec
// credential or Secret data value appears in any of them; kubeconfig files envtest writes are 0600; TLS is
// verified unless disabled.
import { randomBytes } from 'node:crypto';
import diagnosticsChannel from 'node:diagnostics_channel';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { inspect } from 'node:util';
import { newControllerManagedBy, newLogger, newManager } from '@kubeloop/builder';
import { Namespace, newClient, Secret } from '@kubeloop/client';
import { TransportError } from '@kubeloop/client/transport';
import { loadRestConfig, type RestConfig } from '@kubeloop/config';
import { type ApiServer, Environment, startApiServer } from '@kubeloop/envtest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, writeExecPlugin, writeKubeconfig } from './support/config-support.js';
import { waitFor } from './support.js';

const realCluster = process.env.USE_EXISTING_CLUSTER === 'true';
/** A RestConfig with the fields every test here leaves at their defaults. */
const rest = (c: Partial<RestConfig> & Pick<RestConfig, 'host' | 'tlsClientConfig'>): RestConfig => ({
  qps: -1,
  burst: 0,
  timeoutMs: 10_000,
  userAgent: 'kubeloop-secrets-test',
  ...c,
});
const CHANNELS = [
  'kubeloop:client:request',
  'kubeloop:client:retry',
  'kubeloop:client:throttle',
  'kubeloop:client:warning',
];

describe.skipIf(realCluster)('secrets never reach logs or errors', () => {
  const tmp = tempDir('kubeloop-secrets-');
  let server: ApiServer;
  /** Everything that could leak: log lines, channel messages, error texts. */
  const seen: string[] = [];
  const secrets: Record<string, string> = {};
  const onMessage = (message: unknown) => {
    try {
      seen.push(JSON.stringify(message) ?? '');
    } catch {
      seen.push(inspect(message, { depth: 6 }));
    }
  };
  const recordError = (e: unknown) => {
    seen.push(String(e), inspect(e, { depth: 6 }));
    try {
      seen.push(JSON.stringify(e) ?? '');
    } catch {
      // not serialisable: inspect above covers it
    }
  };

  beforeAll(async () => {
    server = await startApiServer();
    for (const c of CHANNELS) diagnosticsChannel.subscribe(c, onMessage);
  });
  afterAll(async () => {
    for (const c of CHANNELS) diagnosticsChannel.unsubscribe(c, onMessage);
    await server?.stop();
    tmp.cleanup();
  });

  function assertNoSecretSeen(): void {
    expect(seen.length).toBeGreaterThan(10);
    for (const [what, value] of Object.entries(secrets)) {
      const hit = seen.find((s) => s.includes(value));
      expect(hit, `${what} appeared in: ${hit?.slice(0, 300)}`).toBeUndefined();
    }
  }

  it('a manager at trace level over Secrets, failing credentials and broken kubeconfigs leaks nothing', {
    timeout: 60_000,
  }, async () => {
    secrets.adminToken = server.token;
    const secretValue = `s3cr3t-${randomBytes(8).toString('hex')}`;
    secrets.secretData = secretValue;
    secrets.secretDataBase64 = Buffer.from(secretValue).toString('base64');
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const logger = newLogger({ level: 'trace', destination });
    const config = rest({
      host: server.url,
      tlsClientConfig: { caData: server.caPem },
      bearerToken: server.token,
    });
    const api = newClient(config);
    const ns = `secrets-${randomBytes(3).toString('hex')}`;
    await api.create(Namespace, { metadata: { name: ns } });
    await api.create(Secret, {
      metadata: { namespace: ns, name: 's1' },
      stringData: { password: secretValue },
    });

    // A manager reconciling Secrets: the library logs what it does at every level.
    const mgr = newManager(config, { logger, cache: { defaultNamespaces: [ns] } });
    let reconciled = 0;
    newControllerManagedBy(mgr)
      .for(Secret)
      .complete({
        async reconcile(ctx, req) {
          const s = await mgr.getClient().get(Secret, req);
          ctx.log.debug({ name: s.metadata?.name }, 'reconciling a secret');
          reconciled++;
          if (reconciled === 1) throw new Error('first reconcile fails on purpose');
          return undefined;
        },
      });
    const ac = new AbortController();
    const run = mgr.start(ac.signal);
    await waitFor(() => reconciled >= 2, 'the secret reconciled twice');
    await api.update(Secret, {
      metadata: { namespace: ns, name: 's1' },
      stringData: { password: secretValue, other: secretValue },
    });
    await waitFor(() => reconciled >= 3, 'the update reconciled');

    // A wrong bearer token, a wrong password: 401s whose errors must not carry the credential.
    const wrongToken = `wrong-${randomBytes(12).toString('hex')}`;
    secrets.wrongToken = wrongToken;
    const password = `pw-${randomBytes(12).toString('hex')}`;
    secrets.password = password;
    for (const bad of [
      newClient({ ...config, bearerToken: wrongToken }),
      newClient({ ...config, bearerToken: undefined, username: 'alice', password } as RestConfig),
    ]) {
      try {
        await bad.get(Secret, { namespace: ns, name: 's1' });
      } catch (e) {
        recordError(e);
      }
      await bad.close();
    }

    // An exec plugin whose token the server refuses.
    const plugin = writeExecPlugin(tmp.dir, { prefix: `leaky-exec-${randomBytes(4).toString('hex')}` });
    secrets.execToken = `${plugin.command.split('/').pop()!.replace('-plugin.mjs', '')}-1`;
    const execFile = writeKubeconfig(
      `${tmp.dir}/exec-kubeconfig`,
      { server: server.url, 'certificate-authority-data': Buffer.from(server.caPem).toString('base64') },
      {
        exec: {
          apiVersion: 'client.authentication.k8s.io/v1',
          command: plugin.command,
          interactiveMode: 'Never',
        },
      },
    );
    const execClient = newClient(loadRestConfig({ kubeconfig: execFile, env: { PATH: process.env.PATH } }));
    try {
      await execClient.get(Secret, { namespace: ns, name: 's1' });
    } catch (e) {
      recordError(e);
    }
    await execClient.close();

    // A client key and a token in kubeconfigs that fail to load.
    const cert = await server.issueClientCertificate('bob');
    secrets.clientKey = cert.keyPem.split('\n').slice(1, -2).join('').slice(0, 40);
    const badFile = writeKubeconfig(
      `${tmp.dir}/bad-kubeconfig`,
      { server: 'https://127.0.0.1:1', 'certificate-authority-data': 'not base64 at all %%%' },
      { token: server.token, 'client-key-data': Buffer.from(cert.keyPem).toString('base64'), password },
    );
    try {
      loadRestConfig({ kubeconfig: badFile });
    } catch (e) {
      recordError(e);
    }

    // Configs as people print them.
    const env = new Environment();
    const envConfig = await env.start();
    seen.push(inspect(envConfig), JSON.stringify(envConfig), String(envConfig));
    secrets.envtestToken = (env as unknown as { server?: ApiServer }).server?.token ?? server.token;
    await env.stop();

    ac.abort();
    await run;
    await api.close();
    seen.push(...lines);
    expect(lines.some((l) => l.includes('"level":20'))).toBe(true); // debug lines were written (trace enabled)
    assertNoSecretSeen();
  });

  it('kubeconfig files envtest writes are mode 0600', async () => {
    expect(statSync(server.kubeconfigPath).mode & 0o777).toBe(0o600);
    const env = new Environment();
    await env.start();
    try {
      expect(statSync(env.kubeconfigPath!).mode & 0o777).toBe(0o600);
    } finally {
      await env.stop();
    }
  });

  it('TLS is verified unless disabled: no CA is a TLS error; insecure works', async () => {
    const noCa = newClient(rest({ host: server.url, bearerToken: server.token, tlsClientConfig: {} }));
    const err = await noCa.get(Namespace, { name: 'default' }).catch((e: unknown) => e);
    await noCa.close();
    recordError(err);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).code).toBe('TLSFailed');
    const insecure = newClient(
      rest({ host: server.url, bearerToken: server.token, tlsClientConfig: { insecure: true } }),
    );
    expect((await insecure.get(Namespace, { name: 'default' })).metadata?.name).toBe('default');
    await insecure.close();
  });

  // The kubeconfig parser let `yaml` emit process warnings quoting the offending source line: an unresolved
  // tag on a token line printed the token to stderr (fixed: the loader parses with logLevel 'error').
  it('a kubeconfig YAML warning never quotes a credential', async () => {
    const token = `tok-${randomBytes(12).toString('hex')}`;
    const file = writeKubeconfig(`${tmp.dir}/tagged-kubeconfig`, { server: server.url }, {});
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, text.replace('"user": {}', `"user": {"token": !tok ${JSON.stringify(token)}}`), {
      mode: 0o600,
    });
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on('warning', onWarning);
    try {
      loadRestConfig({ kubeconfig: file });
    } catch {
      // a load error is fine; the warning channel is what is checked
    }
    await new Promise((r) => setImmediate(r)); // process warnings are emitted on the next tick
    process.off('warning', onWarning);
    expect(warnings.join('\n')).not.toContain(token);
  });

  // The transport warns once that verification is off (at construction), through the manager's logger.
  it('disabling TLS verification logs exactly one warning', async () => {
    const records: string[] = [];
    const logger = newLogger({
      level: 'warn',
      destination: new Writable({
        write(chunk, _e, cb) {
          records.push(String(chunk));
          cb();
        },
      }),
    });
    const mgr = newManager(
      rest({ host: server.url, bearerToken: server.token, tlsClientConfig: { insecure: true } }),
      { logger },
    );
    const ac = new AbortController();
    const run = mgr.start(ac.signal);
    await new Promise((r) => setTimeout(r, 200));
    ac.abort();
    await run;
    expect(records.filter((l) => /insecure|TLS verification/i.test(l))).toHaveLength(1);
  });
});

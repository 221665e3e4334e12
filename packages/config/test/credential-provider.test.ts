import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CredentialError,
  credentialProviderFor,
  type ExecConfig,
  ExecCredentialSource,
  loadRestConfigFromFiles,
  type RestConfig,
} from '../src/index.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kubeloop-creds-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const base: RestConfig = {
  host: 'https://127.0.0.1:6443',
  tlsClientConfig: { caData: 'CA-PEM' },
  qps: 20,
  burst: 30,
  timeoutMs: 0,
  userAgent: 'ua',
};

/** A clock the test moves by hand. */
function manualNow(start = Date.parse('2026-11-29T20:00:00Z')) {
  const c = { t: start, now: () => c.t };
  return c;
}

let pluginSeq = 0;
/**
 * Writes an exec plugin (a node script) that logs each run (args, env A, KUBERNETES_EXEC_INFO) to a JSON-lines
 * file and prints an ExecCredential built by `status` (a JS expression over `n`, the run number).
 */
function writePlugin(status: string, opts: { exitCode?: number; delayMs?: number } = {}) {
  pluginSeq++;
  const file = path.join(dir, `plugin-${pluginSeq}.mjs`);
  const log = path.join(dir, `plugin-${pluginSeq}.log`);
  fs.writeFileSync(
    file,
    `#!${process.execPath}
import fs from 'node:fs';
const log = ${JSON.stringify(log)};
const n = (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\\n').filter(Boolean).length : 0) + 1;
fs.appendFileSync(log, JSON.stringify({ args: process.argv.slice(2), a: process.env.A, info: JSON.parse(process.env.KUBERNETES_EXEC_INFO) }) + '\\n');
setTimeout(() => {
  ${opts.exitCode ? `process.stderr.write('plugin failing on purpose\\n'); process.stdout.write('SECRET-OUTPUT'); process.exit(${opts.exitCode});` : ''}
  const info = JSON.parse(process.env.KUBERNETES_EXEC_INFO);
  process.stdout.write(JSON.stringify({ apiVersion: info.apiVersion, kind: 'ExecCredential', status: ${status} }));
}, ${opts.delayMs ?? 50});
`,
  );
  fs.chmodSync(file, 0o755);
  const runs = () =>
    fs.existsSync(log)
      ? fs
          .readFileSync(log, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { args: string[]; a: string; info: Record<string, unknown> })
      : [];
  return { file, runs };
}

function execConfig(command: string, over: Partial<ExecConfig> = {}): ExecConfig {
  return {
    apiVersion: 'client.authentication.k8s.io/v1',
    command,
    args: ['get-token', '--cluster=dev'],
    env: [{ name: 'A', value: 'from-kubeconfig' }],
    interactiveMode: 'Never',
    provideClusterInfo: true,
    clusterConfig: { audience: 'kubeloop' },
    ...over,
  };
}

describe('exec credential plugin', () => {
  it('runs once for 20 concurrent callers and passes args, env and KUBERNETES_EXEC_INFO with cluster info', async () => {
    const p = writePlugin('{ token: "tok-" + n }');
    const provider = credentialProviderFor({ ...base, execProvider: execConfig(p.file) });
    const all = await Promise.all(Array.from({ length: 20 }, () => provider.get()));
    expect(new Set(all.map((c) => c.headers.Authorization))).toEqual(new Set(['Bearer tok-1']));
    const runs = p.runs();
    expect(runs).toHaveLength(1);
    expect(runs[0]).toEqual({
      args: ['get-token', '--cluster=dev'],
      a: 'from-kubeconfig',
      info: {
        apiVersion: 'client.authentication.k8s.io/v1',
        kind: 'ExecCredential',
        spec: {
          interactive: false,
          cluster: {
            server: 'https://127.0.0.1:6443',
            'certificate-authority-data': Buffer.from('CA-PEM').toString('base64'),
            config: { audience: 'kubeloop' },
          },
        },
      },
    });
  });

  it('shares one plugin run between providers built for the same config (client-go caches authenticators)', async () => {
    const p = writePlugin('{ token: "shared-" + n }');
    const cfg = { ...base, execProvider: execConfig(p.file) };
    const a = credentialProviderFor(cfg);
    const b = credentialProviderFor({ ...cfg });
    const [ca, cb] = await Promise.all([a.get(), b.get()]);
    expect([ca.headers.Authorization, cb.headers.Authorization]).toEqual([
      'Bearer shared-1',
      'Bearer shared-1',
    ]);
    expect(p.runs()).toHaveLength(1);
  });

  it('leaves spec.cluster out without provideClusterInfo', async () => {
    const p = writePlugin('{ token: "t" }');
    const provider = credentialProviderFor({
      ...base,
      execProvider: execConfig(p.file, { provideClusterInfo: false }),
    });
    await provider.get();
    expect(p.runs()[0]?.info).toEqual({
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      spec: { interactive: false },
    });
  });

  it('reuses the credential until expirationTimestamp, then runs once more for all waiters', async () => {
    const clock = manualNow();
    const p = writePlugin(
      `{ token: "tok-" + n, expirationTimestamp: new Date(${clock.t} + 2000).toISOString() }`,
    );
    const provider = credentialProviderFor({ ...base, execProvider: execConfig(p.file) }, { now: clock.now });
    await Promise.all(Array.from({ length: 20 }, () => provider.get()));
    clock.t += 1000;
    expect((await provider.get()).headers.Authorization).toBe('Bearer tok-1');
    clock.t += 2000;
    const after = await Promise.all(Array.from({ length: 20 }, () => provider.get()));
    expect(new Set(after.map((c) => c.headers.Authorization))).toEqual(new Set(['Bearer tok-2']));
    expect(p.runs()).toHaveLength(2);
  });

  it('re-runs after a 401 once per credential, and says to retry', async () => {
    const p = writePlugin('{ token: "tok-" + n }');
    const provider = credentialProviderFor({ ...base, execProvider: execConfig(p.file) });
    const first = await provider.get();
    const results = await Promise.all(Array.from({ length: 5 }, () => provider.onUnauthorized(first)));
    expect(results).toEqual([true, true, true, true, true]);
    expect(p.runs()).toHaveLength(2);
    expect((await provider.get()).headers.Authorization).toBe('Bearer tok-2');
    // A late 401 for the old credential does not run the plugin again.
    expect(await provider.onUnauthorized(first)).toBe(true);
    expect(p.runs()).toHaveLength(2);
  });

  it('returns a client certificate when the plugin gives one', async () => {
    const p = writePlugin('{ clientCertificateData: "CERT" + n, clientKeyData: "KEY" + n }');
    const provider = credentialProviderFor({ ...base, execProvider: execConfig(p.file) });
    const c = await provider.get();
    expect(c.clientCertificate).toEqual({ certData: 'CERT1', keyData: 'KEY1' });
    expect(c.headers.Authorization).toBeUndefined();
  });

  it('rejects half a certificate pair', async () => {
    const p = writePlugin('{ clientCertificateData: "CERT" }');
    const provider = credentialProviderFor({ ...base, execProvider: execConfig(p.file) });
    const e = await provider.get().catch((x: unknown) => x);
    expect(e).toBeInstanceOf(CredentialError);
    expect((e as CredentialError).code).toBe('ExecInvalidOutput');
    expect((e as Error).message).toBe(
      `exec plugin ${p.file}: status.clientCertificateData and status.clientKeyData must both be set`,
    );
  });

  it('reports a failing plugin by exit code without its output', async () => {
    const p = writePlugin('{ token: "t" }', { exitCode: 3 });
    const provider = credentialProviderFor({ ...base, execProvider: execConfig(p.file) });
    const e = await provider.get().catch((x: unknown) => x);
    expect((e as CredentialError).code).toBe('ExecFailed');
    expect((e as Error).message).toBe(`exec plugin ${p.file} failed with exit code 3`);
  });

  it('refuses interactiveMode Always without a terminal', async () => {
    const p = writePlugin('{ token: "t" }');
    const provider = credentialProviderFor(
      { ...base, execProvider: execConfig(p.file, { interactiveMode: 'Always' }) },
      { stdinIsTerminal: false },
    );
    const e = await provider.get().catch((x: unknown) => x);
    expect((e as CredentialError).code).toBe('ExecInteractiveRequired');
    expect(p.runs()).toHaveLength(0);
  });

  it('says interactive=true to an IfAvailable plugin when stdin is a terminal', async () => {
    const p = writePlugin('{ token: "t" }');
    const provider = credentialProviderFor(
      {
        ...base,
        execProvider: execConfig(p.file, { interactiveMode: 'IfAvailable', provideClusterInfo: false }),
      },
      { stdinIsTerminal: true },
    );
    await provider.get();
    expect(p.runs()[0]?.info.spec).toEqual({ interactive: true });
  });

  it('publishes runs to onRun listeners without the credential', async () => {
    const p = writePlugin('{ token: "never-in-events" }');
    const events: unknown[] = [];
    const off = ExecCredentialSource.onRun((e) => events.push(e));
    try {
      await credentialProviderFor({ ...base, execProvider: execConfig(p.file) }).get();
    } finally {
      off();
    }
    expect(events).toHaveLength(1);
    expect(JSON.stringify(events)).not.toContain('never-in-events');
  });
});

describe('token file', () => {
  it('is re-read after a minute, right after a 401, and keeps the last good token when a read fails', async () => {
    const clock = manualNow();
    const file = path.join(dir, 'token-file');
    fs.writeFileSync(file, 'one\n');
    const provider = credentialProviderFor({ ...base, bearerTokenFile: file }, { now: clock.now });
    expect((await provider.get()).headers.Authorization).toBe('Bearer one');
    fs.writeFileSync(file, 'two\n');
    clock.t += 59_000;
    expect((await provider.get()).headers.Authorization).toBe('Bearer one');
    clock.t += 1_000;
    expect((await provider.get()).headers.Authorization).toBe('Bearer two');
    fs.writeFileSync(file, 'three\n');
    expect(await provider.onUnauthorized(await provider.get())).toBe(true);
    expect((await provider.get()).headers.Authorization).toBe('Bearer three');
    fs.rmSync(file);
    clock.t += 60_000;
    expect((await provider.get()).headers.Authorization).toBe('Bearer three');
    expect(await provider.onUnauthorized(await provider.get())).toBe(false);
  });

  it('fails with a typed error when the file was never readable and there is no static token', async () => {
    const provider = credentialProviderFor({ ...base, bearerTokenFile: path.join(dir, 'absent') });
    const e = await provider.get().catch((x: unknown) => x);
    expect((e as CredentialError).code).toBe('TokenFileUnreadable');
  });

  it('falls back to the static token when the file cannot be read', async () => {
    const provider = credentialProviderFor({
      ...base,
      bearerToken: 'static',
      bearerTokenFile: path.join(dir, 'absent'),
    });
    expect((await provider.get()).headers.Authorization).toBe('Bearer static');
  });
});

describe('other credentials', () => {
  it('basic auth', async () => {
    const c = await credentialProviderFor({ ...base, username: 'u', password: 'p' }).get();
    expect(c.headers.Authorization).toBe(`Basic ${Buffer.from('u:p').toString('base64')}`);
  });

  it('never credentials for an http:// host', async () => {
    const c = await credentialProviderFor({ ...base, host: 'http://127.0.0.1:8080', bearerToken: 't' }).get();
    expect(c.headers.Authorization).toBeUndefined();
  });

  it('impersonation headers, groups and extras as multi-valued headers', async () => {
    const c = await credentialProviderFor({
      ...base,
      bearerToken: 't',
      impersonate: { userName: 'alice', uid: '7', groups: ['a', 'b'], extra: { 'acme.com/project': ['x'] } },
    }).get();
    expect(c.headers).toEqual({
      Authorization: 'Bearer t',
      'Impersonate-User': 'alice',
      'Impersonate-Uid': '7',
    });
    expect(c.multiHeaders).toEqual({
      'Impersonate-Group': ['a', 'b'],
      'Impersonate-Extra-acme.com%2Fproject': ['x'],
    });
  });
});

describe('oidc auth-provider (through @kubernetes/client-node)', () => {
  const jwt = (exp: number) =>
    [
      { alg: 'none', typ: 'JWT' },
      { iss: 'https://idp', exp },
    ]
      .map((p) => Buffer.from(JSON.stringify(p)).toString('base64url'))
      .concat('sig')
      .join('.');

  it('sends a still-valid id-token as the bearer token', async () => {
    const idToken = jwt(Math.floor(Date.now() / 1000) + 3600);
    const c = await credentialProviderFor({
      ...base,
      authProvider: {
        name: 'oidc',
        config: { 'id-token': idToken, 'client-id': 'kubectl', 'idp-issuer-url': 'https://idp' },
      },
    }).get();
    expect(c.headers.Authorization).toBe(`Bearer ${idToken}`);
  });

  it('sends nothing for an expired id-token without a refresh token (client-node returns no token)', async () => {
    const c = await credentialProviderFor({
      ...base,
      authProvider: {
        name: 'oidc',
        config: { 'id-token': jwt(1), 'client-id': 'kubectl', 'idp-issuer-url': 'https://idp' },
      },
    }).get();
    expect(c.headers.Authorization).toBeUndefined();
  });
});

describe('RestConfig redaction', () => {
  it('toString, inspect and JSON never show a token, password, key or exec env value', () => {
    const file = path.join(dir, 'redact.yaml');
    fs.writeFileSync(
      file,
      `current-context: c
clusters: [{name: k, cluster: {server: "https://a:1", proxy-url: "http://user:proxypass@p:3128"}}]
users: [{name: u, user: {token: tok-SECRET, client-certificate-data: ${Buffer.from('CERT').toString('base64')}, client-key-data: ${Buffer.from('KEY-SECRET').toString('base64')}}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
`,
    );
    const cfg = loadRestConfigFromFiles([file], { onWarning: () => undefined });
    expect(cfg.bearerToken).toBe('tok-SECRET');
    for (const text of [String(cfg), inspect(cfg, { depth: 5 }), JSON.stringify(cfg), `${cfg}`]) {
      expect(text).not.toContain('tok-SECRET');
      expect(text).not.toContain('KEY-SECRET');
      expect(text).not.toContain('proxypass');
      expect(text).toContain('https://a:1');
    }
  });
});

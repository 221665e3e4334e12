// Config faults of the core-hardening issue: an unusable CA refused at load time, a hung exec plugin bounded,
// and one PATH deciding the exec plugin both at load time and when it runs.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CredentialError,
  credentialProviderFor,
  inClusterConfig,
  KubeconfigError,
  loadRestConfig,
  type RestConfig,
} from '../src/index.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kubeloop-hardening-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A real self-signed CA certificate (P-256, CN=kubeloop-test-ca), so the X.509 parse is exercised. */
const REAL_CA = `-----BEGIN CERTIFICATE-----
MIIBjDCCATOgAwIBAgIUVhGjn8Kv/QjkFKNiSUAPHnoqIuAwCgYIKoZIzj0EAwIw
GzEZMBcGA1UEAwwQa3ViZWxvb3AtdGVzdC1jYTAgFw0yNjExMzAxOTMxNDVaGA8y
MTI2MTEwNjE5MzE0NVowGzEZMBcGA1UEAwwQa3ViZWxvb3AtdGVzdC1jYTBZMBMG
ByqGSM49AgEGCCqGSM49AwEHA0IABKxgR12fsd+tBCmuK8O0hXZum9PsSz+MSczz
UM34KAzEp5VBunpRJH0X5diwLkZeFybcJzXYly4WbgLUzIT4nYyjUzBRMB0GA1Ud
DgQWBBREW+frG4JsUmKwOEypz6e5qMj8ojAfBgNVHSMEGDAWgBREW+frG4JsUmKw
OEypz6e5qMj8ojAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0cAMEQCIEm8
vsowJoKFy8Sf2wQWXCwcTYjHwxLrqQuWhpU+s+lQAiBLCvYdocoHMLbWGw96mSzC
5900t2+bZUQ7ykeAVR0L9g==
-----END CERTIFICATE-----
`;

function kubeconfig(name: string, cluster: string, user = '{}'): string {
  const file = path.join(dir, name);
  fs.writeFileSync(
    file,
    [
      'apiVersion: v1',
      'kind: Config',
      'current-context: c',
      'contexts: [{ name: c, context: { cluster: k, user: u } }]',
      `clusters: [{ name: k, cluster: { server: "https://127.0.0.1:6443"${cluster} } }]`,
      `users: [{ name: u, user: ${user} }]`,
      '',
    ].join('\n'),
  );
  return file;
}

function loadError(file: string): KubeconfigError {
  try {
    loadRestConfig({ kubeconfig: file, env: {} });
  } catch (e) {
    expect(e).toBeInstanceOf(KubeconfigError);
    return e as KubeconfigError;
  }
  throw new Error('loadRestConfig did not throw');
}

describe('certificate-authority is checked when the config is loaded', () => {
  const cases: Array<[string, string]> = [
    ['an empty file', ''],
    ['a file without a PEM block', 'this is not a certificate\n'],
    [
      'a PEM block that is not X.509',
      '-----BEGIN CERTIFICATE-----\nQ0EgQ0VSVA==\n-----END CERTIFICATE-----\n',
    ],
    [
      'a real certificate followed by a broken one',
      `${REAL_CA}-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n`,
    ],
  ];
  for (const [what, text] of cases) {
    it(`refuses ${what} in certificate-authority, naming the file and the field`, () => {
      const ca = path.join(dir, `ca-${what.replaceAll(' ', '-')}.crt`);
      fs.writeFileSync(ca, text);
      const file = kubeconfig(`cfg-${what.replaceAll(' ', '-')}`, `, certificate-authority: "${ca}"`);
      const e = loadError(file);
      expect(e.code).toBe('InvalidCertificate');
      expect(e.file).toBe(file);
      expect(e.field).toBe('clusters[k].certificate-authority');
      expect(e.message).toContain(ca);
    });
    // An empty *-data field means "not set" in client-go, so only non-empty data is checked.
    if (text === '') continue;
    it(`refuses ${what} in certificate-authority-data`, () => {
      const data = Buffer.from(text).toString('base64');
      const file = kubeconfig(
        `cfg-data-${what.replaceAll(' ', '-')}`,
        `, certificate-authority-data: "${data}"`,
      );
      const e = loadError(file);
      expect(e.code).toBe('InvalidCertificate');
      expect(e.field).toBe('clusters[k].certificate-authority-data');
    });
  }

  it('accepts a real CA certificate (file and inline data)', () => {
    const ca = path.join(dir, 'good-ca.crt');
    fs.writeFileSync(ca, REAL_CA);
    const fromFile = loadRestConfig({
      kubeconfig: kubeconfig('good-file', `, certificate-authority: "${ca}"`),
      env: {},
    });
    expect(fromFile.tlsClientConfig).toEqual({ caData: REAL_CA, caFile: ca });
    const inline = Buffer.from(REAL_CA).toString('base64');
    const fromData = loadRestConfig({
      kubeconfig: kubeconfig('good-data', `, certificate-authority-data: "${inline}"`),
      env: {},
    });
    expect(fromData.tlsClientConfig).toEqual({ caData: REAL_CA });
  });

  it('in a pod, an unusable ca.crt is a warning and the system roots are used (client-go logs it and goes on)', () => {
    const sa = fs.mkdtempSync(path.join(dir, 'sa-'));
    fs.writeFileSync(path.join(sa, 'token'), 'tok\n');
    fs.writeFileSync(path.join(sa, 'ca.crt'), 'garbage');
    const warnings: string[] = [];
    const config = inClusterConfig({
      env: { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' },
      serviceAccountDir: sa,
      onWarning: (m) => warnings.push(m),
    });
    expect(config.tlsClientConfig).toEqual({});
    expect(warnings).toEqual([
      `in-cluster: ${path.join(sa, 'ca.crt')} holds no PEM certificate block; using the system roots`,
    ]);
  });
});

function writePlugin(folder: string, name: string, token: string, delayMs = 0): string {
  fs.mkdirSync(folder, { recursive: true });
  const file = path.join(folder, name);
  fs.writeFileSync(
    file,
    `#!${process.execPath}
const info = JSON.parse(process.env.KUBERNETES_EXEC_INFO);
setTimeout(() => process.stdout.write(JSON.stringify({ apiVersion: info.apiVersion, kind: 'ExecCredential', status: { token: ${JSON.stringify(token)} } })), ${delayMs});
`,
  );
  fs.chmodSync(file, 0o755);
  return file;
}

const execUser = (command: string) =>
  `{ exec: { apiVersion: client.authentication.k8s.io/v1, command: ${command}, interactiveMode: Never } }`;

describe('exec plugins', () => {
  it('runs the binary found on the PATH given to loadRestConfig, not the one on the process PATH', async () => {
    const chosen = path.join(dir, 'bin-chosen');
    const other = path.join(dir, 'bin-other');
    writePlugin(chosen, 'kubeloop-cred', 'from-chosen-path');
    writePlugin(other, 'kubeloop-cred', 'from-process-path');
    const savedPath = process.env.PATH;
    process.env.PATH = `${other}${path.delimiter}${savedPath ?? ''}`;
    try {
      const config = loadRestConfig({
        kubeconfig: kubeconfig('exec-path', '', execUser('kubeloop-cred')),
        env: { PATH: chosen },
      });
      expect(config.execProvider?.resolvedCommand).toBe(path.join(chosen, 'kubeloop-cred'));
      const creds = await credentialProviderFor(config, { execTimeoutMs: 10_000 }).get();
      expect(creds.headers.Authorization).toBe('Bearer from-chosen-path');
    } finally {
      process.env.PATH = savedPath;
    }
  });

  it('kills a plugin that does not finish within execTimeoutMs and fails with ExecTimeout', async () => {
    const file = writePlugin(path.join(dir, 'bin-slow'), 'slow-cred', 'never-seen', 60_000);
    const config: RestConfig = {
      host: 'https://127.0.0.1:6443',
      tlsClientConfig: {},
      qps: 20,
      burst: 30,
      timeoutMs: 0,
      userAgent: 'ua',
      execProvider: {
        apiVersion: 'client.authentication.k8s.io/v1',
        command: file,
        interactiveMode: 'Never',
      },
    };
    const started = Date.now();
    const e = await credentialProviderFor(config, { execTimeoutMs: 300 })
      .get()
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(e).toBeInstanceOf(CredentialError);
    expect((e as CredentialError).code).toBe('ExecTimeout');
    expect((e as Error).message).toBe(`exec plugin ${file} did not finish within 300 ms and was killed`);
    // Bounded by the timeout, not by the plugin's 60 s.
    expect(Date.now() - started).toBeLessThan(30_000);
  });
});

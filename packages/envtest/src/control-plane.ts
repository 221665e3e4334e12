/**
 * Real control plane binaries (KUBEBUILDER_ASSETS mode), started the way controller-runtime's
 * `pkg/internal/testing/controlplane` does: etcd on free loopback ports with a temporary data dir, then
 * kube-apiserver with a generated serving certificate, a static token file and a client CA for
 * authentication, service-account signing keys, and a wait on /healthz. Only used when the binaries exist.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { RestConfig } from '@kubeloop/config';
import { CertificateAuthority } from './certs.js';
import { EnvtestError } from './errors.js';
import { writeKubeconfig } from './kubeconfig.js';
import { restRequest } from './rest.js';

/** Options of a {@link ControlPlane}. */
export interface ControlPlaneOptions {
  readonly apiServerPath: string;
  readonly etcdPath: string;
  /** Extra kube-apiserver flags (`--name=value`), appended after the defaults. */
  readonly apiServerFlags?: readonly string[];
  readonly etcdFlags?: readonly string[];
  /** How long to wait for /healthz (ms, default 60000, as controller-runtime's default start timeout). */
  readonly startTimeoutMs?: number;
  /** Pipe the processes' output to this process's stderr. */
  readonly attachOutput?: boolean;
  /**
   * Keep each process's output in a file of the control plane's temp directory (`etcd.log`,
   * `kube-apiserver.log`, appended across restarts) instead of discarding it; ignored with `attachOutput`.
   */
  readonly logToFiles?: boolean;
}

/** One of the two processes of a {@link ControlPlane}. */
export type ControlPlaneProcess = 'etcd' | 'kube-apiserver';

/** Paths of the binaries from KUBEBUILDER_ASSETS or TEST_ASSET_KUBE_APISERVER + TEST_ASSET_ETCD, if usable. */
export function controlPlaneAssetsFromEnv(
  env: NodeJS.ProcessEnv,
  assetsDir?: string,
): { apiServerPath: string; etcdPath: string } | undefined {
  const dir = assetsDir ?? env.KUBEBUILDER_ASSETS;
  const apiServerPath = env.TEST_ASSET_KUBE_APISERVER ?? (dir ? join(dir, 'kube-apiserver') : undefined);
  const etcdPath = env.TEST_ASSET_ETCD ?? (dir ? join(dir, 'etcd') : undefined);
  if (!apiServerPath || !etcdPath) return undefined;
  if (!dir && !(env.TEST_ASSET_KUBE_APISERVER && env.TEST_ASSET_ETCD)) return undefined;
  return { apiServerPath, etcdPath };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** etcd + kube-apiserver processes. */
export class ControlPlane {
  readonly options: ControlPlaneOptions;
  #dir: string | undefined;
  #etcd: ChildProcess | undefined;
  #apiServer: ChildProcess | undefined;
  #config: RestConfig | undefined;
  #kubeconfigPath: string | undefined;
  #etcdArgs: string[] = [];
  #apiServerArgs: string[] = [];
  #etcdUrl: string | undefined;

  constructor(options: ControlPlaneOptions) {
    this.options = options;
  }

  get config(): RestConfig {
    if (!this.#config) throw new EnvtestError('ENVTEST_NOT_STARTED', 'the control plane is not started');
    return this.#config;
  }

  get kubeconfigPath(): string {
    if (!this.#kubeconfigPath)
      throw new EnvtestError('ENVTEST_NOT_STARTED', 'the control plane is not started');
    return this.#kubeconfigPath;
  }

  /** The etcd client URL (`http://127.0.0.1:<port>`), e.g. for `etcdctl --endpoints`. @throws before start(). */
  get etcdUrl(): string {
    if (!this.#etcdUrl) throw new EnvtestError('ENVTEST_NOT_STARTED', 'the control plane is not started');
    return this.#etcdUrl;
  }

  /** The temporary directory holding etcd's data, the certificates and the logs (undefined when stopped). */
  get dataDir(): string | undefined {
    return this.#dir;
  }

  /**
   * The operating-system process id of `which`, or undefined when it is not running. With it a test can
   * make the faults of production: `process.kill(pid, 'SIGSTOP')` pauses the API server (a black hole for
   * every client) until `'SIGCONT'`.
   */
  pid(which: ControlPlaneProcess): number | undefined {
    const p = which === 'etcd' ? this.#etcd : this.#apiServer;
    return p && p.exitCode === null && p.signalCode === null ? p.pid : undefined;
  }

  #spawn(cmd: string, args: string[], name: ControlPlaneProcess): ChildProcess {
    let out: 'inherit' | 'ignore' | number = this.options.attachOutput ? 'inherit' : 'ignore';
    let fd: number | undefined;
    if (!this.options.attachOutput && this.options.logToFiles && this.#dir) {
      fd = openSync(join(this.#dir, `${name}.log`), 'a', 0o600);
      out = fd;
    }
    const child = spawn(cmd, args, { stdio: ['ignore', out, out] });
    // the child holds its own copy of the descriptor
    if (fd !== undefined) closeSync(fd);
    return child;
  }

  async #waitHealthy(what: string): Promise<void> {
    const config = this.#config!;
    const deadline = Date.now() + (this.options.startTimeoutMs ?? 60_000);
    for (;;) {
      for (const [name, p] of [
        ['etcd', this.#etcd],
        ['kube-apiserver', this.#apiServer],
      ] as const)
        if (!p || p.exitCode !== null || p.signalCode !== null)
          throw new EnvtestError(
            'ENVTEST_START_FAILED',
            `${name} exited with ${p?.exitCode ?? p?.signalCode ?? 'no process'} during ${what}`,
          );
      try {
        const res = await restRequest(config, 'GET', '/healthz', undefined, { timeoutMs: 2000 });
        if (res.status === 200) return;
      } catch {
        // not up yet
      }
      if (Date.now() > deadline)
        throw new EnvtestError(
          'ENVTEST_START_FAILED',
          `kube-apiserver did not become healthy in time (${what})`,
        );
      await delay(100);
    }
  }

  /**
   * Stop one process and start it again with the same flags, data directory and ports, then wait until
   * kube-apiserver answers /healthz again — an API server or etcd restart as in production, state kept.
   * `signal` is how the process is stopped: `SIGKILL` (default: a crash) or `SIGTERM` (a graceful stop; SIGKILL
   * after 10 s). A paused process (SIGSTOP) is continued first so it can receive the signal.
   * @throws EnvtestError `ENVTEST_NOT_STARTED` before start(); `ENVTEST_START_FAILED` when the process does not
   *   come back healthy within `startTimeoutMs`.
   */
  async restart(which: ControlPlaneProcess, signal: 'SIGKILL' | 'SIGTERM' = 'SIGKILL'): Promise<void> {
    if (!this.#dir || !this.#config)
      throw new EnvtestError('ENVTEST_NOT_STARTED', 'the control plane is not started');
    const p = which === 'etcd' ? this.#etcd : this.#apiServer;
    if (p?.pid !== undefined && p.exitCode === null && p.signalCode === null) {
      try {
        process.kill(p.pid, 'SIGCONT');
      } catch {
        // already gone
      }
    }
    await stopProcess(p, signal);
    if (which === 'etcd') this.#etcd = this.#spawn(this.options.etcdPath, this.#etcdArgs, 'etcd');
    else this.#apiServer = this.#spawn(this.options.apiServerPath, this.#apiServerArgs, 'kube-apiserver');
    await this.#waitHealthy(`the restart of ${which}`);
  }

  /**
   * Start etcd and kube-apiserver and wait until /healthz answers 200.
   * @throws EnvtestError `ENVTEST_START_FAILED` when a binary is missing, exits, or health never comes.
   */
  async start(): Promise<void> {
    const { apiServerPath, etcdPath } = this.options;
    for (const p of [apiServerPath, etcdPath])
      if (!existsSync(p))
        throw new EnvtestError('ENVTEST_START_FAILED', `control plane binary not found: ${p}`);
    const dir = await mkdtemp(join(tmpdir(), 'kubeloop-controlplane-'));
    this.#dir = dir;
    const etcdPort = await freePort();
    const peerPort = await freePort();
    const apiPort = await freePort();
    this.#etcdUrl = `http://127.0.0.1:${etcdPort}`;
    // The peer URL is advertised as well as listened on, so etcd on a busy box never collides with another
    // etcd's default peer port (2380), e.g. a second control plane on the same host.
    this.#etcdArgs = [
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=http://127.0.0.1:${etcdPort}`,
      `--advertise-client-urls=http://127.0.0.1:${etcdPort}`,
      `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-cluster=default=http://127.0.0.1:${peerPort}`,
      '--unsafe-no-fsync=true',
      ...(this.options.etcdFlags ?? []),
    ];
    this.#etcd = this.#spawn(etcdPath, this.#etcdArgs, 'etcd');
    const ca = await CertificateAuthority.create('kubeloop-controlplane-ca');
    const serving = await ca.issueServing(['127.0.0.1', 'localhost']);
    await writeFile(join(dir, 'ca.crt'), ca.certPem, { mode: 0o600 });
    await writeFile(join(dir, 'apiserver.crt'), serving.certPem, { mode: 0o600 });
    await writeFile(join(dir, 'apiserver.key'), serving.keyPem, { mode: 0o600 });
    const sa = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    });
    await writeFile(join(dir, 'sa.pub'), sa.publicKey, { mode: 0o600 });
    await writeFile(join(dir, 'sa.key'), sa.privateKey, { mode: 0o600 });
    const token = randomBytes(24).toString('base64url');
    await writeFile(join(dir, 'tokens.csv'), `${token},envtest-admin,envtest-admin,"system:masters"\n`, {
      mode: 0o600,
    });
    this.#apiServerArgs = [
      `--etcd-servers=http://127.0.0.1:${etcdPort}`,
      `--cert-dir=${dir}`,
      `--tls-cert-file=${join(dir, 'apiserver.crt')}`,
      `--tls-private-key-file=${join(dir, 'apiserver.key')}`,
      `--client-ca-file=${join(dir, 'ca.crt')}`,
      `--token-auth-file=${join(dir, 'tokens.csv')}`,
      `--secure-port=${apiPort}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      '--service-cluster-ip-range=10.0.0.0/24',
      '--allow-privileged=true',
      '--authorization-mode=RBAC',
      '--disable-admission-plugins=ServiceAccount',
      `--service-account-issuer=https://127.0.0.1:${apiPort}/`,
      `--service-account-key-file=${join(dir, 'sa.pub')}`,
      `--service-account-signing-key-file=${join(dir, 'sa.key')}`,
      ...(this.options.apiServerFlags ?? []),
    ];
    this.#apiServer = this.#spawn(apiServerPath, this.#apiServerArgs, 'kube-apiserver');
    const host = `https://127.0.0.1:${apiPort}`;
    this.#config = {
      host,
      tlsClientConfig: { caData: ca.certPem },
      bearerToken: token,
      qps: 1000,
      burst: 2000,
      timeoutMs: 0,
      userAgent: 'kubeloop-envtest',
    };
    try {
      await this.#waitHealthy('start');
    } catch (e) {
      await this.stop();
      throw e;
    }
    this.#kubeconfigPath = join(dir, 'kubeconfig');
    await writeKubeconfig(this.#kubeconfigPath, { server: host, caPem: ca.certPem, token });
  }

  /** Stop both processes (SIGTERM, then SIGKILL after 10 s; a paused one is continued first) and delete the temp directory. */
  async stop(): Promise<void> {
    for (const p of [this.#apiServer, this.#etcd])
      if (p?.pid !== undefined && p.exitCode === null && p.signalCode === null)
        try {
          process.kill(p.pid, 'SIGCONT');
        } catch {
          // already gone
        }
    await stopProcess(this.#apiServer, 'SIGTERM');
    await stopProcess(this.#etcd, 'SIGTERM');
    this.#apiServer = undefined;
    this.#etcd = undefined;
    if (this.#dir) await rm(this.#dir, { recursive: true, force: true });
    this.#dir = undefined;
  }
}

/** Stop a child (`signal`, then SIGKILL after 10 s) and wait for its exit. */
async function stopProcess(p: ChildProcess | undefined, signal: NodeJS.Signals): Promise<void> {
  if (!p || p.exitCode !== null || p.signalCode !== null) return;
  const exited = new Promise<void>((r) => p.once('exit', () => r()));
  p.kill(signal);
  const t = setTimeout(() => p.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(t);
}

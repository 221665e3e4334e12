import { spawn } from 'node:child_process';
import { stripVTControlCharacters } from 'node:util';
import { CredentialError } from './errors.js';
import type { ExecConfig, RequestCredentials, RestConfig } from './rest-config.js';

/** What an exec plugin returned. */
export interface ExecCredentialResult {
  readonly token?: string;
  readonly clientCertificate?: { readonly certData: string; readonly keyData: string };
  /** Milliseconds since the epoch; absent = valid until a 401. */
  readonly expiresAt?: number;
}

/** Options of {@link ExecCredentialSource}. */
export interface ExecCredentialSourceOptions {
  readonly now?: () => number;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly stdinIsTerminal?: boolean;
  /**
   * How long one plugin run may take, in milliseconds, before it is killed and the waiting requests fail
   * with `CredentialError` `ExecTimeout`. Default {@link DEFAULT_EXEC_TIMEOUT_MS} (60 s); 0 disables.
   * client-go sets no bound, so a hung plugin stalls every request of its config; kubeloop bounds it.
   */
  readonly timeoutMs?: number;
}

/** Default bound of one exec plugin run: 60 000 ms. */
export const DEFAULT_EXEC_TIMEOUT_MS = 60_000;

/** Observe exec plugin runs (tests, diagnostics). Never sees the credential. */
export type ExecRunListener = (event: { command: string; durationMs: number; ok: boolean }) => void;

function clusterInfo(config: RestConfig, exec: ExecConfig): Record<string, unknown> {
  const tls = config.tlsClientConfig;
  return {
    server: config.host,
    ...(tls.serverName ? { 'tls-server-name': tls.serverName } : {}),
    ...(tls.insecure ? { 'insecure-skip-tls-verify': true } : {}),
    ...(tls.caData ? { 'certificate-authority-data': Buffer.from(tls.caData).toString('base64') } : {}),
    ...(config.proxyUrl ? { 'proxy-url': config.proxyUrl } : {}),
    ...(config.disableCompression ? { 'disable-compression': true } : {}),
    ...(exec.clusterConfig !== undefined ? { config: exec.clusterConfig } : {}),
  };
}

/**
 * Runs a client-go exec credential plugin (`client.authentication.k8s.io/v1` or `v1beta1`) and caches
 * its result (client-go `plugin/pkg/client/auth/exec`): one run at a time however many callers wait
 * (single flight), the credential reused until `expirationTimestamp`, and re-run after a 401 at most once
 * per credential. The plugin gets `args`, `env` on top of the inherited environment, and
 * `KUBERNETES_EXEC_INFO` (an ExecCredential with `spec.interactive` and, with `provideClusterInfo`,
 * `spec.cluster`). The binary run is `resolvedCommand` (found on the loader's `PATH`) when the config has
 * one. A run that takes longer than `timeoutMs` (default 60 s) is killed and fails with `ExecTimeout`.
 */
export class ExecCredentialSource {
  private current: ExecCredentialResult | undefined;
  private inflight: Promise<ExecCredentialResult> | undefined;
  private readonly now: () => number;
  private static listeners = new Set<ExecRunListener>();

  constructor(
    private readonly exec: ExecConfig,
    private readonly config: RestConfig,
    private readonly options: ExecCredentialSourceOptions = {},
  ) {
    this.now = options.now ?? Date.now;
  }

  /** Subscribe to plugin runs (all sources). Returns an unsubscribe function. */
  static onRun(listener: ExecRunListener): () => void {
    ExecCredentialSource.listeners.add(listener);
    return () => ExecCredentialSource.listeners.delete(listener);
  }

  /** The cached credential if still valid, else the result of one (shared) plugin run. */
  get(): Promise<ExecCredentialResult> {
    const c = this.current;
    if (c && (c.expiresAt === undefined || c.expiresAt > this.now())) return Promise.resolve(c);
    return this.refresh();
  }

  /**
   * A request made with `used` got 401. If `used` is the current credential it is dropped and the plugin
   * runs again; resolves `true` when a different credential is now available.
   */
  async onUnauthorized(used: RequestCredentials): Promise<boolean> {
    const c = this.current;
    if (c && this.matches(c, used)) {
      this.current = undefined;
      try {
        const fresh = await this.refresh();
        return !this.matches(fresh, used);
      } catch {
        return false;
      }
    }
    // Someone already replaced the credential that failed: retry with the new one.
    return this.current !== undefined || this.inflight !== undefined;
  }

  private matches(c: ExecCredentialResult, used: RequestCredentials): boolean {
    if (c.token !== undefined) return used.headers.Authorization === `Bearer ${c.token}`;
    return c.clientCertificate?.certData === used.clientCertificate?.certData;
  }

  private refresh(): Promise<ExecCredentialResult> {
    this.inflight ??= this.run()
      .then((r) => {
        this.current = r;
        return r;
      })
      .finally(() => {
        this.inflight = undefined;
      });
    return this.inflight;
  }

  private interactive(): boolean {
    const tty = this.options.stdinIsTerminal ?? Boolean(process.stdin.isTTY);
    switch (this.exec.interactiveMode) {
      case 'Never':
        return false;
      case 'Always':
        if (!tty) {
          throw new CredentialError(
            'ExecInteractiveRequired',
            `exec plugin ${this.exec.command} needs an interactive terminal (interactiveMode: Always) but stdin is not one`,
          );
        }
        return true;
      default:
        return tty;
    }
  }

  private run(): Promise<ExecCredentialResult> {
    const exec = this.exec;
    const started = this.now();
    let interactive: boolean;
    try {
      interactive = this.interactive();
    } catch (e) {
      return Promise.reject(e);
    }
    const info = {
      apiVersion: exec.apiVersion,
      kind: 'ExecCredential',
      spec: {
        interactive,
        ...(exec.provideClusterInfo ? { cluster: clusterInfo(this.config, exec) } : {}),
      },
    };
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(this.options.env ?? process.env)) if (v !== undefined) env[k] = v;
    for (const e of exec.env ?? []) env[e.name] = e.value;
    env.KUBERNETES_EXEC_INFO = JSON.stringify(info);
    const report = (ok: boolean) => {
      for (const l of ExecCredentialSource.listeners)
        l({ command: exec.command, durationMs: this.now() - started, ok });
    };

    return new Promise<ExecCredentialResult>((resolve, reject) => {
      const fail = (e: CredentialError) => {
        report(false);
        reject(e);
      };
      const child = spawn(exec.resolvedCommand ?? exec.command, [...(exec.args ?? [])], {
        env,
        stdio: [interactive ? 'inherit' : 'ignore', 'pipe', 'inherit'],
        windowsHide: true,
      });
      const timeoutMs = this.options.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS;
      let timedOut = false;
      const timer =
        timeoutMs > 0
          ? setTimeout(() => {
              timedOut = true;
              child.kill('SIGKILL');
            }, timeoutMs)
          : undefined;
      timer?.unref();
      const chunks: Buffer[] = [];
      child.stdout?.on('data', (c: Buffer) => chunks.push(c));
      child.on('error', (e: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        const hint = exec.installHint ? `\n${stripVTControlCharacters(exec.installHint)}` : '';
        if (e.code === 'ENOENT')
          fail(new CredentialError('ExecNotFound', `exec plugin ${exec.command}: not found${hint}`));
        else
          fail(
            new CredentialError(
              'ExecFailed',
              `exec plugin ${exec.command}: cannot start (${e.code ?? 'error'})`,
            ),
          );
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        if (timedOut) {
          fail(
            new CredentialError(
              'ExecTimeout',
              `exec plugin ${exec.command} did not finish within ${timeoutMs} ms and was killed`,
            ),
          );
          return;
        }
        if (code !== 0) {
          fail(
            new CredentialError(
              'ExecFailed',
              `exec plugin ${exec.command} failed with ${signal ? `signal ${signal}` : `exit code ${code}`}`,
            ),
          );
          return;
        }
        try {
          const result = this.parse(Buffer.concat(chunks).toString('utf8'));
          report(true);
          resolve(result);
        } catch (e) {
          fail(e as CredentialError);
        }
      });
    });
  }

  private parse(stdout: string): ExecCredentialResult {
    const bad = (why: string) =>
      new CredentialError('ExecInvalidOutput', `exec plugin ${this.exec.command}: ${why}`);
    let obj: Record<string, unknown>;
    try {
      obj = JSON.parse(stdout) as Record<string, unknown>;
    } catch {
      throw bad('output is not JSON');
    }
    if (obj === null || typeof obj !== 'object') throw bad('output is not an ExecCredential');
    if (obj.kind !== 'ExecCredential') throw bad(`kind is "${String(obj.kind)}", want ExecCredential`);
    if (obj.apiVersion !== this.exec.apiVersion) {
      throw bad(`apiVersion is "${String(obj.apiVersion)}", want ${this.exec.apiVersion}`);
    }
    const status = obj.status as Record<string, unknown> | undefined;
    if (!status || typeof status !== 'object') throw bad('status is missing');
    let expiresAt: number | undefined;
    if (status.expirationTimestamp !== undefined && status.expirationTimestamp !== null) {
      expiresAt = Date.parse(String(status.expirationTimestamp));
      if (Number.isNaN(expiresAt)) throw bad('status.expirationTimestamp is not a timestamp');
    }
    const token = typeof status.token === 'string' && status.token !== '' ? status.token : undefined;
    const cert = typeof status.clientCertificateData === 'string' ? status.clientCertificateData : '';
    const key = typeof status.clientKeyData === 'string' ? status.clientKeyData : '';
    if ((cert === '') !== (key === '')) {
      throw bad('status.clientCertificateData and status.clientKeyData must both be set');
    }
    if (!token && !cert) throw bad('status has neither a token nor a client certificate');
    return {
      ...(token ? { token } : {}),
      ...(cert ? { clientCertificate: { certData: cert, keyData: key } } : {}),
      ...(expiresAt !== undefined ? { expiresAt } : {}),
    };
  }
}

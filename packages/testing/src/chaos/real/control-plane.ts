/**
 * A real control plane for chaos runs: kube-apiserver + etcd started from a folder of binaries (the
 * `KUBEBUILDER_ASSETS` convention) on free loopback ports and a temporary data directory, with a
 * {@link FaultProxy} in front of the API server, and the faults of production: the API server paused
 * (SIGSTOP/SIGCONT) or killed and restarted, etcd restarted, etcd compacted (old resourceVersions then answer
 * 410 Gone), and network faults on the proxy.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { RestConfig } from '@kubeloop/config';
import { withDeadline } from '@kubeloop/core';
import { ControlPlane } from '@kubeloop/envtest';
import { FaultProxy } from './proxy.js';

/** Options of {@link RealControlPlane.start}. */
export interface RealControlPlaneOptions {
  /** A folder holding `kube-apiserver` and `etcd` (as `KUBEBUILDER_ASSETS`). */
  readonly assetsDir: string;
  /** Extra kube-apiserver flags (`--name=value`). */
  readonly apiServerFlags?: readonly string[];
  /** Keep the processes' output in `etcd.log` / `kube-apiserver.log` of the data directory. Default false. */
  readonly logToFiles?: boolean;
  /** **Milliseconds** to wait for /healthz at start and after each restart. Default 120,000. */
  readonly startTimeoutMs?: number;
}

/**
 * The folder's binaries, or why it cannot be used.
 * @returns `undefined` when both `kube-apiserver` and `etcd` are in `dir`, else a sentence naming what is missing.
 */
export function realControlPlaneAssetsMissing(dir: string | undefined): string | undefined {
  if (!dir) return 'no assets folder given (a folder with kube-apiserver and etcd, as KUBEBUILDER_ASSETS)';
  const missing = ['kube-apiserver', 'etcd'].filter((b) => !existsSync(join(dir, b)));
  return missing.length ? `${dir} has no ${missing.join(' and ')}` : undefined;
}

/** A running real control plane with its fault proxy. */
export class RealControlPlane {
  /** The processes (pids, restarts, etcd URL). */
  readonly controlPlane: ControlPlane;
  /** The TCP proxy in front of the API server; {@link RealControlPlane.proxiedConfig} goes through it. */
  readonly proxy: FaultProxy;
  #paused = false;

  private constructor(controlPlane: ControlPlane, proxy: FaultProxy) {
    this.controlPlane = controlPlane;
    this.proxy = proxy;
  }

  /**
   * Starts etcd and kube-apiserver from `options.assetsDir` and the proxy in front of the API server.
   * @throws Error naming what the folder lacks; EnvtestError `ENVTEST_START_FAILED` when a process exits or the
   *   server is not healthy in time.
   */
  static async start(options: RealControlPlaneOptions): Promise<RealControlPlane> {
    const missing = realControlPlaneAssetsMissing(options.assetsDir);
    if (missing) throw new Error(`real control plane: ${missing}`);
    const cp = new ControlPlane({
      apiServerPath: join(options.assetsDir, 'kube-apiserver'),
      etcdPath: join(options.assetsDir, 'etcd'),
      apiServerFlags: options.apiServerFlags ?? [],
      logToFiles: options.logToFiles ?? false,
      startTimeoutMs: options.startTimeoutMs ?? 120_000,
    });
    await cp.start();
    let proxy: FaultProxy;
    try {
      proxy = await FaultProxy.start({ targetPort: Number(new URL(cp.config.host).port) });
    } catch (e) {
      await cp.stop();
      throw e;
    }
    return new RealControlPlane(cp, proxy);
  }

  /** The admin's config, straight to the API server (no proxy faults). */
  get config(): RestConfig {
    return this.controlPlane.config;
  }

  /** The admin's credentials through the proxy: the proxy's network faults hit this config's requests. */
  proxiedConfig(): RestConfig {
    const c = this.controlPlane.config;
    return { ...c, host: `https://127.0.0.1:${this.proxy.port}` };
  }

  /** Whether the API server is paused now. */
  get paused(): boolean {
    return this.#paused;
  }

  /** SIGSTOP to kube-apiserver: every connection open to it goes silent (a black hole) until {@link resumeApiServer}. */
  pauseApiServer(): void {
    const pid = this.controlPlane.pid('kube-apiserver');
    if (pid === undefined) throw new Error('kube-apiserver is not running');
    process.kill(pid, 'SIGSTOP');
    this.#paused = true;
  }

  /** SIGCONT to kube-apiserver. A no-op when it is not paused. */
  resumeApiServer(): void {
    if (!this.#paused) return;
    const pid = this.controlPlane.pid('kube-apiserver');
    if (pid !== undefined) process.kill(pid, 'SIGCONT');
    this.#paused = false;
  }

  /** Kills kube-apiserver (SIGKILL: a crash) and starts it again on the same etcd; resolves once it is healthy. */
  async restartApiServer(): Promise<void> {
    this.#paused = false;
    await this.controlPlane.restart('kube-apiserver', 'SIGKILL');
  }

  /** Kills etcd (SIGKILL) and starts it again on its data; resolves once kube-apiserver is healthy again. */
  async restartEtcd(): Promise<void> {
    this.resumeApiServer();
    await this.controlPlane.restart('etcd', 'SIGKILL');
  }

  /**
   * Compacts etcd at its current revision (what `etcdctl compact $(rev)` does, through etcd's JSON gateway):
   * every older resourceVersion is gone, so a watch or a paged list's continue from one answers 410 Gone.
   * Compacting again at a revision already compacted (nothing written since) is not an error.
   * @returns the revision compacted at.
   * @throws Error with etcd's answer when the gateway refuses.
   */
  async compactEtcd(): Promise<number> {
    const url = this.controlPlane.etcdUrl;
    const post = async (path: string, body: unknown) => {
      // core's deadline, not AbortSignal.timeout: Node may collect a timeout signal nobody references
      const deadline = withDeadline(undefined, 10_000);
      try {
        const res = await fetch(`${url}${path}`, {
          method: 'POST',
          body: JSON.stringify(body),
          signal: deadline.signal,
        });
        const text = await res.text();
        if (!res.ok) throw new Error(`etcd ${path} answered ${res.status}: ${text.slice(0, 200)}`);
        return JSON.parse(text) as { header?: { revision?: string } };
      } finally {
        deadline.dispose();
      }
    };
    // a range read of one key gives the store's current revision in its header
    const range = await post('/v3/kv/range', { key: Buffer.from('/').toString('base64'), limit: 1 });
    const revision = Number(range.header?.revision);
    if (!Number.isInteger(revision) || revision < 1)
      throw new Error(`etcd gave no revision: ${JSON.stringify(range).slice(0, 200)}`);
    try {
      await post('/v3/kv/compaction', { revision: String(revision) });
    } catch (e) {
      // nothing was written since the last compaction at this revision: it is compacted already
      if (!/required revision has been compacted/.test((e as Error).message)) throw e;
    }
    return revision;
  }

  /** Ends every lasting fault: the API server continued, the proxy's delay and partition cleared. */
  clearFaults(): void {
    this.resumeApiServer();
    this.proxy.clear();
  }

  /** Stops the proxy and both processes and deletes the data directory. */
  async stop(): Promise<void> {
    this.resumeApiServer();
    await this.proxy.close().catch(() => {});
    await this.controlPlane.stop();
  }
}

/**
 * `Environment`: controller-runtime's envtest.Environment for TypeScript. Three modes:
 * - embedded (default): starts the in-process {@link ApiServer};
 * - `useExistingCluster` / `USE_EXISTING_CLUSTER=true`: uses the current kubeconfig instead;
 * - `KUBEBUILDER_ASSETS` (or `TEST_ASSET_KUBE_APISERVER` + `TEST_ASSET_ETCD`): starts real etcd and
 *   kube-apiserver binaries as controller-runtime does.
 * In every mode CRDs from `crdDirectoryPaths` / `crds` are installed and awaited (Established, then in discovery).
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { type RestConfig, withRedaction } from '@kubeloop/config';
import { parseAllDocuments } from 'yaml';
import type { ApiServer, ApiServerOptions } from './api-server.js';
import { startApiServer } from './api-server-start.js';
import { ControlPlane, type ControlPlaneOptions, controlPlaneAssetsFromEnv } from './control-plane.js';
import { EnvtestError } from './errors.js';
import { loadCurrentKubeconfig } from './kubeconfig.js';
import type { KObject } from './resource-type.js';
import { restRequest } from './rest.js';

/** Options of an {@link Environment}. */
export interface EnvironmentOptions {
  /** Directories (or files) with CRD manifests (.yaml, .yml, .json; multi-document YAML allowed). */
  readonly crdDirectoryPaths?: readonly string[];
  /** CRD objects to install in addition to the files. */
  readonly crds?: readonly KObject[];
  /** Fail when a CRD path does not exist (default false, as upstream). */
  readonly errorIfCrdPathMissing?: boolean;
  /** Use the current kubeconfig instead of starting a server. Default: `USE_EXISTING_CLUSTER === 'true'`. */
  readonly useExistingCluster?: boolean;
  /** Directory with `kube-apiserver` and `etcd` (default: `KUBEBUILDER_ASSETS`). */
  readonly binaryAssetsDirectory?: string;
  /** Options of the embedded server. */
  readonly server?: ApiServerOptions;
  /** Options of the real control plane (KUBEBUILDER_ASSETS mode). */
  readonly controlPlane?: Omit<ControlPlaneOptions, 'apiServerPath' | 'etcdPath'>;
  /** How long to wait for CRDs to become Established (ms, default 10000). */
  readonly crdInstallTimeoutMs?: number;
  /** Environment variables to read the mode from (default `process.env`). */
  readonly env?: NodeJS.ProcessEnv;
}

/** Which mode an Environment runs in. */
export type EnvironmentMode = 'embedded' | 'existing-cluster' | 'binaries';

/** A test environment: start() gives a RestConfig and a kubeconfig path; stop() tears it down. */
export class Environment {
  readonly options: EnvironmentOptions;
  #config: RestConfig | undefined;
  #kubeconfigPath: string | undefined;
  #server: ApiServer | undefined;
  #controlPlane: ControlPlane | undefined;
  #mode: EnvironmentMode | undefined;
  /** The start in progress or done; a second start() joins it (controller-runtime: Start on a started process is a no-op). */
  #starting: Promise<RestConfig> | undefined;

  constructor(options: EnvironmentOptions = {}) {
    this.options = options;
  }

  /** The RestConfig of the running environment. @throws EnvtestError `ENVTEST_NOT_STARTED` before start(). */
  get config(): RestConfig {
    if (!this.#config) throw new EnvtestError('ENVTEST_NOT_STARTED', 'the environment is not started');
    return this.#config;
  }

  /** Path of a kubeconfig (mode 0600) for kubectl and other processes. @throws before start(). */
  get kubeconfigPath(): string {
    if (!this.#kubeconfigPath)
      throw new EnvtestError('ENVTEST_NOT_STARTED', 'the environment is not started');
    return this.#kubeconfigPath;
  }

  /** The in-process server (undefined with an existing cluster or real binaries). */
  get server(): ApiServer | undefined {
    return this.#server;
  }

  /** The mode chosen at start(). */
  get mode(): EnvironmentMode | undefined {
    return this.#mode;
  }

  /**
   * Start the environment (like controller-runtime's `(*Environment).Start`): pick the mode, start or
   * connect, install CRDs and wait until they are Established and listed in discovery.
   * Calling it again while it is starting or started starts nothing more and resolves to the same RestConfig
   * (controller-runtime's process `State.Start` returns at once when the process is already ready), so one
   * stop() tears everything down; after stop() a new start() starts afresh.
   * @throws EnvtestError `ENVTEST_START_FAILED`, `ENVTEST_KUBECONFIG`, `ENVTEST_CRD_INSTALL`.
   */
  start(): Promise<RestConfig> {
    if (this.#starting) return this.#starting;
    const starting = this.#start();
    this.#starting = starting;
    // a failed start leaves nothing behind (it stopped what it began), so the next start() tries again
    starting.catch(() => {
      if (this.#starting === starting) this.#starting = undefined;
    });
    return starting;
  }

  async #start(): Promise<RestConfig> {
    const env = this.options.env ?? process.env;
    const useExisting = this.options.useExistingCluster ?? env.USE_EXISTING_CLUSTER === 'true';
    const assets = controlPlaneAssetsFromEnv(env, this.options.binaryAssetsDirectory);
    if (useExisting) {
      const { config, path } = await loadCurrentKubeconfig(env);
      this.#config = config;
      this.#kubeconfigPath = path;
      this.#mode = 'existing-cluster';
    } else if (assets) {
      const cp = new ControlPlane({ ...this.options.controlPlane, ...assets });
      await cp.start();
      this.#controlPlane = cp;
      this.#config = cp.config;
      this.#kubeconfigPath = cp.kubeconfigPath;
      this.#mode = 'binaries';
    } else {
      const server = await startApiServer(this.options.server);
      this.#server = server;
      this.#kubeconfigPath = server.kubeconfigPath;
      this.#config = {
        host: server.url,
        tlsClientConfig: { caData: server.caPem },
        bearerToken: server.token,
        qps: 1000,
        burst: 2000,
        timeoutMs: 0,
        userAgent: 'kubeloop-envtest',
      };
      this.#mode = 'embedded';
    }
    // Like every RestConfig @kubeloop/config builds: frozen, and its token/key redacted in toString,
    // toJSON and util.inspect, so logging the config never leaks the admin credential.
    this.#config = withRedaction({ ...this.#config! });
    try {
      await this.#installCrds();
    } catch (e) {
      await this.#stopStarted();
      throw e;
    }
    return this.#config;
  }

  async #readCrdFiles(): Promise<KObject[]> {
    const out: KObject[] = [];
    for (const p of this.options.crdDirectoryPaths ?? []) {
      let files: string[];
      try {
        const st = await stat(p);
        files = st.isDirectory() ? (await readdir(p)).sort().map((f) => join(p, f)) : [p];
      } catch (e) {
        if (this.options.errorIfCrdPathMissing)
          throw new EnvtestError('ENVTEST_CRD_INSTALL', `CRD path ${p} does not exist`, { cause: e });
        continue;
      }
      for (const f of files) {
        if (!['.yaml', '.yml', '.json'].includes(extname(f))) continue;
        const text = await readFile(f, 'utf8');
        for (const doc of parseAllDocuments(text)) {
          if (doc.errors.length > 0)
            throw new EnvtestError('ENVTEST_CRD_INSTALL', `cannot parse ${f}: ${doc.errors[0]!.message}`);
          const o = doc.toJSON() as KObject | null;
          if (o && o.kind === 'CustomResourceDefinition') out.push(o);
        }
      }
    }
    return [...out, ...(this.options.crds ?? [])];
  }

  async #installCrds(): Promise<void> {
    const crds = await this.#readCrdFiles();
    if (crds.length === 0) return;
    const config = this.#config!;
    const base = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
    for (const crd of crds) {
      const name = String((crd.metadata as Record<string, unknown> | undefined)?.name ?? '');
      const res = await restRequest(config, 'POST', base, crd);
      if (res.status === 409) {
        const cur = await restRequest(config, 'GET', `${base}/${name}`);
        const rv = (cur.body as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion;
        const upd = { ...crd, metadata: { ...(crd.metadata as object), resourceVersion: rv } };
        const put = await restRequest(config, 'PUT', `${base}/${name}`, upd);
        if (put.status >= 300)
          throw new EnvtestError(
            'ENVTEST_CRD_INSTALL',
            `updating CRD ${name}: HTTP ${put.status}: ${put.text.slice(0, 300)}`,
          );
      } else if (res.status >= 300) {
        throw new EnvtestError(
          'ENVTEST_CRD_INSTALL',
          `creating CRD ${name}: HTTP ${res.status}: ${res.text.slice(0, 300)}`,
        );
      }
    }
    const deadline = Date.now() + (this.options.crdInstallTimeoutMs ?? 10_000);
    for (const crd of crds) {
      const name = String((crd.metadata as Record<string, unknown> | undefined)?.name ?? '');
      for (;;) {
        const res = await restRequest(config, 'GET', `${base}/${name}`);
        const conds =
          (res.body as { status?: { conditions?: { type: string; status: string }[] } }).status?.conditions ??
          [];
        if (conds.some((c) => c.type === 'Established' && c.status === 'True')) break;
        if (Date.now() > deadline)
          throw new EnvtestError('ENVTEST_CRD_INSTALL', `CRD ${name} did not become Established in time`);
        await delay(20);
      }
      // kube-apiserver adds an Established CRD to discovery asynchronously (its discovery controller): until
      // then a client's RESTMapper finds no such kind. Wait until every served version lists the resource, as
      // controller-runtime's envtest WaitForCRDs does.
      const spec = crd.spec as
        | { group?: string; names?: { plural?: string }; versions?: unknown[] }
        | undefined;
      const versions = (spec?.versions ?? []) as Array<{ name?: string; served?: boolean }>;
      for (const v of versions.filter((x) => x.served !== false && x.name)) {
        const gv = `/apis/${spec?.group}/${v.name}`;
        for (;;) {
          const res = await restRequest(config, 'GET', gv);
          const listed = (res.body as { resources?: Array<{ name?: string }> } | undefined)?.resources ?? [];
          if (res.status < 300 && listed.some((r) => r.name === spec?.names?.plural)) break;
          if (Date.now() > deadline)
            throw new EnvtestError('ENVTEST_CRD_INSTALL', `CRD ${name}: ${gv} does not list it in time`);
          await delay(20);
        }
      }
    }
  }

  /**
   * Stop what start() started (nothing for an existing cluster): the server, its connections and the temp
   * directory of its kubeconfig. Waits for a start() still in progress first. Safe to call twice.
   */
  async stop(): Promise<void> {
    const starting = this.#starting;
    this.#starting = undefined;
    if (starting) await starting.catch(() => undefined);
    await this.#stopStarted();
  }

  async #stopStarted(): Promise<void> {
    const server = this.#server;
    const cp = this.#controlPlane;
    this.#server = undefined;
    this.#controlPlane = undefined;
    if (server) await server.stop();
    if (cp) await cp.stop();
  }
}

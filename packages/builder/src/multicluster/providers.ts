import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, extname, join } from 'node:path';
import { type Reader, Secret } from '@kubeloop/client';
import { loadRestConfigFromFiles, type RestConfig } from '@kubeloop/config';
import { type Clock, onAbort, realClock } from '@kubeloop/core';
import { type Cluster, type ClusterOptions, newCluster } from '../cluster/cluster.js';
import { discardLogger, type Logger } from '../logger.js';
import { type Aware, ClusterEngageError, isValidClusterName, type Provider } from './provider.js';

/** Options every provider here takes for the clusters it makes. */
export interface ProviderClusterOptions {
  /** Options of each cluster made (cache scope, transport, …); `name` is the provider's. */
  readonly clusterOptions?: Omit<ClusterOptions, 'name'>;
  /** @defaultValue a logger that drops everything */
  readonly logger?: Logger;
}

interface Member {
  readonly stop: AbortController;
  readonly fingerprint: string;
}

/**
 * The engaged set of a provider: engages what is new, disengages what went, and re-engages (a new cluster)
 * what changed, from a desired map of name → fingerprint. @internal
 */
class ClusterSet {
  readonly #members = new Map<string, Member>();
  readonly #log: Logger;
  readonly #make: (name: string, config: RestConfig) => Cluster;
  #aware: Aware | undefined;
  #signal: AbortSignal | undefined;

  constructor(log: Logger, make: (name: string, config: RestConfig) => Cluster) {
    this.#log = log;
    this.#make = make;
  }

  bind(signal: AbortSignal, aware: Aware): void {
    this.#signal = signal;
    this.#aware = aware;
  }

  get bound(): boolean {
    return this.#aware !== undefined && !this.#signal?.aborted;
  }

  names(): string[] {
    return [...this.#members.keys()].sort();
  }

  /** Engages `name` with `config` (re-engages when `fingerprint` differs from the engaged one). */
  set(name: string, fingerprint: string, config: () => RestConfig): void {
    const have = this.#members.get(name);
    if (have && have.fingerprint === fingerprint) return;
    const aware = this.#aware;
    const signal = this.#signal;
    if (!aware || !signal || signal.aborted) return;
    if (have) this.delete(name);
    let cluster: Cluster;
    try {
      cluster = this.#make(name, config());
    } catch (err) {
      // A broken kubeconfig is reported and skipped; the others are engaged.
      this.#log.error({ cluster: name, err }, 'can not make a cluster from its kubeconfig; skipped');
      return;
    }
    const stop = new AbortController();
    const off = onAbort(signal, () => stop.abort());
    onAbort(stop.signal, off);
    try {
      aware.engage(stop.signal, name, cluster);
    } catch (err) {
      stop.abort();
      if (err instanceof ClusterEngageError) {
        this.#log.error({ cluster: name, err }, 'can not engage the cluster; skipped');
        return;
      }
      throw err;
    }
    this.#members.set(name, { stop, fingerprint });
  }

  delete(name: string): void {
    const m = this.#members.get(name);
    if (!m) return;
    this.#members.delete(name);
    m.stop.abort();
  }

  /** Disengages every member not in `keep`. */
  retain(keep: ReadonlySet<string>): void {
    for (const name of [...this.#members.keys()]) if (!keep.has(name)) this.delete(name);
  }
}

function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    onAbort(signal, resolve);
  });
}

/** Resolves after `ms` on `clock`, or at once when `signal` aborts. */
function pause(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    let off: () => void = () => undefined;
    const t = clock.setTimer(() => {
      off();
      resolve();
    }, ms);
    off = onAbort(signal, () => {
      t.cancel();
      resolve();
    });
  });
}

function fingerprintOf(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

function configFingerprint(config: RestConfig): string {
  return fingerprintOf(JSON.stringify(config, (_k, v: unknown) => (typeof v === 'function' ? String(v) : v)));
}

/**
 * A fixed set of clusters, changeable at runtime with {@link StaticProvider.add} and
 * {@link StaticProvider.remove} (multicluster-runtime's `clusters` provider, for tests and programs that
 * know their clusters).
 */
export class StaticProvider implements Provider {
  readonly #set: ClusterSet;
  readonly #configs = new Map<string, RestConfig>();

  /** @param clusters name → config of the clusters engaged from the start. */
  constructor(clusters: Readonly<Record<string, RestConfig>> = {}, options: ProviderClusterOptions = {}) {
    const log = options.logger ?? discardLogger;
    this.#set = new ClusterSet(log, (name, config) =>
      newCluster(config, { ...options.clusterOptions, logger: options.clusterOptions?.logger ?? log, name }),
    );
    for (const [name, config] of Object.entries(clusters)) this.add(name, config);
  }

  /**
   * Engages (or, with a changed config, re-engages) cluster `name`; before the manager starts it is engaged
   * on start. @throws ClusterEngageError for an invalid name.
   */
  add(name: string, config: RestConfig): void {
    if (!isValidClusterName(name))
      throw new ClusterEngageError(`StaticProvider: invalid cluster name ${JSON.stringify(name)}`);
    this.#configs.set(name, config);
    this.#set.set(name, configFingerprint(config), () => config);
  }

  /** Disengages cluster `name` (no-op when unknown). */
  remove(name: string): void {
    this.#configs.delete(name);
    this.#set.delete(name);
  }

  /** The engaged clusters' names. */
  names(): string[] {
    return this.#set.names();
  }

  async start(signal: AbortSignal, aware: Aware): Promise<void> {
    this.#set.bind(signal, aware);
    for (const [name, config] of this.#configs) this.#set.set(name, configFingerprint(config), () => config);
    await untilAborted(signal);
  }
}

/** Options of a provider that reads its clusters again every poll. */
interface PollingOptions extends ProviderClusterOptions {
  readonly pollIntervalMs?: number;
  readonly clock?: Clock;
}

/** A provider that reads its source every `pollIntervalMs` and engages / disengages what changed. @internal */
abstract class PollingProvider implements Provider {
  protected readonly set: ClusterSet;
  protected readonly log: Logger;
  readonly #clock: Clock;
  readonly #everyMs: number;

  constructor(what: string, options: PollingOptions) {
    const log = (options.logger ?? discardLogger).child({ provider: what });
    this.log = log;
    this.#clock = options.clock ?? realClock;
    this.#everyMs = options.pollIntervalMs ?? 5000;
    this.set = new ClusterSet(log, (name, config) =>
      newCluster(config, { ...options.clusterOptions, logger: options.clusterOptions?.logger ?? log, name }),
    );
  }

  /** The engaged clusters' names. */
  names(): string[] {
    return this.set.names();
  }

  /** Reads the source once and engages / disengages accordingly (also done every poll). */
  abstract sync(signal?: AbortSignal): void | Promise<void>;

  async start(signal: AbortSignal, aware: Aware): Promise<void> {
    this.set.bind(signal, aware);
    while (!signal.aborted) {
      await this.sync(signal);
      await pause(this.#clock, this.#everyMs, signal);
    }
  }
}

/** Options of {@link KubeconfigDirProvider}. */
export interface KubeconfigDirProviderOptions extends ProviderClusterOptions {
  /** The folder of kubeconfig files: one cluster per file, named after the file without its extension. */
  readonly dir: string;
  /** How often the folder is read again, in ms. @defaultValue 5000 */
  readonly pollIntervalMs?: number;
  /** Clock of the polling (tests). @defaultValue the real clock */
  readonly clock?: Clock;
}

/**
 * One cluster per kubeconfig file in a folder (multicluster-runtime's `file` provider): `member-1.yaml`
 * engages cluster `member-1` with the file's current context. The folder is read every `pollIntervalMs`:
 * a new file engages, a removed file disengages, a changed file re-engages. Hidden files (`.…`), folders
 * and files whose name is not a valid cluster name are skipped; a file that does not load is logged
 * (naming the file and field, never a credential) and skipped until it changes.
 */
export class KubeconfigDirProvider extends PollingProvider {
  readonly #dir: string;

  constructor(options: KubeconfigDirProviderOptions) {
    super('kubeconfig-dir', options);
    this.#dir = options.dir;
  }

  /** Reads the folder once and engages / disengages accordingly (also done every poll). */
  sync(): void {
    if (!this.set.bound) return;
    const dir = this.#dir;
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch (err) {
      this.log.error({ dir, err }, 'can not read the kubeconfig folder');
      return;
    }
    const keep = new Set<string>();
    for (const file of entries) {
      if (file.startsWith('.')) continue;
      const path = join(dir, file);
      const name = basename(file, extname(file));
      try {
        if (!statSync(path).isFile()) continue;
      } catch {
        continue;
      }
      if (!isValidClusterName(name)) {
        this.log.warn({ file: path }, 'kubeconfig file name is not a valid cluster name; skipped');
        continue;
      }
      let text: Buffer;
      try {
        text = readFileSync(path);
      } catch (err) {
        this.log.error({ file: path, err }, 'can not read a kubeconfig file; skipped');
        continue;
      }
      keep.add(name);
      this.set.set(name, fingerprintOf(text), () => loadRestConfigFromFiles([path]));
    }
    this.set.retain(keep);
  }
}

/** The label that marks a kubeconfig Secret for {@link KubeconfigSecretProvider}, with value `"true"`. */
export const KUBECONFIG_SECRET_LABEL = 'multicluster.kubeloop.dev/kubeconfig';

/** Options of {@link KubeconfigSecretProvider}. */
export interface KubeconfigSecretProviderOptions extends ProviderClusterOptions {
  /** Reads the Secrets: usually the management cluster's live reader, `mgr.getAPIReader()`. */
  readonly reader: Reader;
  /** The namespace of the Secrets. */
  readonly namespace: string;
  /** Which Secrets: a label selector. @defaultValue `{ [KUBECONFIG_SECRET_LABEL]: 'true' }` */
  readonly labelSelector?: Readonly<Record<string, string>>;
  /** The data key holding the kubeconfig. @defaultValue `kubeconfig` */
  readonly key?: string;
  /** How often the Secrets are listed again, in ms. @defaultValue 5000 */
  readonly pollIntervalMs?: number;
  /** Clock of the polling (tests). @defaultValue the real clock */
  readonly clock?: Clock;
}

/**
 * One cluster per labelled kubeconfig Secret in a namespace of the management cluster (multicluster-runtime's
 * `kubeconfig` provider): Secret `member-1` with label `multicluster.kubeloop.dev/kubeconfig: "true"` and
 * its kubeconfig under data key `kubeconfig` engages cluster `member-1`. The Secrets are listed every
 * `pollIntervalMs`: a new one engages, a deleted or unlabelled one disengages, a changed one re-engages.
 * A kubeconfig that does not load is logged (never its credentials) and skipped until it changes. The
 * kubeconfig is loaded by `@kubeloop/config` from a private temporary file (mode 0600, removed at once),
 * so it follows the same rules as a kubeconfig on disk (file-relative paths do not apply: inline data only).
 */
export class KubeconfigSecretProvider extends PollingProvider {
  readonly #options: KubeconfigSecretProviderOptions;

  constructor(options: KubeconfigSecretProviderOptions) {
    super('kubeconfig-secret', options);
    this.#options = options;
  }

  /** Lists the Secrets once and engages / disengages accordingly (also done every poll). */
  async sync(signal?: AbortSignal): Promise<void> {
    if (!this.set.bound) return;
    const o = this.#options;
    const key = o.key ?? 'kubeconfig';
    let list: Awaited<ReturnType<Reader['list']>>;
    try {
      list = await o.reader.list(Secret, {
        namespace: o.namespace,
        labelSelector: { ...(o.labelSelector ?? { [KUBECONFIG_SECRET_LABEL]: 'true' }) },
        ...(signal ? { signal } : {}),
      });
    } catch (err) {
      // The management cluster unreachable: keep what is engaged, try again next poll.
      if (!signal?.aborted) this.log.warn({ err }, 'listing the kubeconfig Secrets failed');
      return;
    }
    const keep = new Set<string>();
    for (const s of list.items as Array<{ metadata?: { name?: string }; data?: Record<string, string> }>) {
      const name = s.metadata?.name ?? '';
      const data = s.data?.[key];
      if (!data) {
        this.log.warn(
          { secret: `${o.namespace}/${name}`, key },
          'kubeconfig Secret has no such data key; skipped',
        );
        continue;
      }
      if (!isValidClusterName(name)) continue;
      keep.add(name);
      this.set.set(name, fingerprintOf(data), () =>
        kubeconfigFromText(Buffer.from(data, 'base64'), `${o.namespace}/${name}`),
      );
    }
    this.set.retain(keep);
  }
}

/** Loads kubeconfig bytes through `@kubeloop/config` (a private temp file, removed at once). */
function kubeconfigFromText(text: Buffer, source: string): RestConfig {
  const dir = mkdtempSync(join(tmpdir(), 'kubeloop-kubeconfig-'));
  try {
    const file = join(dir, `${source.replace(/[^A-Za-z0-9_.-]/g, '_')}.kubeconfig`);
    writeFileSync(file, text, { mode: 0o600 });
    return loadRestConfigFromFiles([file]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

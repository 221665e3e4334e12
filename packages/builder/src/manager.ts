import { type Cache, InformerCache } from '@kubeloop/cache';
import {
  ApiClient,
  type Client,
  type DeleteOptions,
  type GetOptions,
  type Kind,
  type KubeObject,
  type ListOptions,
  type ObjectKey,
  type ObjectList,
  type Patch,
  type PatchOptions,
  type RESTMapper,
  type Reader,
  Transport,
  type TransportOptions,
  type WatchEvent,
  type WatchOptions,
  type WriteOptions,
} from '@kubeloop/client';
import type { RestConfig } from '@kubeloop/config';
import { ControllerError, type Runnable } from './controller.js';
import { signalWithTimeout } from './internal-signals.js';
import { discardLogger, errorMessage, type Logger } from './logger.js';

/** Options of {@link newManager} (controller-runtime `manager.Options`, the parts this slice has). */
export interface ManagerOptions {
  /** Root logger; components log through children of it. @defaultValue a logger that drops everything */
  readonly logger?: Logger;
  /** Restrict the cache to one namespace (controller-runtime `Cache.DefaultNamespaces`). Absent: all namespaces. */
  readonly namespace?: string;
  /** Informer resync period in ms; 0 disables. @defaultValue 0 */
  readonly syncPeriodMs?: number;
  /** Options of the HTTP transport (limiter, retries). */
  readonly transport?: TransportOptions;
  /** Default field manager for writes through the manager's client. */
  readonly fieldOwner?: string;
  /** How long `start` waits for runnables to stop after the signal, in ms. @defaultValue 30000 */
  readonly gracefulShutdownTimeoutMs?: number;
  /** How long `start` waits for the caches to sync, in ms. @defaultValue 120000 */
  readonly cacheSyncTimeoutMs?: number;
}

/** Manager knows how to own the shared client, cache and runnables of one process (controller-runtime `manager.Manager`). */
export interface Manager {
  /** Reads from the cache, writes (and watches) to the API server — controller-runtime's default client. */
  getClient(): Client;
  /** Reads straight from the API server (no cache). */
  getAPIReader(): Reader;
  getCache(): Cache;
  getRESTMapper(): RESTMapper;
  getLogger(): Logger;
  getConfig(): RestConfig;
  /** Adds a runnable; after start it is started at once. */
  add(runnable: Runnable): void;
  /**
   * Starts the cache, waits for it to sync, starts every runnable and runs until `signal` aborts (or a
   * runnable fails); then stops runnables, then the cache, then closes connections.
   * @throws the first runnable error, or ControllerError when the caches do not sync.
   */
  start(signal: AbortSignal): Promise<void>;
  /** Registers a controller name; @throws ControllerError when it is taken (names must be unique). @internal */
  registerControllerName(name: string): void;
}

/** Cached reads, live writes: controller-runtime's default manager client (`client.New` with `Cache.Reader`). */
class DelegatingClient implements Client {
  constructor(
    private readonly reader: Reader,
    private readonly live: ApiClient,
  ) {}
  get restMapper(): RESTMapper {
    return this.live.restMapper;
  }
  get<T extends KubeObject>(kind: Kind<T>, key: ObjectKey, options?: GetOptions): Promise<T> {
    return this.reader.get(kind, key, options);
  }
  list<T extends KubeObject>(kind: Kind<T>, options?: ListOptions): Promise<ObjectList<T>> {
    return this.reader.list(kind, options);
  }
  create<T extends KubeObject>(kind: Kind<T>, obj: T, options?: WriteOptions): Promise<T> {
    return this.live.create(kind, obj, options);
  }
  update<T extends KubeObject>(kind: Kind<T>, obj: T, options?: WriteOptions): Promise<T> {
    return this.live.update(kind, obj, options);
  }
  patch<T extends KubeObject>(
    kind: Kind<T>,
    key: ObjectKey,
    patch: Patch,
    options?: PatchOptions,
  ): Promise<T> {
    return this.live.patch(kind, key, patch, options);
  }
  delete<T extends KubeObject>(kind: Kind<T>, key: ObjectKey | T, options?: DeleteOptions): Promise<void> {
    return this.live.delete(kind, key, options);
  }
  watch<T extends KubeObject>(kind: Kind<T>, options?: WatchOptions): AsyncIterable<WatchEvent<T>> {
    return this.live.watch(kind, options);
  }
}

class ControllerManager implements Manager {
  readonly #config: RestConfig;
  readonly #options: ManagerOptions;
  readonly #log: Logger;
  readonly #live: ApiClient;
  readonly #cache: InformerCache;
  readonly #client: DelegatingClient;
  readonly #runnables: Runnable[] = [];
  readonly #names = new Set<string>();
  #internal: AbortController | undefined;
  #running: Promise<void>[] = [];
  #firstError: unknown;

  constructor(config: RestConfig, options: ManagerOptions) {
    this.#config = config;
    this.#options = options;
    this.#log = options.logger ?? discardLogger;
    this.#live = new ApiClient({
      transport: new Transport(config, options.transport),
      ...(options.fieldOwner ? { fieldOwner: options.fieldOwner } : {}),
    });
    this.#cache = new InformerCache({
      client: this.#live,
      logger: this.#log.child({ component: 'cache' }),
      ...(options.namespace ? { namespace: options.namespace } : {}),
      ...(options.syncPeriodMs ? { resyncPeriodMs: options.syncPeriodMs } : {}),
    });
    this.#client = new DelegatingClient(this.#cache, this.#live);
  }

  getClient(): Client {
    return this.#client;
  }
  getAPIReader(): Reader {
    return this.#live;
  }
  getCache(): Cache {
    return this.#cache;
  }
  getRESTMapper(): RESTMapper {
    return this.#live.restMapper;
  }
  getLogger(): Logger {
    return this.#log;
  }
  getConfig(): RestConfig {
    return this.#config;
  }

  registerControllerName(name: string): void {
    if (this.#names.has(name)) {
      throw new ControllerError(
        `controller with name ${JSON.stringify(name)} already exists; names must be unique`,
      );
    }
    this.#names.add(name);
  }

  add(runnable: Runnable): void {
    this.#runnables.push(runnable);
    if (this.#internal && !this.#internal.signal.aborted) this.#run(runnable, this.#internal);
  }

  #run(r: Runnable, internal: AbortController): void {
    this.#running.push(
      r.start(internal.signal).catch((err: unknown) => {
        this.#log.error({ err: errorMessage(err) }, 'runnable failed, stopping the manager');
        this.#firstError ??= err;
        internal.abort();
      }),
    );
  }

  async start(signal: AbortSignal): Promise<void> {
    if (this.#internal) throw new ControllerError('the manager was already started');
    const internal = new AbortController();
    this.#internal = internal;
    const stopCache = new AbortController();
    const onAbort = () => internal.abort();
    if (signal.aborted) internal.abort();
    else signal.addEventListener('abort', onAbort, { once: true });
    this.#log.info({}, 'Starting manager');
    const cacheRun = this.#cache.start(stopCache.signal);
    try {
      const syncWait = signalWithTimeout(internal.signal, this.#options.cacheSyncTimeoutMs ?? 120_000);
      const synced = await this.#cache.waitForCacheSync(syncWait.signal);
      syncWait.clear();
      if (!synced && !internal.signal.aborted) {
        throw new ControllerError('timed out waiting for the cache to sync');
      }
      if (!internal.signal.aborted) for (const r of this.#runnables) this.#run(r, internal);
      await new Promise<void>((resolve) => {
        if (internal.signal.aborted) return resolve();
        internal.signal.addEventListener('abort', () => resolve(), { once: true });
      });
      this.#log.info({}, 'Stopping and waiting for runnables');
      const grace = this.#options.gracefulShutdownTimeoutMs ?? 30_000;
      let timer: NodeJS.Timeout | undefined;
      const timedOut = await Promise.race([
        Promise.all(this.#running).then(() => false),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(true), grace);
        }),
      ]);
      clearTimeout(timer);
      if (timedOut)
        this.#log.error({ timeoutMs: grace }, 'runnables did not stop within the graceful shutdown timeout');
    } finally {
      signal.removeEventListener('abort', onAbort);
      internal.abort();
      stopCache.abort();
      await cacheRun;
      await this.#live.close();
      this.#log.info({}, 'Manager stopped');
    }
    if (this.#firstError !== undefined) throw this.#firstError;
  }
}

/**
 * A manager for `config` (controller-runtime `ctrl.NewManager`): one transport, a lazy RESTMapper, an
 * informer cache and a client whose reads go to the cache and writes to the API server.
 */
export function newManager(config: RestConfig, options: ManagerOptions = {}): Manager {
  return new ControllerManager(config, options);
}

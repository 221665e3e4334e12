import { type Cache, InformerCache, type InformerCacheOptions } from '@kubeloop/cache';
import {
  type ApiClient,
  type CachedClient,
  type NewClientOptions,
  newClient,
  type RESTMapper,
  type Reader,
} from '@kubeloop/client';
import { DelegatingClient } from '@kubeloop/client/apiutil';
import type { RestConfig } from '@kubeloop/config';
import { ControllerError } from '../controller-options.js';
import { signalWithTimeout, whenAborted } from '../internal-signals.js';
import { discardLogger, type Logger } from '../logger.js';
import type { FieldIndexer } from '../manager/interfaces.js';
import type { Runnable } from '../manager/runnable.js';
import { EventBroadcaster, type EventBroadcasterOptions, type EventRecorder } from '../recorder/recorder.js';

/** Options of {@link newCluster} (controller-runtime `cluster.Options`, the parts this package has). */
export interface ClusterOptions {
  /**
   * The cluster's name: `''` for a manager's own cluster; a provider's name for an engaged one (logs,
   * metrics, `Request.cluster`). @defaultValue `''`
   */
  readonly name?: string;
  /** Root logger; the cluster's components log through children bound with `cluster: name`. */
  readonly logger?: Logger;
  /**
   * Options of the cluster's live client (as the manager's `client`): `transport` (limiter, retries),
   * `fieldOwner`. The transport logs through the cluster's logger unless `transport.logger` says otherwise.
   */
  readonly client?: NewClientOptions;
  /**
   * Options of the informer cache (as the manager's `cache`): `defaultNamespaces`, selectors, `byObject`,
   * `syncPeriodMs`, `readYourWrites`, reflector knobs.
   */
  readonly cache?: Omit<InformerCacheOptions, 'client' | 'logger'>;
  /** Options of the event broadcaster behind `getEventRecorderFor`. */
  readonly events?: Omit<EventBroadcasterOptions, 'client' | 'logger'>;
  /**
   * How long {@link Cluster.start} waits, once stopping, for the event flush and open requests before it
   * destroys the cluster's connections, in ms. @defaultValue 5000
   */
  readonly closeTimeoutMs?: number;
}

/**
 * Cluster knows how to reach and cache one API server (controller-runtime `pkg/cluster.Cluster`): its
 * config, a live client, an informer cache, a client whose reads go to the cache and writes to the API
 * server, the RESTMapper, a field indexer and an event recorder. A manager is built on one (its own
 * cluster, named `''`); more can be added to a manager as runnables (`mgr.add(cluster)`), so a controller
 * can watch a kind in one cluster (`KindSource` on `cluster.getCache()`, or the builder's
 * `watches(kind, handler, { cluster })`) and reconcile in another. Multi-cluster providers make one per
 * engaged cluster.
 */
export interface Cluster extends Runnable {
  /** `''` for a manager's own cluster; the provider's name otherwise. */
  readonly name: string;
  getConfig(): RestConfig;
  /** Reads from the cache (read-only `Cached` objects), writes (and watches) to the API server. */
  getClient(): CachedClient;
  /** Reads straight from the API server (no cache). */
  getAPIReader(): Reader;
  getCache(): Cache;
  /** Indexes fields of cached kinds; call before the first read of the kind. */
  getFieldIndexer(): FieldIndexer;
  getRESTMapper(): RESTMapper;
  /** A recorder of Events in this cluster reporting as `name`; flushed when the cluster stops. */
  getEventRecorderFor(name: string): EventRecorder;
  getLogger(): Logger;
  /**
   * Runs the cache until `signal` aborts; then flushes recorded events and closes the connections (destroyed
   * after `closeTimeoutMs`, so a black-holed API server cannot hold the stop). Resolves once stopped.
   * @throws ControllerError when started twice.
   */
  start(signal: AbortSignal): Promise<void>;
  /** `false`: a cluster's cache runs on every replica. */
  needLeaderElection(): boolean;
  /** Resolves `true` once every informer created so far has synced, `false` if `signal` aborts first. */
  waitForCacheSync(signal: AbortSignal): Promise<boolean>;
  /** Why the cluster is not ready (not started, informers not synced, their last error), or `undefined`. */
  readinessPending(): string | undefined;
}

/**
 * The implementation behind {@link newCluster}; the manager reaches the parts it manages itself (it starts
 * the cache in its caches group and closes the connections at the end of its own shutdown). @internal
 */
export class ClusterImpl implements Cluster {
  readonly name: string;
  readonly live: ApiClient;
  readonly cache: InformerCache;
  readonly client: DelegatingClient;
  readonly #config: RestConfig;
  readonly #options: ClusterOptions;
  readonly #log: Logger;
  #events: EventBroadcaster | undefined;
  #started = false;

  constructor(config: RestConfig, options: ClusterOptions = {}) {
    this.name = options.name ?? '';
    this.#config = config;
    this.#options = options;
    const root = options.logger ?? discardLogger;
    this.#log = this.name ? root.child({ cluster: this.name }) : root;
    // The transport logs through the cluster's logger unless told otherwise (server warnings, TLS
    // verification disabled), as controller-runtime's client logs API warnings through its logger.
    this.live = newClient(config, {
      ...options.client,
      transport: { logger: this.#log.child({ component: 'client' }), ...options.client?.transport },
    });
    const { syncTimeoutMs: _manager, ...cache } = (options.cache ?? {}) as ClusterOptions['cache'] & {
      syncTimeoutMs?: number;
    };
    this.cache = new InformerCache({
      ...cache,
      client: this.live,
      logger: this.#log.child({ component: 'cache' }),
    });
    // With read-your-own-writes on (`cache.readYourWrites`), writes through the cluster's client tell its
    // cache what to wait for.
    this.client = new DelegatingClient(this.cache, this.cache.trackWrites(this.live));
  }

  getConfig(): RestConfig {
    return this.#config;
  }
  getClient(): CachedClient {
    return this.client;
  }
  getAPIReader(): Reader {
    return this.live;
  }
  getCache(): Cache {
    return this.cache;
  }
  getFieldIndexer(): FieldIndexer {
    return this.cache;
  }
  getRESTMapper(): RESTMapper {
    return this.live.restMapper;
  }
  getLogger(): Logger {
    return this.#log;
  }
  getEventRecorderFor(name: string): EventRecorder {
    this.#events ??= new EventBroadcaster({ client: this.live, logger: this.#log, ...this.#options.events });
    return this.#events.newRecorder(name);
  }
  needLeaderElection(): boolean {
    return false;
  }
  waitForCacheSync(signal: AbortSignal): Promise<boolean> {
    return this.cache.waitForCacheSync(signal);
  }

  readinessPending(): string | undefined {
    if (!this.cache.isStarted()) return 'the cache has not started';
    const unsynced = this.cache.unsyncedInformers();
    if (unsynced.length === 0) return undefined;
    const why = this.cache.syncError();
    return `informers not synced: ${unsynced.join(', ')}${why?.cause ? `: ${errText(why.cause)}` : ''}`;
  }

  async start(signal: AbortSignal): Promise<void> {
    if (this.#started) throw new ControllerError(`cluster ${JSON.stringify(this.name)} was already started`);
    this.#started = true;
    this.#log.info({}, 'Starting cluster');
    try {
      await this.cache.start(signal);
    } finally {
      const grace = signalWithTimeout(new AbortController().signal, this.#options.closeTimeoutMs ?? 5000);
      try {
        await this.flushEvents(grace.signal);
        await this.close(grace.signal);
      } finally {
        grace.clear();
      }
      this.#log.info({}, 'Cluster stopped');
    }
  }

  /** Writes the events recorded so far, until `deadline` aborts. */
  async flushEvents(deadline: AbortSignal): Promise<void> {
    await this.#events?.shutdown(deadline);
  }

  /**
   * Closes the connections, letting requests in flight finish until `deadline` aborts; then (or if it has)
   * destroys them. Resolves `false` when it had to destroy them.
   */
  async close(deadline: AbortSignal): Promise<boolean> {
    if (!deadline.aborted) {
      const timedOut = whenAborted(deadline);
      try {
        const closed = await Promise.race([
          this.live.close().then(
            () => true,
            () => true,
          ),
          timedOut.promise.then(() => false),
        ]);
        if (closed) return true;
      } finally {
        timedOut.off();
      }
    }
    void this.live.close({ force: true }).catch(() => undefined);
    return false;
  }
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * A cluster for `config` (controller-runtime `cluster.New`): a client made by `newClient` (its own pooled
 * transport, lazy RESTMapper), an informer cache and a client whose reads go to the cache and writes to
 * the API server. Nothing is contacted until it is started (add it to a manager, or call `start`).
 */
export function newCluster(config: RestConfig, options: ClusterOptions = {}): Cluster {
  return new ClusterImpl(config, options);
}

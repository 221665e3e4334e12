import type { CacheInformerInfo, InformerCache } from '@kubeloop/cache';
import { Counter, Gauge, type Registry } from 'prom-client';

/**
 * The caches each registry reports (a shared registry may serve several managers' caches), each with the cluster
 * it caches (`undefined`: the manager's own cluster).
 */
type Caches = Map<InformerCache, string | undefined>;
const families = new WeakMap<Registry, Caches>();

/**
 * The labels of an informer's series, as client-go's informer metrics name it (`resource` is the kind here), and
 * `cluster` for a multi-cluster manager's member cluster (absent for the manager's own cluster).
 */
const LABELS = ['name', 'group', 'version', 'kind', 'cluster'] as const;
type Labels = Partial<Record<(typeof LABELS)[number], string>>;

function labelsOf(i: CacheInformerInfo, cluster: string | undefined): Labels {
  const l: Labels = { name: i.name, group: i.group, version: i.version, kind: i.kind };
  if (cluster) l.cluster = cluster;
  return l;
}

/** A gauge of every informer of every cache on the registry, set when scraped. */
function informerGauge(
  registry: Registry,
  caches: Caches,
  name: string,
  help: string,
  value: (i: CacheInformerInfo) => number | undefined,
): void {
  new Gauge({
    name,
    help,
    labelNames: LABELS,
    registers: [registry],
    collect() {
      this.reset();
      for (const [c, cluster] of caches)
        for (const i of c.informers()) {
          const v = value(i);
          if (v !== undefined) this.set(labelsOf(i, cluster), v);
        }
    },
  });
}

/** A counter of every informer of every cache on the registry, read from the informers when scraped. */
function informerCounter(
  registry: Registry,
  caches: Caches,
  name: string,
  help: string,
  values: (i: CacheInformerInfo) => ReadonlyArray<[extra: Record<string, string>, n: number]>,
  extraLabels: readonly string[] = [],
): void {
  new Counter({
    name,
    help,
    labelNames: [...LABELS, ...extraLabels],
    registers: [registry],
    collect() {
      this.reset();
      for (const [c, cluster] of caches)
        for (const i of c.informers())
          for (const [extra, n] of values(i)) this.inc({ ...labelsOf(i, cluster), ...extra }, n);
    },
  });
}

/** The informer metrics, in the style of client-go's `informer_*` metrics (subsystem `informer`). */
function registerInformerMetrics(registry: Registry, caches: Caches): void {
  informerGauge(
    registry,
    caches,
    'informer_store_objects',
    "Objects in the informer's store.",
    (i) => i.stats.objects,
  );
  informerGauge(
    registry,
    caches,
    'informer_store_bytes',
    "Bytes the informer's store holds: the JSON bytes of a compact store, else an estimate from sampled objects.",
    (i) => i.stats.bytes,
  );
  informerGauge(
    registry,
    caches,
    'informer_last_event_age_seconds',
    "Seconds since the last watch event (bookmarks included) reached the informer's store.",
    (i) => i.stats.lastEventAgeSeconds,
  );
  informerGauge(registry, caches, 'informer_synced', '1 once the informer has synced, else 0.', (i) =>
    i.synced ? 1 : 0,
  );
  informerGauge(
    registry,
    caches,
    'informer_namespace_informers',
    'Per-namespace informers running for the kind in a namespace-restricted cache (one still stopping after its namespace was removed included); 0 for a single informer.',
    (i) => i.namespaceInformers.length,
  );
  informerGauge(
    registry,
    caches,
    'informer_store_resource_version',
    'The 15 least significant digits of the resource version of the store.',
    (i) => {
      const rv = i.stats.resourceVersion;
      return /^\d+$/.test(rv) ? Number(rv.slice(-15)) : undefined;
    },
  );
  informerGauge(
    registry,
    caches,
    'informer_handler_max_seconds',
    "Longest time the informer's handlers took for one notification (they run synchronously, so the store waits for them).",
    (i) => i.stats.handlerMaxSeconds,
  );
  informerCounter(registry, caches, 'informer_relists_total', 'Lists after the first one.', (i) => [
    [{}, i.stats.relists],
  ]);
  informerCounter(
    registry,
    caches,
    'informer_watch_restarts_total',
    'Watch requests after the first one.',
    (i) => [[{}, i.stats.watchRestarts]],
  );
  informerCounter(
    registry,
    caches,
    'informer_events_total',
    "Watch events applied to the informer's store, by type.",
    (i) => [
      [{ type: 'ADDED' }, i.stats.events.added],
      [{ type: 'MODIFIED' }, i.stats.events.modified],
      [{ type: 'DELETED' }, i.stats.events.deleted],
      [{ type: 'BOOKMARK' }, i.stats.events.bookmark],
    ],
    ['type'],
  );
  informerCounter(
    registry,
    caches,
    'informer_handler_notifications_total',
    "Watch event notifications delivered to the informer's handlers.",
    (i) => [[{}, i.stats.handlerNotifications]],
  );
  informerCounter(
    registry,
    caches,
    'informer_handler_seconds_total',
    "Seconds the informer's handlers took for watch event notifications.",
    (i) => [[{}, i.stats.handlerSeconds]],
  );
}

/**
 * The manager cache's metrics on `registry`, read from the cache when scraped. Per informer (labels `name`,
 * `group`, `version`, `kind`), in client-go's `informer_*` style: `informer_store_objects`,
 * `informer_store_bytes`, `informer_last_event_age_seconds`, `informer_synced`, `informer_namespace_informers`,
 * `informer_store_resource_version`, `informer_relists_total`, `informer_watch_restarts_total`,
 * `informer_events_total{type}`, `informer_handler_notifications_total`, `informer_handler_seconds_total`,
 * `informer_handler_max_seconds`; a member cluster's cache (`cluster` given: a multi-cluster manager's engaged
 * cluster) adds the label `cluster` to its series. Read-your-own-writes:
 * `kubeloop_cache_read_your_writes_pending` (writes whose version the cache has not stored yet),
 * `kubeloop_cache_read_your_writes_waits_total{outcome}` (reads and reconcile starts that waited, by
 * `observed` / `timeout` / `aborted`) and `kubeloop_cache_read_your_writes_wait_seconds_total`. Several
 * caches on one registry are summed. Returns the function that stops reporting `cache`.
 */
export function registerCacheMetrics(registry: Registry, cache: InformerCache, cluster?: string): () => void {
  let caches = families.get(registry);
  if (!caches) {
    const set: Caches = new Map();
    caches = set;
    families.set(registry, set);
    registerInformerMetrics(registry, set);
    const stats = () => [...set.keys()].flatMap((c) => c.readYourWrites()?.stats() ?? []);
    new Gauge({
      name: 'kubeloop_cache_read_your_writes_pending',
      help: "Writes of this process whose resourceVersion the cache's informers have not stored yet (read-your-own-writes).",
      registers: [registry],
      collect() {
        this.set(stats().reduce((n, s) => n + s.pending, 0));
      },
    });
    new Counter({
      name: 'kubeloop_cache_read_your_writes_waits_total',
      help: 'Cached reads and reconcile starts that waited for the cache to store a write of this process, by how the wait ended (observed, timeout, aborted).',
      labelNames: ['outcome'],
      registers: [registry],
      collect() {
        this.reset();
        for (const outcome of ['observed', 'timeout', 'aborted'] as const) {
          const n = stats().reduce((sum, s) => sum + s.waits[outcome], 0);
          if (n > 0) this.inc({ outcome }, n);
        }
      },
    });
    new Counter({
      name: 'kubeloop_cache_read_your_writes_wait_seconds_total',
      help: 'Seconds cached reads and reconcile starts spent waiting for the cache to store writes of this process.',
      registers: [registry],
      collect() {
        this.reset();
        const s = stats().reduce((sum, x) => sum + x.waitSeconds, 0);
        if (s > 0) this.inc(s);
      },
    });
  }
  caches.set(cache, cluster);
  const mine = caches;
  return () => {
    mine.delete(cache);
  };
}

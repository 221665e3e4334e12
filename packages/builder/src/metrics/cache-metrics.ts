import type { InformerCache } from '@kubeloop/cache';
import { Counter, Gauge, type Registry } from 'prom-client';

/** The caches each registry reports (a shared registry may serve several managers' caches). */
const families = new WeakMap<Registry, Set<InformerCache>>();

/**
 * The manager cache's metrics on `registry`, read from the cache when scraped. Read-your-own-writes:
 * `kubeloop_cache_read_your_writes_pending` (writes whose version the cache has not stored yet),
 * `kubeloop_cache_read_your_writes_waits_total{outcome}` (reads and reconcile starts that waited, by
 * `observed` / `timeout` / `aborted`) and `kubeloop_cache_read_your_writes_wait_seconds_total`. Several
 * caches on one registry are summed. Returns the function that stops reporting `cache`.
 */
export function registerCacheMetrics(registry: Registry, cache: InformerCache): () => void {
  let caches = families.get(registry);
  if (!caches) {
    const set = new Set<InformerCache>();
    caches = set;
    families.set(registry, set);
    const stats = () => [...set].flatMap((c) => c.readYourWrites()?.stats() ?? []);
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
  caches.add(cache);
  const mine = caches;
  return () => {
    mine.delete(cache);
  };
}

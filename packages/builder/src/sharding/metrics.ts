import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** The `kubeloop_shard_*` metric families of one registry. */
export interface ShardMetrics {
  members: Gauge<'name'>;
  owned: Gauge<'name'>;
  handover: Histogram<'name'>;
  dropped: Gauge<'name'>;
  evicted: Counter<'name'>;
}

const metricFamilies = new WeakMap<Registry, ShardMetrics>();

/** The `kubeloop_shard_*` families on `registry` (made once per registry). */
export function shardMetrics(registry: Registry): ShardMetrics {
  let m = metricFamilies.get(registry);
  if (m) return m;
  m = {
    members: new Gauge({
      name: 'kubeloop_shard_members',
      help: 'Members of the sharding group in this replica’s view (live member Leases, itself included).',
      labelNames: ['name'],
      registers: [registry],
    }),
    owned: new Gauge({
      name: 'kubeloop_shard_owned_keys',
      help: 'Keys of cached objects this replica owns under its current view.',
      labelNames: ['name'],
      registers: [registry],
    }),
    handover: new Histogram({
      name: 'kubeloop_shard_handover_seconds',
      help: 'Time from a membership change seen by this replica to its acknowledgement being written (drain time).',
      labelNames: ['name'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    }),
    dropped: new Gauge({
      name: 'kubeloop_shard_dropped_requests',
      help: 'Requests this replica passed over (events of keys it did not own, refused reconciles) and remembers, to enqueue when their key is permitted.',
      labelNames: ['name'],
      registers: [registry],
    }),
    evicted: new Counter({
      name: 'kubeloop_shard_dropped_requests_evicted_total',
      help: 'Passed-over requests forgotten because more were remembered than the maxDroppedRequests limit.',
      labelNames: ['name'],
      registers: [registry],
    }),
  };
  metricFamilies.set(registry, m);
  return m;
}

import {
  type MetricsProvider,
  WORKQUEUE_DURATION_BUCKETS_SECONDS,
  WORKQUEUE_METRICS,
} from '@kubeloop/workqueue';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

class WorkqueueFamilies {
  readonly depth: Gauge<'name' | 'controller' | 'priority'>;
  readonly adds: Counter<'name' | 'controller'>;
  readonly latency: Histogram<'name' | 'controller'>;
  readonly workDuration: Histogram<'name' | 'controller'>;
  readonly unfinished: Gauge<'name' | 'controller'>;
  readonly longest: Gauge<'name' | 'controller'>;
  readonly retries: Counter<'name' | 'controller'>;

  constructor(registry: Registry) {
    const registers = [registry];
    const m = WORKQUEUE_METRICS;
    const buckets = [...WORKQUEUE_DURATION_BUCKETS_SECONDS];
    const two = ['name', 'controller'] as const;
    // One depth family for both queue kinds: the priority queue fills `priority`, the others leave it ''
    // (controller-runtime's workqueue_depth carries the priority label since it has the priority queue).
    this.depth = new Gauge({
      name: m.depth.name,
      help: m.depth.help,
      labelNames: ['name', 'controller', 'priority'],
      registers,
    });
    this.adds = new Counter({ name: m.adds.name, help: m.adds.help, labelNames: two, registers });
    this.latency = new Histogram({
      name: m.latency.name,
      help: m.latency.help,
      labelNames: two,
      buckets,
      registers,
    });
    this.workDuration = new Histogram({
      name: m.workDuration.name,
      help: m.workDuration.help,
      labelNames: two,
      buckets,
      registers,
    });
    this.unfinished = new Gauge({
      name: m.unfinishedWorkSeconds.name,
      help: m.unfinishedWorkSeconds.help,
      labelNames: two,
      registers,
    });
    this.longest = new Gauge({
      name: m.longestRunningProcessorSeconds.name,
      help: m.longestRunningProcessorSeconds.help,
      labelNames: two,
      registers,
    });
    this.retries = new Counter({ name: m.retries.name, help: m.retries.help, labelNames: two, registers });
  }
}

const families = new WeakMap<Registry, WorkqueueFamilies>();

/**
 * A `@kubeloop/workqueue` {@link MetricsProvider} writing controller-runtime's `workqueue_*` metrics
 * (`pkg/metrics/workqueue.go`) to `registry`, with the queue name as both the `name` and the `controller`
 * label. Every series of a queue is created at 0 when the queue is made, so dashboards see it before the
 * first item. One provider per registry (the same object for repeated calls).
 */
export function workqueueMetricsProvider(registry: Registry): MetricsProvider {
  let f = families.get(registry);
  if (!f) {
    f = new WorkqueueFamilies(registry);
    families.set(registry, f);
  }
  const fam = f;
  const labels = (name: string) => ({ name, controller: name });
  return {
    newDepthMetric(name) {
      const l = { ...labels(name), priority: '' };
      fam.depth.set(l, 0);
      return { inc: () => fam.depth.inc(l), dec: () => fam.depth.dec(l) };
    },
    newDepthMetricWithPriority(name) {
      const l = (priority: number) => ({ ...labels(name), priority: String(priority) });
      fam.depth.set(l(0), 0);
      return { inc: (p) => fam.depth.inc(l(p)), dec: (p) => fam.depth.dec(l(p)) };
    },
    newAddsMetric(name) {
      fam.adds.inc(labels(name), 0);
      return { inc: () => fam.adds.inc(labels(name)) };
    },
    newLatencyMetric(name) {
      fam.latency.zero(labels(name));
      return { observe: (v) => fam.latency.observe(labels(name), v) };
    },
    newWorkDurationMetric(name) {
      fam.workDuration.zero(labels(name));
      return { observe: (v) => fam.workDuration.observe(labels(name), v) };
    },
    newUnfinishedWorkSecondsMetric(name) {
      fam.unfinished.set(labels(name), 0);
      return { set: (v) => fam.unfinished.set(labels(name), v) };
    },
    newLongestRunningProcessorSecondsMetric(name) {
      fam.longest.set(labels(name), 0);
      return { set: (v) => fam.longest.set(labels(name), v) };
    },
    newRetriesMetric(name) {
      fam.retries.inc(labels(name), 0);
      return { inc: () => fam.retries.inc(labels(name)) };
    },
  };
}

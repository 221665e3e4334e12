/**
 * Metrics hooks of the work queues: a provider interface (client-go's `workqueue.MetricsProvider`) that a
 * host binds to its metrics system. `@kubeloop/builder` binds it to Prometheus (`prom-client`) with
 * controller-runtime's `workqueue_*` names and the labels `name` and `controller` (see
 * {@link WORKQUEUE_METRICS}).
 *
 * A queue only reports metrics when it is given both a `name` and a `metricsProvider` (as in client-go).
 * Durations are reported in **seconds**.
 */

/** A gauge that goes up and down by one. */
export interface GaugeMetric {
  inc(): void;
  dec(): void;
}

/** A gauge set to an absolute value. */
export interface SettableGaugeMetric {
  set(value: number): void;
}

/** A monotonically increasing counter. */
export interface CounterMetric {
  inc(): void;
}

/** A histogram / summary of observations (seconds for every queue metric). */
export interface HistogramMetric {
  observe(value: number): void;
}

/** Depth gauge split by priority (controller-runtime's priority queue adds a `priority` label). */
export interface DepthMetricWithPriority {
  inc(priority: number): void;
  dec(priority: number): void;
}

/**
 * Creates the metric instances for one named queue. Each method is called once per queue with the queue's
 * `name`; controller-runtime uses the controller name for both the `name` and `controller` labels.
 */
export interface MetricsProvider {
  /** `workqueue_depth`: items waiting to be handed out (gauge). */
  newDepthMetric(name: string): GaugeMetric;
  /** `workqueue_adds_total`: non-duplicate adds (counter). */
  newAddsMetric(name: string): CounterMetric;
  /** `workqueue_queue_duration_seconds`: time from add to get, in seconds (histogram). */
  newLatencyMetric(name: string): HistogramMetric;
  /** `workqueue_work_duration_seconds`: time from get to done, in seconds (histogram). */
  newWorkDurationMetric(name: string): HistogramMetric;
  /** `workqueue_unfinished_work_seconds`: sum of the ages of in-flight items, in seconds (gauge). */
  newUnfinishedWorkSecondsMetric(name: string): SettableGaugeMetric;
  /** `workqueue_longest_running_processor_seconds`: age of the oldest in-flight item, in seconds (gauge). */
  newLongestRunningProcessorSecondsMetric(name: string): SettableGaugeMetric;
  /** `workqueue_retries_total`: adds with a delay (`addAfter`, `addRateLimited`) (counter). */
  newRetriesMetric(name: string): CounterMetric;
  /**
   * Optional: depth by priority for the priority queue (controller-runtime's `workqueue_depth` with the
   * extra `priority` label). When absent, the priority queue uses {@link MetricsProvider.newDepthMetric}.
   */
  newDepthMetricWithPriority?(name: string): DepthMetricWithPriority;
}

/** Kind of a queue metric, for binding to a metrics library. */
export type WorkqueueMetricKind = 'gauge' | 'counter' | 'histogram';

/** Description of one controller-runtime `workqueue_*` metric. */
export interface WorkqueueMetricDescriptor {
  readonly name: string;
  readonly help: string;
  readonly kind: WorkqueueMetricKind;
  /** Label names, in order. */
  readonly labels: readonly string[];
  /** Histogram buckets in seconds (only for histograms). */
  readonly buckets?: readonly number[];
}

/** controller-runtime's histogram buckets for queue and work duration: 1e-8 s × 10^k up to 1e3 s. */
export const WORKQUEUE_DURATION_BUCKETS_SECONDS: readonly number[] = Object.freeze([
  1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100, 1000,
]);

/**
 * The Prometheus metrics controller-runtime registers for its work queues (`pkg/metrics/workqueue.go`),
 * keyed by the {@link MetricsProvider} method that creates them. Labels are `name` and `controller`
 * (depth additionally `priority` when the priority queue is used).
 */
export const WORKQUEUE_METRICS = Object.freeze({
  depth: {
    name: 'workqueue_depth',
    help: 'Current depth of workqueue',
    kind: 'gauge',
    labels: ['name', 'controller'],
  },
  depthWithPriority: {
    name: 'workqueue_depth',
    help: 'Current depth of workqueue',
    kind: 'gauge',
    labels: ['name', 'controller', 'priority'],
  },
  adds: {
    name: 'workqueue_adds_total',
    help: 'Total number of adds handled by workqueue',
    kind: 'counter',
    labels: ['name', 'controller'],
  },
  latency: {
    name: 'workqueue_queue_duration_seconds',
    help: 'How long in seconds an item stays in workqueue before being requested',
    kind: 'histogram',
    labels: ['name', 'controller'],
    buckets: WORKQUEUE_DURATION_BUCKETS_SECONDS,
  },
  workDuration: {
    name: 'workqueue_work_duration_seconds',
    help: 'How long in seconds processing an item from workqueue takes.',
    kind: 'histogram',
    labels: ['name', 'controller'],
    buckets: WORKQUEUE_DURATION_BUCKETS_SECONDS,
  },
  unfinishedWorkSeconds: {
    name: 'workqueue_unfinished_work_seconds',
    help:
      "How many seconds of work has been done that is in progress and hasn't been observed by " +
      'work_duration. Large values indicate stuck threads.',
    kind: 'gauge',
    labels: ['name', 'controller'],
  },
  longestRunningProcessorSeconds: {
    name: 'workqueue_longest_running_processor_seconds',
    help: 'How many seconds has the longest running processor for workqueue been running.',
    kind: 'gauge',
    labels: ['name', 'controller'],
  },
  retries: {
    name: 'workqueue_retries_total',
    help: 'Total number of retries handled by workqueue',
    kind: 'counter',
    labels: ['name', 'controller'],
  },
} satisfies Record<string, WorkqueueMetricDescriptor>);

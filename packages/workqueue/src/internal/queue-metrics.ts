import type { Clock, ClockTimer } from '@kubeloop/core';
import type {
  CounterMetric,
  DepthMetricWithPriority,
  GaugeMetric,
  HistogramMetric,
  MetricsProvider,
  SettableGaugeMetric,
} from '../metrics.js';

/** Interval at which the unfinished-work gauges are refreshed (client-go: 500 ms). */
export const UNFINISHED_WORK_UPDATE_PERIOD_MS = 500;

/**
 * Per-queue metric bookkeeping (client-go `queueMetrics`). Only created when the queue has a name and a
 * provider, so the hot path of an unnamed queue pays a single `undefined` check.
 */
export class QueueMetrics<K> {
  private readonly depth: GaugeMetric | undefined;
  private readonly depthByPriority: DepthMetricWithPriority | undefined;
  private readonly adds: CounterMetric;
  private readonly latency: HistogramMetric;
  private readonly workDuration: HistogramMetric;
  private readonly unfinished: SettableGaugeMetric;
  private readonly longest: SettableGaugeMetric;
  private readonly retries: CounterMetric;
  /** key → time it was added (ms). */
  readonly addTimes = new Map<K, number>();
  /** key → time processing started (ms). */
  readonly processingStartTimes = new Map<K, number>();
  private timer: ClockTimer | undefined;
  private stopped = false;

  constructor(
    provider: MetricsProvider,
    name: string,
    private readonly clock: Clock,
    withPriority = false,
  ) {
    if (withPriority && provider.newDepthMetricWithPriority) {
      this.depthByPriority = provider.newDepthMetricWithPriority(name);
    } else {
      this.depth = provider.newDepthMetric(name);
    }
    this.adds = provider.newAddsMetric(name);
    this.latency = provider.newLatencyMetric(name);
    this.workDuration = provider.newWorkDurationMetric(name);
    this.unfinished = provider.newUnfinishedWorkSecondsMetric(name);
    this.longest = provider.newLongestRunningProcessorSecondsMetric(name);
    this.retries = provider.newRetriesMetric(name);
    this.schedule();
  }

  add(key: K, priority = 0): void {
    this.adds.inc();
    if (this.depthByPriority) this.depthByPriority.inc(priority);
    else this.depth?.inc();
    if (!this.addTimes.has(key)) this.addTimes.set(key, this.clock.now());
  }

  get(key: K, priority = 0): void {
    if (this.depthByPriority) this.depthByPriority.dec(priority);
    else this.depth?.dec();
    const now = this.clock.now();
    const added = this.addTimes.get(key);
    if (added !== undefined) {
      this.latency.observe((now - added) / 1000);
      this.addTimes.delete(key);
    }
    this.processingStartTimes.set(key, now);
  }

  /** A queued item left the queue without being handed out (priority queue priority change). */
  depthMove(from: number, to: number): void {
    if (this.depthByPriority) {
      this.depthByPriority.dec(from);
      this.depthByPriority.inc(to);
    }
  }

  done(key: K): void {
    const started = this.processingStartTimes.get(key);
    if (started !== undefined) {
      this.workDuration.observe((this.clock.now() - started) / 1000);
      this.processingStartTimes.delete(key);
    }
  }

  retry(): void {
    this.retries.inc();
  }

  /** Recomputes the unfinished-work and longest-running gauges. */
  updateUnfinishedWork(): void {
    const now = this.clock.now();
    let total = 0;
    let oldest = 0;
    for (const started of this.processingStartTimes.values()) {
      const age = (now - started) / 1000;
      total += age;
      if (age > oldest) oldest = age;
    }
    this.unfinished.set(total);
    this.longest.set(oldest);
  }

  /** Stops the periodic refresh (on shutdown); `done` of in-flight items is still recorded. */
  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.clock.setTimer(() => {
      this.timer = undefined;
      this.updateUnfinishedWork();
      this.schedule();
    }, UNFINISHED_WORK_UPDATE_PERIOD_MS);
  }
}

import { type Clock, realClock } from '@kubeloop/core';
import type { MetricsProvider } from '../metrics.js';
import { DrainWaiters } from './drain-waiters.js';
import { QueueMetrics } from './queue-metrics.js';
import { Ring } from './ring.js';

/** The options every queue's base reads (the options of `newQueue` and `newPriorityQueue` both carry them). */
export interface QueueBaseOptions<T> {
  name?: string | undefined;
  metricsProvider?: MetricsProvider | undefined;
  clock?: Clock | undefined;
  keyFn?: ((item: T) => unknown) | undefined;
}

/**
 * What the basic and the priority queue share however they keep their items: the clock, the key function, the
 * metrics (client-go's rule: a name and a provider enable them), the waiting `get()` callers, the count of
 * handed-out items and the shutdown with its drain (client-go `ShutDown` / `ShutDownWithDrain`).
 * @internal
 */
export abstract class QueueBase<T, W> {
  protected readonly clock: Clock;
  protected readonly keyFn: ((item: T) => unknown) | undefined;
  /** @internal */
  readonly metrics: QueueMetrics<unknown> | undefined;
  /** Pending `get()` callers, oldest first. */
  protected readonly waiters = new Ring<W>();
  /** Keys handed out and not yet `done`. */
  protected processingCount = 0;
  protected shutdownFlag = false;
  private readonly drain = new DrainWaiters();

  /** `priorityMetrics`: the depth gauge is labelled by priority (controller-runtime's priority queue). */
  constructor(options: QueueBaseOptions<T>, priorityMetrics: boolean) {
    this.clock = options.clock ?? realClock;
    this.keyFn = options.keyFn;
    if (options.name && options.metricsProvider) {
      this.metrics = new QueueMetrics(options.metricsProvider, options.name, this.clock, priorityMetrics);
    }
  }

  /** Stops accepting adds and wakes every waiting `get()` (idempotent). */
  shutDown(): void {
    if (this.shutdownFlag) return;
    this.shutdownFlag = true;
    this.metrics?.stop();
    this.stop();
  }

  /**
   * {@link QueueBase.shutDown}, then resolves once every handed-out item is `done` (controller-runtime's
   * priority queue does not wait; waiting costs nothing when nothing is in flight).
   */
  shutDownWithDrain(): Promise<void> {
    this.shutDown();
    return this.drain.wait(this.processingCount);
  }

  shuttingDown(): boolean {
    return this.shutdownFlag;
  }

  /** The queue's own part of the first `shutDown`: drop what it holds, wake the waiting `get()` callers. */
  protected abstract stop(): void;

  /** Call after `processingCount` went down: the last `done` releases the drain. */
  protected released(): void {
    if (this.processingCount === 0) this.drain.release();
  }

  protected keyOf(item: T): unknown {
    return this.keyFn === undefined ? item : this.keyFn(item);
  }
}

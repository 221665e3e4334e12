/**
 * @packageDocumentation
 * `@kubeloop/workqueue` — the work queues of client-go's `util/workqueue` and controller-runtime's priority
 * queue, for Kubernetes controllers or any keyed background work: a key is never handed to two workers at
 * once, a key added while it is being processed comes back after `done`, duplicates collapse; delayed adds
 * (`addAfter`), per-item retry backoff (`addRateLimited` / `forget` / `numRequeues`) with exponential,
 * token-bucket, fast-slow and max-of limiters; shutdown and shutdown-with-drain; metrics hooks; and an
 * injectable clock (`FakeClock` from `@kubeloop/core/testing`) so tests advance time instead of sleeping. All durations are ms
 * unless a name says seconds.
 */
export { type DelayingQueue, newDelayingQueue } from './delaying-queue.js';
export { InvalidArgumentError, WorkqueueError, type WorkqueueErrorCode } from './errors.js';
export {
  type CounterMetric,
  type DepthMetricWithPriority,
  type GaugeMetric,
  type HistogramMetric,
  type MetricsProvider,
  type SettableGaugeMetric,
  WORKQUEUE_DURATION_BUCKETS_SECONDS,
  WORKQUEUE_METRICS,
  type WorkqueueMetricDescriptor,
  type WorkqueueMetricKind,
} from './metrics.js';
export { newPriorityQueue } from './priority-queue.js';
export {
  type AddOptions,
  DEFAULT_FAIRNESS_WINDOW,
  type GetWithPriorityResult,
  LOW_PRIORITY,
  type PriorityQueue,
  type PriorityQueueOptions,
  type ReadyItem,
} from './priority-queue-types.js';
export {
  type GetResult,
  type KeyFn,
  newQueue,
  type Queue,
  type QueueDebugSizes,
  type QueueInspection,
  type QueueOptions,
} from './queue.js';
export {
  BucketRateLimiter,
  defaultControllerRateLimiter,
  defaultItemBasedRateLimiter,
  defaultPriorityQueueRateLimiter,
  ItemExponentialFailureRateLimiter,
  ItemFastSlowRateLimiter,
  MaxOfRateLimiter,
  type RateLimiter,
  WithMaxWaitRateLimiter,
} from './rate-limiters.js';
export {
  newRateLimitingQueue,
  type RateLimitingQueue,
  type RateLimitingQueueOptions,
} from './rate-limiting-queue.js';

import { FakeClock } from '@kubeloop/core/testing';
import { describe, expect, it } from 'vitest';
import {
  type MetricsProvider,
  newPriorityQueue,
  newRateLimitingQueue,
  WORKQUEUE_METRICS,
} from '../src/index.js';

/** A provider that records every metric value, the way a Prometheus binding would. */
function recordingProvider() {
  const values = new Map<string, number>();
  const observations = new Map<string, number[]>();
  const names: string[] = [];
  const gauge = (m: string) => ({
    inc: () => values.set(m, (values.get(m) ?? 0) + 1),
    dec: () => values.set(m, (values.get(m) ?? 0) - 1),
    set: (v: number) => values.set(m, v),
  });
  const hist = (m: string) => ({
    observe: (v: number) => observations.set(m, [...(observations.get(m) ?? []), v]),
  });
  const provider: MetricsProvider = {
    newDepthMetric: (n) => {
      names.push(n);
      return gauge('depth');
    },
    newAddsMetric: () => gauge('adds'),
    newLatencyMetric: () => hist('latency'),
    newWorkDurationMetric: () => hist('work'),
    newUnfinishedWorkSecondsMetric: () => gauge('unfinished'),
    newLongestRunningProcessorSecondsMetric: () => gauge('longest'),
    newRetriesMetric: () => gauge('retries'),
  };
  return { provider, values, observations, names };
}

describe('metrics', () => {
  it('reports depth, adds, latency, work duration, unfinished work, longest running and retries', async () => {
    const clock = new FakeClock();
    const m = recordingProvider();
    const q = newRateLimitingQueue<string>({ name: 'pods', metricsProvider: m.provider, clock });
    expect(m.names).toEqual(['pods']);
    q.add('a');
    q.add('a'); // duplicate: not counted
    q.add('b');
    expect(m.values.get('adds')).toBe(2);
    expect(m.values.get('depth')).toBe(2);
    clock.step(250);
    const r = await q.get();
    expect(m.values.get('depth')).toBe(1);
    expect(m.observations.get('latency')).toEqual([0.25]);
    clock.step(750); // the 500 ms refresh ran at t=1000: 'a' in flight for 0.75 s
    expect(m.values.get('unfinished')).toBeCloseTo(0.75);
    expect(m.values.get('longest')).toBeCloseTo(0.75);
    q.done(r.item as string);
    expect(m.observations.get('work')).toEqual([0.75]);
    q.addRateLimited('c');
    q.addAfter('d', 10);
    expect(m.values.get('retries')).toBe(2);
    clock.step(500);
    expect(m.values.get('unfinished')).toBe(0);
    q.shutDown();
    expect(clock.pendingTimers()).toBe(0);
  });

  it('no name, no metrics (client-go rule)', () => {
    const m = recordingProvider();
    const q = newRateLimitingQueue<string>({ metricsProvider: m.provider, clock: new FakeClock() });
    q.add('a');
    expect(m.values.size).toBe(0);
  });

  it('priority queue reports depth by priority when the provider supports it', async () => {
    const clock = new FakeClock();
    const m = recordingProvider();
    const byPriority = new Map<number, number>();
    const provider: MetricsProvider = {
      ...m.provider,
      newDepthMetricWithPriority: () => ({
        inc: (p) => byPriority.set(p, (byPriority.get(p) ?? 0) + 1),
        dec: (p) => byPriority.set(p, (byPriority.get(p) ?? 0) - 1),
      }),
    };
    const q = newPriorityQueue<string>({ name: 'pq', metricsProvider: provider, clock });
    q.add('a', { priority: -100 });
    q.add('b');
    q.add('a', { priority: 5 });
    q.add('c', { after: 100 });
    expect(Object.fromEntries(byPriority)).toEqual({ '-100': 0, '0': 1, '5': 1 });
    expect(m.values.get('retries')).toBe(1);
    clock.step(100);
    expect(byPriority.get(0)).toBe(2);
    await q.get();
    expect(byPriority.get(5)).toBe(0);
    q.shutDown();
  });

  it('describes controller-runtime metric names and labels', () => {
    expect(WORKQUEUE_METRICS.depth.name).toBe('workqueue_depth');
    expect(WORKQUEUE_METRICS.retries.name).toBe('workqueue_retries_total');
    expect(WORKQUEUE_METRICS.latency.labels).toEqual(['name', 'controller']);
    expect(WORKQUEUE_METRICS.depthWithPriority.labels).toContain('priority');
  });
});

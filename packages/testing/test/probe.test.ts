// The harness can fail: a controller that drops updates shows lost changes, and overlapping reconciles of
// one key are counted. (Otherwise the chaos suite's zeros would prove nothing.)
import { newControllerManagedBy, type ReconcileContext } from '@kubeloop/builder';
import { ConfigMap, type Reader } from '@kubeloop/client';
import { describe, expect, it } from 'vitest';
import { chaosPassed, drawSchedule, ReconcileProbe, runChaos, seededRandom } from '../src/index.js';

describe('chaos harness controls', () => {
  it('reports lost changes for a controller whose predicate drops every update', {
    timeout: 60_000,
  }, async () => {
    const report = await runChaos({
      seed: 7,
      objects: 20,
      durationMs: 1500,
      settleMs: 1500,
      writesPerSecond: 40,
      // enough random writes that some update an existing object even when a starved box makes only a few in
      // the 1.5 s (seen: 0 lost at load 30, nice 0 beside a soak at nice -10)
      minWrites: 40,
      faults: [],
      setup(env) {
        newControllerManagedBy(env.manager)
          .for(env.traffic.kind)
          .withEventFilter({ update: () => false })
          .complete(
            env.probe.wrap(env.traffic.kind, env.manager.getClient(), { reconcile: async () => undefined }),
          );
      },
      invariant: () => ['the invariant is reported'],
    });
    expect(report.lostChanges).toBeGreaterThan(0);
    expect(report.invariantViolations).toEqual(['the invariant is reported']);
    expect(chaosPassed(report)).toBe(false);
  });

  it('counts a reconcile that starts while another of the same key runs', async () => {
    const probe = new ReconcileProbe();
    const reader = { get: async () => ({ metadata: { resourceVersion: '5' } }) } as unknown as Reader;
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const r = probe.wrap(ConfigMap, reader, { reconcile: () => gate.then(() => undefined) });
    const ctx = {} as ReconcileContext;
    const a = r.reconcile(ctx, { namespace: 'ns', name: 'x' });
    const b = r.reconcile(ctx, { namespace: 'ns', name: 'x' });
    const c = r.reconcile(ctx, { namespace: 'ns', name: 'y' });
    release();
    await Promise.all([a, b, c]);
    expect(probe.concurrentReconciles).toBe(1);
    expect(probe.maxInFlightPerKey).toBe(2);
    expect(probe.observations('ns/x')?.seen.has('5')).toBe(true);
  });

  it('draws the same schedule from the same seed', () => {
    const a = drawSchedule(seededRandom(42), 10_000, 500, ['watchDrop', 'restart', 'throttle']);
    const b = drawSchedule(seededRandom(42), 10_000, 500, ['watchDrop', 'restart', 'throttle']);
    expect(a).toEqual(b);
    expect(a.length).toBeGreaterThan(5);
    expect(drawSchedule(seededRandom(43), 10_000, 500, ['watchDrop', 'restart', 'throttle'])).not.toEqual(a);
  });
});

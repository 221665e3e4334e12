import { onAbort } from '@kubeloop/core';
import { describe, expect, it } from 'vitest';
import {
  Controller,
  type LeaderElectionCallbacks,
  type LeaderElectorHook,
  newManager,
  type Request,
  type Source,
} from '../src/index.js';
import { offlineConfig } from './support/config.js';

// Warm replicas (controller-runtime EnableWarmup): a standby starts its controllers' sources before it wins the
// lease, so the winner's workers start on a synced cache.

const config = offlineConfig('builder-warmup-test');

/** A source that records its starts and delivers `keys` when started; synced as soon as it started. */
function recordingSource(events: string[], keys: string[]): Source & { starts: number } {
  let started = false;
  const src = {
    starts: 0,
    start(_signal: AbortSignal, queue: { add(req: Request): void }) {
      src.starts++;
      started = true;
      events.push('source start');
      for (const name of keys) queue.add({ namespace: 'ns', name });
    },
    async waitForSync() {
      return started;
    },
  };
  return src;
}

function testElector() {
  let cb: LeaderElectionCallbacks | undefined;
  const elector: LeaderElectorHook = {
    async run(signal, callbacks) {
      cb = callbacks;
      await new Promise<void>((r) => onAbort(signal, r));
    },
  };
  return { elector, running: () => cb !== undefined, win: () => cb?.onStartedLeading() };
}

describe('warm replicas (controller-runtime EnableWarmup)', () => {
  it.each([true, false])(
    'enableWarmup %s: the sources start before the lease is won only when on; start never starts them twice',
    async (enableWarmup) => {
      const events: string[] = [];
      const le = testElector();
      const mgr = newManager(config, { leaderElection: { id: 'warm', elector: le.elector } });
      const reconciled: string[] = [];
      const ctrl = new Controller(
        'warm',
        {
          reconcile: async (_ctx, req) => {
            reconciled.push(req.name);
            events.push(`reconcile ${req.name}`);
          },
        },
        { enableWarmup },
      );
      const src = recordingSource(events, ['a', 'b']);
      ctrl.watch(src);
      mgr.add(ctrl);
      const ac = new AbortController();
      const run = mgr.start(ac.signal);
      await expect.poll(() => le.running()).toBe(true);
      // A standby: nothing reconciles; a warm one already holds its sources' keys.
      await new Promise((r) => setImmediate(r));
      expect(src.starts).toBe(enableWarmup ? 1 : 0);
      expect(ctrl.queue.len()).toBe(enableWarmup ? 2 : 0);
      expect(reconciled).toEqual([]);
      le.win();
      await expect.poll(() => reconciled.length).toBe(2);
      expect(src.starts).toBe(1);
      expect(events[0]).toBe('source start');
      ac.abort();
      await run;
    },
  );

  it('a controller that runs on every replica is not warmed up: its sources start once, with the others', async () => {
    const events: string[] = [];
    const le = testElector();
    const mgr = newManager(config, { leaderElection: { id: 'warm', elector: le.elector } });
    const ctrl = new Controller(
      'everywhere',
      { reconcile: async () => {} },
      { enableWarmup: true, needLeaderElection: false },
    );
    const src = recordingSource(events, ['a']);
    ctrl.watch(src);
    mgr.add(ctrl);
    const ac = new AbortController();
    const run = mgr.start(ac.signal);
    await expect.poll(() => le.running()).toBe(true);
    await expect.poll(() => ctrl.hasSynced()).toBe(true);
    expect(src.starts).toBe(1);
    ac.abort();
    await run;
  });

  it('warmup does nothing without enableWarmup, or once its signal has aborted', async () => {
    const events: string[] = [];
    const cold = new Controller('cold', { reconcile: async () => {} });
    cold.watch(recordingSource(events, []));
    await cold.warmup(new AbortController().signal);
    const warm = new Controller('warm', { reconcile: async () => {} }, { enableWarmup: true });
    warm.watch(recordingSource(events, []));
    await warm.warmup(AbortSignal.abort());
    expect(events).toEqual([]);
  });
});

import {
  GracefulShutdownTimeoutError,
  newControllerManagedBy,
  newManager,
  newMetricsRegistry,
} from '@kubeloop/builder';
import { ConfigMap } from '@kubeloop/client';
import { Lease } from '@kubeloop/client/kinds';
import type { Registry } from 'prom-client';
import { describe, expect, it, vi } from 'vitest';
import { testConfig, useLiveCluster } from './support.js';

const FAST = { leaseDurationMs: 2000, renewDeadlineMs: 1500, retryPeriodMs: 500 };

async function errorsTotal(registry: Registry): Promise<number> {
  const m = await registry.getSingleMetric('controller_runtime_reconcile_errors_total')?.get();
  return (m?.values ?? []).reduce((s, v) => s + v.value, 0);
}

describe('C24 an in-flight reconcile at SIGTERM', () => {
  const live = useLiveCluster();

  for (const slow of [false, true]) {
    it(`C24${slow ? ' (reconcile overruns the grace period)' : ''}: ${
      slow
        ? 'the manager gives up at the graceful shutdown timeout with a typed error and keeps the lease'
        : "the reconcile's last write reaches the server before the lease is released; nothing starts after the signal"
    }`, async () => {
      const { api, ns } = await live.namespace('c24');
      const lease = 'c24-lock';
      const registry = newMetricsRegistry();
      const mgr = newManager(testConfig(), {
        ...FAST,
        gracefulShutdownTimeoutMs: slow ? 1500 : 5000,
        cache: { defaultNamespaces: [ns] },
        leaderElection: { id: lease, namespace: ns, identity: 'a', releaseOnCancel: true },
        metrics: { registry },
      });
      const client = mgr.getClient();
      let started = 0;
      let inFlight = false;
      let afterSignal = 0;
      let resultWritten = false;
      const stop = new AbortController();
      newControllerManagedBy(mgr)
        .for(ConfigMap)
        .complete({
          async reconcile(_ctx, req) {
            if (req.name === 'result') return;
            if (stop.signal.aborted) afterSignal++;
            started++;
            inFlight = true;
            // The work: 1 s (or far past the grace period), deliberately not cut short by the signal.
            await new Promise((r) => setTimeout(r, slow ? 60_000 : 1000).unref());
            await client.patch(
              ConfigMap,
              { namespace: ns, name: 'result' },
              { type: 'merge', data: { data: { done: req.name } } },
            );
            resultWritten = true;
            inFlight = false;
          },
        });
      await api.create(ConfigMap, { metadata: { namespace: ns, name: 'result' } });
      const done = mgr.start(stop.signal).catch((e: unknown) => e);
      live.cleanups.push(async () => {
        stop.abort();
        await done;
      });
      await mgr.elected();
      // The Lease's write history, each write with whether the reconcile's patch had been answered by then.
      const leaseWrites: Array<{ holder: string; resultWritten: boolean }> = [];
      const watchStop = new AbortController();
      live.cleanups.push(async () => watchStop.abort());
      void (async () => {
        try {
          for await (const ev of api.watch(Lease, { namespace: ns, signal: watchStop.signal })) {
            if (ev.type !== 'ADDED' && ev.type !== 'MODIFIED') continue;
            leaseWrites.push({ holder: ev.object.spec?.holderIdentity ?? '', resultWritten });
          }
        } catch {
          // stopped
        }
      })();
      await vi.waitFor(() => expect(leaseWrites.at(-1)?.holder).toBe('a'), { timeout: 20_000 });
      const errorsBefore = await errorsTotal(registry);
      await api.create(ConfigMap, { metadata: { namespace: ns, name: 'work-1' } });
      await vi.waitFor(() => expect(inFlight).toBe(true), { timeout: 20_000 });
      // More work queued behind it: none of it may start once the signal came.
      await api.create(ConfigMap, { metadata: { namespace: ns, name: 'work-2' } });
      stop.abort();
      const outcome = await done;
      const held = await api.get(Lease, { namespace: ns, name: lease });
      const result = await api.get(ConfigMap, { namespace: ns, name: 'result' });
      expect(afterSignal).toBe(0);
      expect(started).toBe(1);
      if (!slow) {
        expect(outcome).toBeUndefined();
        expect(result.data?.done).toBe('work-1');
        // Released (holder cleared) by a write that came after the server had answered the reconcile's last
        // patch: the watch delivers the release only once it is stored, and by then the patch was done.
        expect(held.spec?.holderIdentity ?? '').toBe('');
        await vi.waitFor(() => expect(leaseWrites.some((w) => w.holder === '')).toBe(true), {
          timeout: 20_000,
        });
        expect(leaseWrites.filter((w) => w.holder === '')).toEqual([{ holder: '', resultWritten: true }]);
        expect(await errorsTotal(registry)).toBe(errorsBefore);
      } else {
        expect(outcome).toBeInstanceOf(GracefulShutdownTimeoutError);
        // Not released: another replica waits for expiry.
        expect(held.spec?.holderIdentity).toBe('a');
        expect(result.data?.done).toBeUndefined();
      }
    });
  }
});

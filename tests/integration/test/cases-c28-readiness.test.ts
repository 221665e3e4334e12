import { cacheSyncCheck, newControllerManagedBy, newManager } from '@kubeloop/builder';
import { ConfigMap, isNotFound, Secret } from '@kubeloop/client';
import type { RestConfig } from '@kubeloop/config';
import { afterEach, describe, expect, it } from 'vitest';
import { realCluster, useFaultServer } from './support/fault-server.js';
import { testConfig, useLiveCluster, waitFor } from './support.js';

interface Probe {
  readonly start: number;
  readonly at: number;
  readonly ms: number;
  readonly status: number;
  readonly body: string;
}

/**
 * A manager on `config` for `ns` with the informer readiness check and a ping liveness check, whose
 * ConfigMap reconciler reads a Secret through the cached client (starting a Secret informer on first use);
 * probes served on a free port; stopped through `stops`.
 */
async function startProbedManager(config: RestConfig, ns: string, stops: Array<() => Promise<void>>) {
  const mgr = newManager(config, { namespace: ns, healthProbeBindAddress: '127.0.0.1:0' });
  mgr.addReadyzCheck('informers', cacheSyncCheck(mgr));
  mgr.addHealthzCheck('ping', () => {});
  const client = mgr.getClient();
  const seen = { reconciled: 0, secretWaitFrom: 0, secretWaitTo: 0 };
  newControllerManagedBy(mgr)
    .for(ConfigMap)
    .complete({
      async reconcile(_c, req) {
        if (!seen.secretWaitFrom) seen.secretWaitFrom = Date.now();
        try {
          await client.get(Secret, { namespace: req.namespace, name: 'lazy' }); // starts the Secret informer
        } catch (e) {
          if (!isNotFound(e)) throw e;
        }
        if (!seen.secretWaitTo) seen.secretWaitTo = Date.now();
        seen.reconciled += 1;
      },
    });
  const stop = new AbortController();
  const run = mgr.start(stop.signal);
  stops.push(async () => {
    stop.abort();
    await run;
  });
  await waitFor(() => mgr.healthProbeServerAddress() !== undefined, 'the probe server');
  const base = `http://${mgr.healthProbeServerAddress()}`;
  const probe = async (path: string): Promise<Probe> => {
    const start = Date.now();
    const t = performance.now();
    const res = await fetch(`${base}${path}`);
    const body = await res.text();
    return { start, at: Date.now(), ms: performance.now() - t, status: res.status, body };
  };
  return { seen, probe };
}

describe('C28 readiness and liveness, probed over HTTP', () => {
  const live = useLiveCluster();

  it('C28: /readyz becomes 200 once the first reconcile (which starts a Secret informer) is done; /healthz 200 throughout', async () => {
    const { api, ns } = await live.namespace('c28');
    await api.create(ConfigMap, { metadata: { namespace: ns, name: 'cm' } });
    const { seen, probe } = await startProbedManager(testConfig(), ns, live.cleanups);
    const healthz: Probe[] = [];
    let readyz: Probe | undefined;
    await waitFor(async () => {
      healthz.push(await probe('/healthz'));
      readyz = await probe('/readyz?verbose');
      return seen.reconciled > 0 && readyz.status === 200;
    }, 'the first reconcile and a ready manager');
    expect(readyz?.body).toMatch(/\[\+\]informers ok/);
    expect(healthz.every((p) => p.status === 200)).toBe(true);
    expect(seen.secretWaitTo).toBeGreaterThan(0);
  });
});

// Fault injection: the in-process server holds the ConfigMap and Secret lists to open a window in which the
// informers are unsynced, which a real cluster cannot be made to do.
describe.skipIf(realCluster)(
  'C28 readiness while informers sync (fault injection: held lists; envtest only)',
  () => {
    const ctx = useFaultServer('kubeloop-c28');
    const stops: Array<() => Promise<void>> = [];
    afterEach(async () => {
      while (stops.length) await stops.pop()?.();
    });

    it('C28: /readyz is 503 until every informer in use (incl. one made by the first reconcile) synced, then 200; /healthz 200 throughout', async () => {
      const ns = await ctx.namespace('c28');
      await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: 'cm' } });
      ctx.server.faults.delayRequests({
        match: { verb: 'list', resource: 'configmaps', namespace: ns },
        delayMs: 2000,
      });
      ctx.server.faults.delayRequests({
        match: { verb: 'list', resource: 'secrets', namespace: ns },
        delayMs: 3000,
      });
      const { seen, probe } = await startProbedManager(ctx.config, ns, stops);
      const ready: Probe[] = [];
      const live: Probe[] = [];
      while (seen.reconciled === 0 || ready.at(-1)?.status !== 200) {
        ready.push(await probe('/readyz?verbose'));
        live.push(await probe('/healthz'));
        if (ready.length > 400) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const firstOk = ready.findIndex((p) => p.status === 200);
      expect(firstOk).toBeGreaterThan(0);
      expect(ready.at(-1)?.status).toBe(200);
      // Not vacuously ready before the cache started, nor while the ConfigMap informer (2 s list) synced.
      expect(ready[0]?.status).toBe(503);
      expect(ready[0]?.body).toMatch(
        /\[-\]informers failed: (the cache has not started|the manager has not started its controllers|not synced)/,
      );
      expect(ready.filter((p) => p.at < seen.secretWaitFrom - 300).every((p) => p.status === 503)).toBe(true);
      // Never ready while the Secret informer the first reconcile made was syncing (its list held 3 s).
      const duringSecretSync = ready.filter(
        (p) => p.start > seen.secretWaitFrom + 100 && p.at < seen.secretWaitTo - 100,
      );
      expect(duringSecretSync.length).toBeGreaterThan(5);
      expect(duringSecretSync.every((p) => p.status === 503)).toBe(true);
      expect(seen.secretWaitTo - seen.secretWaitFrom).toBeGreaterThanOrEqual(2500);
      expect(live.every((p) => p.status === 200)).toBe(true);
      // Probes answer from checks alone (no API request): generously bounded for a shared CI box.
      expect(Math.max(...ready.map((p) => p.ms), ...live.map((p) => p.ms))).toBeLessThan(1000);
    });
  },
);

import { cacheSyncCheck, newControllerManagedBy, newManager } from '@kubeloop/builder';
import { ConfigMap, isNotFound, Secret } from '@kubeloop/client';
import { afterEach, describe, expect, it } from 'vitest';
import { realCluster, useFaultServer } from './support/fault-server.js';
import { waitFor } from './support.js';

interface Probe {
  readonly start: number;
  readonly at: number;
  readonly ms: number;
  readonly status: number;
  readonly body: string;
}

describe.skipIf(realCluster)('C28 readiness before sync, probed over HTTP', () => {
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
    const mgr = newManager(ctx.config, { namespace: ns, healthProbeBindAddress: '127.0.0.1:0' });
    mgr.addReadyzCheck('informers', cacheSyncCheck(mgr));
    mgr.addHealthzCheck('ping', () => {});
    const client = mgr.getClient();
    let reconciled = 0;
    let secretWaitFrom = 0;
    let secretWaitTo = 0;
    newControllerManagedBy(mgr)
      .for(ConfigMap)
      .complete({
        async reconcile(_c, req) {
          if (!secretWaitFrom) secretWaitFrom = Date.now();
          try {
            await client.get(Secret, { namespace: req.namespace, name: 'lazy' }); // starts the Secret informer
          } catch (e) {
            if (!isNotFound(e)) throw e;
          }
          if (!secretWaitTo) secretWaitTo = Date.now();
          reconciled += 1;
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
    const ready: Probe[] = [];
    const live: Probe[] = [];
    while (reconciled === 0 || ready.at(-1)?.status !== 200) {
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
    expect(ready.filter((p) => p.at < secretWaitFrom - 300).every((p) => p.status === 503)).toBe(true);
    // Never ready while the Secret informer the first reconcile made was syncing (its list held 3 s).
    const duringSecretSync = ready.filter((p) => p.start > secretWaitFrom + 100 && p.at < secretWaitTo - 100);
    expect(duringSecretSync.length).toBeGreaterThan(5);
    expect(duringSecretSync.every((p) => p.status === 503)).toBe(true);
    expect(secretWaitTo - secretWaitFrom).toBeGreaterThanOrEqual(2500);
    expect(live.every((p) => p.status === 200)).toBe(true);
    // Probes answer from checks alone (no API request): generously bounded for a shared CI box.
    expect(Math.max(...ready.map((p) => p.ms), ...live.map((p) => p.ms))).toBeLessThan(1000);
  });
});

import { ConfigMap, Namespace, newClient, Secret } from '@kubeloop/client';
import { describe, expect, it, vi } from 'vitest';
import {
  enqueueRequestForObject,
  newControllerManagedBy,
  newManager,
  newMetricsRegistry,
  type Request,
} from '../src/index.js';
import { useEnvtest } from './support/config.js';

describe('manager: sync period and readiness reasons (envtest)', () => {
  const env = useEnvtest('manager-cache-options-test');

  it('cache.syncPeriodMs reaches the informers: resyncs reach the controller', async () => {
    const api = newClient(env.config);
    const ns = 'sync-period';
    await api.create(Namespace, { metadata: { name: ns } });
    await api.create(ConfigMap, { metadata: { namespace: ns, name: 'one' } });
    const mgr = newManager(env.config, {
      cache: { defaultNamespaces: [ns], syncPeriodMs: 200 },
      metrics: { registry: newMetricsRegistry() },
    });
    let reconciles = 0;
    newControllerManagedBy(mgr)
      .for(ConfigMap)
      .complete({
        async reconcile(_ctx, req: Request) {
          if (req.name === 'one') reconciles++;
        },
      });
    const ac = new AbortController();
    const run = mgr.start(ac.signal);
    try {
      // One reconcile from the initial list; every further one is a resync (the object never changes).
      await vi.waitFor(() => expect(reconciles).toBeGreaterThanOrEqual(3), { timeout: 10_000 });
    } finally {
      ac.abort();
      await run;
      await api.close();
    }
  }, 30_000);

  it('readiness names the informer (GVK) that has not synced, not only the controller', async () => {
    const api = newClient(env.config);
    const ns = 'readiness-gvk';
    await api.create(Namespace, { metadata: { name: ns } });
    // Holds the Secrets' initial sync whichever way it asks: a list, or a streaming list (WatchList, the default).
    const held = env.server.faults.delayRequests({
      match: { initialList: true, namespace: ns, resource: 'secrets' },
      barrier: 1000,
      delayMs: 60_000,
    });
    const mgr = newManager(env.config, {
      cache: { defaultNamespaces: [ns] },
      metrics: { registry: newMetricsRegistry() },
    });
    newControllerManagedBy(mgr)
      .for(ConfigMap)
      .watches(Secret, enqueueRequestForObject())
      .named('cm-and-secrets')
      .complete({ reconcile: async () => undefined });
    const ac = new AbortController();
    const run = mgr.start(ac.signal);
    try {
      await vi.waitFor(() => expect(held.hits).toBeGreaterThanOrEqual(1), { timeout: 10_000 });
      await vi.waitFor(
        () => {
          const pending = mgr.readinessPending() ?? '';
          expect(pending).toMatch(/cm-and-secrets/);
          expect(pending).toMatch(/informers not synced: .*Secret\.v1/);
          expect(pending).not.toMatch(/ConfigMap/);
        },
        { timeout: 10_000 },
      );
    } finally {
      held.clear();
      ac.abort();
      await run;
      await api.close();
    }
  }, 30_000);
});

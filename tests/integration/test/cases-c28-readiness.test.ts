import { cacheSyncCheck, newControllerManagedBy, newManager } from '@kubeloop/builder';
import { ConfigMap, isNotFound, Secret } from '@kubeloop/client';
import type { RestConfig } from '@kubeloop/config';
import { afterEach, describe, expect, it } from 'vitest';
import { realCluster, useFaultServer } from './support/fault-server.js';
import { testConfig, useLiveCluster, waitFor } from './support.js';

interface Probe {
  readonly status: number;
  readonly body: string;
}

/**
 * A manager on `config` for `ns` with the informer readiness check and a ping liveness check, whose
 * ConfigMap reconciler reads a Secret through the cached client (starting a Secret informer on first use);
 * probes served on a free port; stopped through `stops`.
 */
async function startProbedManager(config: RestConfig, ns: string, stops: Array<() => Promise<void>>) {
  const mgr = newManager(config, {
    cache: { defaultNamespaces: [ns] },
    health: { bindAddress: '127.0.0.1:0' },
  });
  mgr.addReadyzCheck('informers', cacheSyncCheck(mgr));
  mgr.addHealthzCheck('ping', () => {});
  const client = mgr.getClient();
  const seen = { reconciled: 0, secretGetStarted: false, secretGetDone: false };
  newControllerManagedBy(mgr)
    .for(ConfigMap)
    .complete({
      async reconcile(_c, req) {
        seen.secretGetStarted = true;
        try {
          await client.get(Secret, { namespace: req.namespace, name: 'lazy' }); // starts the Secret informer
        } catch (e) {
          if (!isNotFound(e)) throw e;
        }
        seen.secretGetDone = true;
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
    const res = await fetch(`${base}${path}`);
    return { status: res.status, body: await res.text() };
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
    expect(seen.secretGetDone).toBe(true);
  });
});

// Fault injection: the in-process server holds the ConfigMap and Secret lists to open a window in which the
// informers are unsynced, which a real cluster cannot be made to do. The lists are held until the test lets
// them go (a barrier no request count reaches; `clear()` releases what it holds), so each window lasts
// exactly as long as the test looks into it, whatever the load on the machine: every claim below is about the
// order of events, none about milliseconds.
describe.skipIf(realCluster)(
  'C28 readiness while informers sync (fault injection: held lists; envtest only)',
  () => {
    const ctx = useFaultServer('kubeloop-c28');
    const stops: Array<() => Promise<void>> = [];
    afterEach(async () => {
      while (stops.length) await stops.pop()?.();
    });

    it('C28: /readyz is 503 naming the unsynced informer until every informer in use (incl. one made by the first reconcile) synced, then 200; /healthz 200 throughout; probes answer while lists hang', async () => {
      const ns = await ctx.namespace('c28');
      await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: 'cm' } });
      const hold = (resource: string) =>
        ctx.server.faults.delayRequests({
          match: { initialList: true, resource, namespace: ns },
          barrier: 1_000_000,
          delayMs: 120_000,
        });
      const configMapList = hold('configmaps');
      const secretList = hold('secrets');
      const { seen, probe } = await startProbedManager(ctx.config, ns, stops);
      const ready: Probe[] = [];
      const live: Probe[] = [];
      const probeBoth = async (): Promise<Probe> => {
        const r = await probe('/readyz?verbose');
        ready.push(r);
        live.push(await probe('/healthz'));
        return r;
      };

      // The ConfigMap list hangs at the server: probes still answer (from the checks alone; one that waited on
      // the API would hang with the list), 503, not vacuously ready before the cache or controllers started.
      await waitFor(async () => {
        await probeBoth();
        return configMapList.hits >= 1;
      }, 'the ConfigMap list held at the server');
      const whileConfigMapsHeld = await probeBoth();
      configMapList.clear();

      // The first reconcile starts a Secret informer, whose list hangs in turn: still 503, naming it.
      await waitFor(async () => {
        await probeBoth();
        return seen.secretGetStarted && secretList.hits >= 1;
      }, 'the first reconcile waiting on the held Secret list');
      const whileSecretsHeld = await probeBoth();
      expect(seen.reconciled).toBe(0);
      const beforeRelease = ready.length;
      secretList.clear();

      await waitFor(
        async () => (await probeBoth()).status === 200 && seen.reconciled > 0,
        'ready once both lists were answered',
      );
      expect(ready[0]?.status).toBe(503);
      expect(ready[0]?.body).toMatch(
        /\[-\]informers failed: (the cache has not started|the manager has not started its controllers|not synced)/,
      );
      expect(whileConfigMapsHeld.status).toBe(503);
      expect(whileConfigMapsHeld.body).toMatch(/\[-\]informers failed: .*ConfigMap/);
      expect(whileSecretsHeld.status).toBe(503);
      expect(whileSecretsHeld.body).toMatch(/\[-\]informers failed: .*informers not synced: .*Secret/);
      // Never ready before the last held list was let go.
      expect(ready.slice(0, beforeRelease).map((p) => p.status)).toEqual(
        Array.from({ length: beforeRelease }, () => 503),
      );
      expect(ready.at(-1)?.body).toMatch(/\[\+\]informers ok/);
      expect(live.every((p) => p.status === 200)).toBe(true);
    });
  },
);

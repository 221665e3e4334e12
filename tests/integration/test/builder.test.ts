import { newControllerManagedBy, newManager, type Request } from '@kubeloop/builder';
import { type Cached, ConfigMap, isAlreadyExists, isNotFound, Pod } from '@kubeloop/client';
import type { V1Pod } from '@kubeloop/client/models';
import { describe, expect, it } from 'vitest';
import {
  captureLogger,
  type LogRecord,
  podManifest,
  testConfig,
  useLiveCluster,
  waitFor,
} from './support.js';

describe('builder through the manager (cache-backed client, event filters, concurrency)', () => {
  const live = useLiveCluster();

  it('filters events with predicates, reads from the cache, writes to the API server', async () => {
    const { api, ns } = await live.namespace('builder');

    const records: LogRecord[] = [];
    const mgr = newManager(testConfig(), {
      logger: captureLogger(records),
      cache: { defaultNamespaces: [ns] },
    });
    const client = mgr.getClient();
    const seen: Request[] = [];
    newControllerManagedBy(mgr)
      .for(Pod)
      .named('mirror')
      .withEventFilter<V1Pod>({
        create: (p) => p.metadata?.labels?.skip !== 'true',
      })
      .withOptions({ maxConcurrentReconciles: 3 })
      .complete({
        async reconcile(_ctx, req) {
          seen.push(req);
          let pod: Cached<V1Pod>;
          try {
            pod = await client.get(Pod, req); // served by the cache
          } catch (err) {
            if (isNotFound(err)) return;
            throw err;
          }
          expect(Object.isFrozen(pod)).toBe(true);
          // Writes go to the API server: one ConfigMap per pod.
          try {
            await client.create(ConfigMap, {
              metadata: { namespace: req.namespace, name: `mirror-${req.name}` },
              data: { phase: pod.status?.phase ?? '' },
            });
          } catch (err) {
            if (!isAlreadyExists(err)) throw err;
          }
        },
      });
    const ac = new AbortController();
    const run = mgr.start(ac.signal);
    live.cleanups.push(async () => {
      ac.abort();
      await run;
    });

    // The filtered pod comes first: events are delivered in order, so were it not filtered it would be
    // queued, and reconciled, before the other two.
    await api.create(Pod, podManifest(ns, 'skipped', { skip: 'true' }));
    await api.create(Pod, podManifest(ns, 'keep-1'));
    await api.create(Pod, podManifest(ns, 'keep-2'));
    await waitFor(async () => {
      const names = (await api.list(ConfigMap, { namespace: ns })).items.map((c) => c.metadata?.name);
      return names.includes('mirror-keep-1') && names.includes('mirror-keep-2');
    }, 'mirror ConfigMaps for both kept pods');
    expect(seen.map((r) => r.name)).not.toContain('skipped');
    expect((await api.list(ConfigMap, { namespace: ns })).items.map((c) => c.metadata?.name)).not.toContain(
      'mirror-skipped',
    );
    expect(records.filter((r) => r.level === 'error')).toEqual([]);
  });
});

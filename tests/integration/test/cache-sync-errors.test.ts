import { ControllerError, newManager } from '@kubeloop/builder';
import { InformerSyncError, StoreError } from '@kubeloop/cache';
import { ConfigMap } from '@kubeloop/client';
import type { V1ConfigMap } from '@kubeloop/client/models';
import { afterEach, describe, expect, it } from 'vitest';
import { liveClient, testConfig, uniqueName, withNamespace } from './support.js';

describe('a cache that can not sync says why (breaker bug 1)', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });

  it('the manager sync timeout names the kind and carries the informer error as cause (a field index function that throws), not a bare "timed out"', async () => {
    const api = liveClient();
    cleanups.push(() => api.close());
    const ns = uniqueName('sync-err');
    cleanups.push(await withNamespace(api, ns));
    await api.create(ConfigMap, { metadata: { namespace: ns, name: 'no-data' } });

    const mgr = newManager(testConfig(), { cache: { defaultNamespaces: [ns], syncTimeoutMs: 1500 } });
    mgr.getFieldIndexer().indexField<V1ConfigMap>(ConfigMap, 'data.k', (cm) => {
      if (!cm.data) throw new TypeError(`configmap ${cm.metadata?.name} has no data`);
      return [cm.data.k ?? ''];
    });
    mgr.getCache().getInformer(ConfigMap);
    const ac = new AbortController();
    cleanups.push(async () => ac.abort());
    const err = (await mgr.start(ac.signal).then(
      () => undefined,
      (e: unknown) => e,
    )) as ControllerError;
    expect(err).toBeInstanceOf(ControllerError);
    expect(err.message).toContain('waiting for the cache to sync');
    expect(err.message).toContain('ConfigMap.v1');
    expect(err.message).toContain('configmap no-data has no data');
    const why = err.cause as InformerSyncError;
    expect(why).toBeInstanceOf(InformerSyncError);
    expect(why.kind).toBe('ConfigMap.v1');
    // The store refused the object (StoreError naming the index and the key), the index function's error inside.
    const refused = why.cause as StoreError;
    expect(refused).toBeInstanceOf(StoreError);
    expect(refused.message).toContain('field:data.k');
    expect((refused.cause as Error).message).toBe('configmap no-data has no data');
  });
});

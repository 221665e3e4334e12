import { ControllerError, newManager } from '@kubeloop/builder';
import { InformerSyncError, StoreError } from '@kubeloop/cache';
import { ConfigMap } from '@kubeloop/client';
import type { V1ConfigMap } from '@kubeloop/client/models';
import type { RestConfig } from '@kubeloop/config';
import { FakeClock } from '@kubeloop/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { realCluster, useFaultServer } from './support/fault-server.js';
import { liveClient, testConfig, uniqueName, withNamespace } from './support.js';

/**
 * Starts a manager over `ns` (holding a ConfigMap without data) whose field index function throws, and returns
 * the error its start rejects with once its 1.5 s sync timeout ran out. The timeout runs on the cache's clock:
 * a real 1.5 s ran out before a loaded machine's informer had listed (soak seed 1693076877), and the message had
 * no index error to carry. Here it runs out only once the informer has met the error.
 */
async function syncTimeoutError(config: RestConfig, ns: string, cleanups: Array<() => Promise<void>>) {
  const clock = new FakeClock();
  const mgr = newManager(config, { cache: { defaultNamespaces: [ns], syncTimeoutMs: 1500, clock } });
  let indexErrors = 0;
  mgr.getFieldIndexer().indexField<V1ConfigMap>(ConfigMap, 'data.k', (cm) => {
    if (!cm.data) {
      indexErrors++;
      throw new TypeError(`configmap ${cm.metadata?.name} has no data`);
    }
    return [cm.data.k ?? ''];
  });
  const informer = mgr.getCache().getInformer(ConfigMap);
  const ac = new AbortController();
  cleanups.push(async () => ac.abort());
  let settled = false;
  const started = mgr
    .start(ac.signal)
    .then(
      () => undefined,
      (e: unknown) => e,
    )
    .finally(() => {
      settled = true;
    });
  await vi.waitFor(() => {
    expect(indexErrors).toBeGreaterThan(0);
    expect(informer.status().lastListError).toBeDefined();
  });
  // Past the timeout (the manager's wait may start after the informer's list: step until it has run out).
  await vi.waitFor(() => {
    clock.step(1500);
    expect(settled).toBe(true);
  });
  return (await started) as ControllerError;
}

function expectSyncErrorWithCause(err: ControllerError): void {
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
}

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
    expectSyncErrorWithCause(await syncTimeoutError(testConfig(), ns, cleanups));
  });
});

describe.skipIf(realCluster)('the sync timeout on the cache clock (envtest fault injection)', () => {
  const ctx = useFaultServer('kubeloop-cache-sync-errors-test');

  it('a list held longer than the 1.5 s sync timeout still ends in the error naming the index function failure (the timeout runs on the cache clock)', async () => {
    const ns = await ctx.namespace('sync-err-slow');
    await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: 'no-data' } });
    // The soak's loaded machine, made certain: on the real clock the timeout ran out first (a bare "timed out").
    ctx.server.faults.delayRequests({ match: { verb: 'list', namespace: ns }, delayMs: 2500, times: 1 });
    expectSyncErrorWithCause(await syncTimeoutError(ctx.config, ns, ctx.cleanups));
  });
});

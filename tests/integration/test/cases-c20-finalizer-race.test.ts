import {
  type ApiClient,
  ConfigMap,
  isInvalid,
  isNotFound,
  newClient,
  retryOnConflict,
} from '@kubeloop/client';
import { describe, expect, it } from 'vitest';
import { realCluster, useFaultServer } from './support/fault-server.js';
import { waitFor } from './support.js';

describe.skipIf(realCluster)('C20 finalizer removal race (envtest fault injection)', () => {
  const ctx = useFaultServer('kubeloop-c20');

  /** Removes `finalizer` from the ConfigMap: fresh read, merge patch carrying the read's resourceVersion. */
  function removeFinalizer(client: ApiClient, key: { namespace: string; name: string }, finalizer: string) {
    return retryOnConflict(async () => {
      const cm = await client.get(ConfigMap, key);
      const finalizers = cm.metadata?.finalizers ?? [];
      if (!finalizers.includes(finalizer)) return;
      await client.patch(ConfigMap, key, {
        type: 'merge',
        data: {
          metadata: {
            resourceVersion: cm.metadata?.resourceVersion,
            finalizers: finalizers.filter((f) => f !== finalizer),
          },
        },
      });
    });
  }

  async function terminatingWithTwoFinalizers(ns: string) {
    const key = { namespace: ns, name: 'fin' };
    await ctx.api.create(ConfigMap, { metadata: { ...key, finalizers: ['example.com/a', 'example.com/b'] } });
    await ctx.api.delete(ConfigMap, key);
    const cm = await ctx.api.get(ConfigMap, key);
    expect(cm.metadata?.deletionTimestamp).toBeTruthy();
    return key;
  }

  it('C20: two controllers removing their own finalizer at the same moment both stick; the object is then deleted', async () => {
    const ns = await ctx.namespace('c20');
    const key = await terminatingWithTwoFinalizers(ns);
    const a = newClient(ctx.config);
    const b = newClient(ctx.config);
    ctx.cleanups.push(async () => {
      await a.close();
      await b.close();
    });
    const t0 = Date.now();
    // Hold both PATCHes until both have arrived, then serve them together: both were built from the same read.
    const barrier = ctx.server.faults.delayRequests({
      match: { verb: 'patch', namespace: ns },
      barrier: 2,
      times: 2,
    });
    await Promise.all([removeFinalizer(a, key, 'example.com/a'), removeFinalizer(b, key, 'example.com/b')]);
    expect(barrier.hits).toBe(2);
    const patches = ctx.server.faults.requests({ verb: 'patch', namespace: ns, since: t0 });
    expect(patches.filter((r) => r.status === 409)).toHaveLength(1);
    expect(patches.filter((r) => r.status === 200)).toHaveLength(2);
    await waitFor(async () => {
      try {
        await ctx.api.get(ConfigMap, key);
        return false;
      } catch (err) {
        if (isNotFound(err)) return true;
        throw err;
      }
    }, 'the object deleted once its finalizers are gone');
  });

  it('C20 control: the same race without the resourceVersion precondition loses a removal (the fault bites)', async () => {
    const ns = await ctx.namespace('c20ctl');
    const key = await terminatingWithTwoFinalizers(ns);
    ctx.server.faults.delayRequests({ match: { verb: 'patch', namespace: ns }, barrier: 2, times: 2 });
    const naive = async (f: string) => {
      const cm = await ctx.api.get(ConfigMap, key);
      await ctx.api.patch(ConfigMap, key, {
        type: 'merge',
        data: { metadata: { finalizers: (cm.metadata?.finalizers ?? []).filter((x) => x !== f) } },
      });
    };
    // Both read [a, b]; the second write re-adds the finalizer the first removed, which the API server
    // refuses (422: no new finalizers on an object being deleted). Without a retry that removal is lost.
    const results = await Promise.allSettled([naive('example.com/a'), naive('example.com/b')]);
    const rejected = results.filter((r) => r.status === 'rejected');
    expect(rejected).toHaveLength(1);
    expect(isInvalid((rejected[0] as PromiseRejectedResult).reason)).toBe(true);
    expect((await ctx.api.get(ConfigMap, key)).metadata?.finalizers).toHaveLength(1);
    await ctx.api.patch(ConfigMap, key, { type: 'merge', data: { metadata: { finalizers: null } } });
  });
});

import { newManager } from '@kubeloop/builder';
import { ConfigMap, isNotFound } from '@kubeloop/client';
import { describe, expect, it, vi } from 'vitest';
import { addFinalizerController, type ConfigMapObject, FINALIZER, LABEL } from '../src/finalizer.js';
import { useEnvtest } from './support.js';

const t = useEnvtest();

describe('example: finalizer controller', () => {
  it('adds its finalizer, runs the cleanup once on delete (retrying a failure), then lets the object go', async () => {
    const ns = await t.namespace();
    const client = t.client();
    const cleaned: string[] = [];
    let failures = 1;
    // Scoped to the test namespace: on a shared cluster (USE_EXISTING_CLUSTER=true) other tests own the rest.
    const mgr = newManager(t.env().config, { namespace: ns });
    addFinalizerController(mgr, async (cm: ConfigMapObject) => {
      if (failures-- > 0) throw new Error('backup target unavailable');
      cleaned.push(cm.metadata?.name ?? '');
    });
    const stop = new AbortController();
    const running = mgr.start(stop.signal);
    try {
      const key = { namespace: ns, name: 'settings' };
      await client.create(ConfigMap, { metadata: { ...key, labels: { [LABEL]: 'true' } }, data: { a: '1' } });
      await client.create(ConfigMap, { metadata: { namespace: ns, name: 'other' }, data: {} });
      await vi.waitFor(async () =>
        expect((await client.get(ConfigMap, key)).metadata?.finalizers).toEqual([FINALIZER]),
      );
      expect(
        (await client.get(ConfigMap, { namespace: ns, name: 'other' })).metadata?.finalizers,
      ).toBeUndefined();

      await client.delete(ConfigMap, key);
      await vi.waitFor(async () => {
        const gone = await client.get(ConfigMap, key).then(
          () => false,
          (err: unknown) => isNotFound(err),
        );
        expect(gone).toBe(true);
      });
      expect(cleaned).toEqual(['settings']);
    } finally {
      stop.abort();
      await running;
    }
  });
});

import { Pod } from '@kubeloop/client';
import { describe, expect, it, vi } from 'vitest';
import { BY_NODE, startPodIndex } from '../src/reflector-indexer.js';
import { podSpec, useEnvtest } from './support.js';

const t = useEnvtest();

describe('example: reflector + indexer without the builder', () => {
  it('indexes pods by node after the list and follows later changes through the watch', async () => {
    const ns = await t.namespace();
    const client = t.client();
    await client.create(Pod, {
      metadata: { namespace: ns, name: 'a' },
      spec: { ...podSpec, nodeName: 'n1' },
    });
    await client.create(Pod, {
      metadata: { namespace: ns, name: 'b' },
      spec: { ...podSpec, nodeName: 'n2' },
    });
    const index = startPodIndex(client, ns);
    try {
      await index.synced();
      expect(index.indexer.byIndex(BY_NODE, 'n1').map((p) => p.metadata?.name)).toEqual(['a']);

      await client.create(Pod, {
        metadata: { namespace: ns, name: 'c' },
        spec: { ...podSpec, nodeName: 'n1' },
      });
      // Bound to a node: a graceful delete would wait for a kubelet (none on envtest or a bare control plane).
      await client.delete(Pod, { namespace: ns, name: 'a' }, { gracePeriodSeconds: 0 });
      await vi.waitFor(() =>
        expect(index.indexer.byIndex(BY_NODE, 'n1').map((p) => p.metadata?.name)).toEqual(['c']),
      );
      expect(index.indexer.listKeys().sort()).toEqual([`${ns}/b`, `${ns}/c`]);
    } finally {
      await index.stop();
    }
  });
});

import { Pod } from '@kubeloop/client';
import { describe, expect, it, vi } from 'vitest';
import { type PodChange, watchPods } from '../src/pod-watcher.js';
import { podSpec, useEnvtest } from './support.js';

const t = useEnvtest();

describe('example: pod watcher with the client alone', () => {
  it('lists the existing pods once, then sees a create, an update and a delete', async () => {
    const ns = await t.namespace();
    const client = t.client();
    await client.create(Pod, { metadata: { namespace: ns, name: 'before' }, spec: podSpec });
    const seen: PodChange[] = [];
    const stop = new AbortController();
    const running = watchPods(client, ns, (c) => seen.push(c), stop.signal);
    try {
      await vi.waitFor(() =>
        expect(seen).toContainEqual({ type: 'ADDED', name: 'before', phase: 'Pending' }),
      );

      await client.create(Pod, { metadata: { namespace: ns, name: 'after' }, spec: podSpec });
      const pod = await client.get(Pod, { namespace: ns, name: 'after' });
      await client.update(Pod, { ...pod, metadata: { ...pod.metadata, labels: { touched: 'yes' } } });
      await client.delete(Pod, { namespace: ns, name: 'after' });
      await vi.waitFor(() => expect(seen.filter((c) => c.name === 'after').at(-1)?.type).toBe('DELETED'));
      // A graceful pod deletion is a MODIFIED (deletionTimestamp set) before the DELETED.
      const after = seen.filter((c) => c.name === 'after').map((c) => c.type);
      expect(after[0]).toBe('ADDED');
      expect(after.filter((type) => type !== 'MODIFIED')).toEqual(['ADDED', 'DELETED']);
      expect(after).toContain('MODIFIED');
      expect(seen.filter((c) => c.name === 'before')).toHaveLength(1);
    } finally {
      stop.abort();
      await running;
    }
  });
});

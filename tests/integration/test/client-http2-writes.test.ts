// With HTTP/2 on, the writes of a controller go out while its watches hold streams of the same
// connection (undici's h2 client held every write until no stream ran), and a DELETE with DeleteOptions is
// sent (undici's h2 client cannot send a DELETE body). Runs on envtest and on a real cluster.
import { ConfigMap, newClient } from '@kubeloop/client';
import { describe, expect, it } from 'vitest';
import { testConfig, useLiveCluster, waitFor } from './support.js';

describe('HTTP/2 writes beside open watches', () => {
  const live = useLiveCluster();

  it('create, update, patch, apply and delete with propagationPolicy succeed while a watch is open on the connection', async () => {
    const { ns } = await live.namespace('h2w');
    const client = newClient({ ...testConfig(), timeoutMs: 15_000 }, { transport: { http2: true } });
    live.cleanups.push(() => client.close({ force: true }));
    const ac = new AbortController();
    live.cleanups.push(async () => ac.abort());
    const seen: string[] = [];
    const watching = (async () => {
      for await (const ev of client.watch(ConfigMap, { namespace: ns, signal: ac.signal }))
        seen.push(`${ev.type} ${(ev.object.metadata as { name?: string } | undefined)?.name ?? ''}`);
    })().catch(() => undefined);
    const created = await client.create(ConfigMap, {
      metadata: { namespace: ns, name: 'a' },
      data: { v: '1' },
    });
    await client.update(ConfigMap, { ...created, data: { v: '2' } });
    await client.patch(
      ConfigMap,
      { namespace: ns, name: 'a' },
      { type: 'merge', data: { data: { v: '3' } } },
    );
    await client.apply(
      ConfigMap,
      { metadata: { namespace: ns, name: 'b' }, data: { v: '1' } },
      { fieldManager: 'h2-writes-test' },
    );
    // Background, not Foreground: a DeleteOptions body either way, but Foreground only marks the object (a
    // foregroundDeletion finalizer) until kube-controller-manager's garbage collector removes it, and a bare
    // kube-apiserver has none, so the DELETED event never came there.
    await client.delete(ConfigMap, { namespace: ns, name: 'a' }, { propagationPolicy: 'Background' });
    await client.delete(ConfigMap, { namespace: ns, name: 'b' });
    await waitFor(
      () => seen.includes('DELETED a') && seen.includes('DELETED b'),
      () => `events ${seen.join(', ')}`,
    );
    expect(seen.filter((e) => e.endsWith(' a'))[0]).toBe('ADDED a');
    ac.abort();
    await watching;
  });
});

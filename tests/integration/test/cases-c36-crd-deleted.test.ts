import { InformerCache } from '@kubeloop/cache';
import { kind } from '@kubeloop/client';
import { NoKindMatchError } from '@kubeloop/client/errors';
import { describe, expect, it, vi } from 'vitest';
import { installCRD } from './support/crds.js';
import {
  captureLogger,
  type LogRecord,
  liveClient,
  uniqueName,
  useLiveCluster,
  withNamespace,
} from './support.js';

const CustomResourceDefinition = kind('apiextensions.k8s.io/v1', 'CustomResourceDefinition');

describe('C36: CRD deleted under a running informer', () => {
  const live = useLiveCluster();

  it('C36: deletes are delivered, the kind is reported unserved and reads fail fast, lists back off with one log per attempt, removeInformer stops at once, and a running informer recovers when the CRD comes back', async () => {
    const api = live.client();
    const group = `${uniqueName('c36')}.example.com`;
    const crd = { group, kind: 'Widget', plural: 'widgets', scope: 'Namespaced' as const };
    const Widget = kind(`${group}/v1`, 'Widget');
    await installCRD(api, crd);
    const ns = uniqueName('c36');
    live.cleanups.push(await withNamespace(api, ns));
    for (let i = 0; i < 20; i += 10)
      await Promise.all(
        Array.from({ length: 10 }, (_, j) =>
          api.create(Widget, {
            apiVersion: `${group}/v1`,
            kind: 'Widget',
            metadata: { namespace: ns, name: `w${i + j}` },
          }),
        ),
      );

    const records: LogRecord[] = [];
    const start = (logger = captureLogger([])) => {
      const client = liveClient();
      const cache = new InformerCache({
        client,
        defaultNamespaces: [ns],
        logger,
        reflector: { backoff: { initialMs: 100, maxMs: 800 } },
      });
      const ac = new AbortController();
      const running = cache.start(ac.signal);
      live.cleanups.push(async () => {
        ac.abort();
        await running;
        await client.close();
      });
      return cache;
    };
    const kept = start(captureLogger(records));
    const removed = start();
    const deletes: string[] = [];
    kept.getInformer(Widget).addEventHandler({ onDelete: () => deletes.push('d') });
    expect((await kept.list(Widget)).items).toHaveLength(20);
    expect((await removed.list(Widget)).items).toHaveLength(20);

    await api.delete(CustomResourceDefinition, { name: `widgets.${group}` });
    await vi.waitFor(() => expect(deletes).toHaveLength(20), { timeout: 20_000 });
    const inf = kept.getInformer(Widget);
    await vi.waitFor(() => expect(inf.status().unserved).toBe(true), { timeout: 20_000 });
    await expect(kept.list(Widget)).rejects.toBeInstanceOf(NoKindMatchError);
    await expect(kept.get(Widget, { namespace: ns, name: 'w1' })).rejects.toBeInstanceOf(NoKindMatchError);

    // removeInformer ends the removed cache's informer (its list retries and watch) at once.
    const removedInf = removed.getInformer(Widget);
    await removed.removeInformer(Widget);
    expect(removedInf.isStopped()).toBe(true);

    // Each failed attempt is logged once (no log storm), and the informer keeps backing off and retrying.
    await vi.waitFor(
      () =>
        expect(records.filter((r) => r.msg === 'watch ended with error').length).toBeGreaterThanOrEqual(3),
      { timeout: 20_000 },
    );
    const failures = records.filter((r) => r.msg === 'watch ended with error');
    expect(failures.every((r) => r.err instanceof Error)).toBe(true);

    // The CRD comes back with 2 objects: the informer left running recovers by itself.
    await installCRD(api, crd);
    for (const n of ['x', 'y'])
      await api.create(Widget, {
        apiVersion: `${group}/v1`,
        kind: 'Widget',
        metadata: { namespace: ns, name: n },
      });
    await vi.waitFor(
      async () => {
        expect(inf.status().unserved).toBe(false);
        expect((await kept.list(Widget)).items.map((w) => w.metadata?.name).sort()).toEqual(['x', 'y']);
      },
      { timeout: 30_000, interval: 100 },
    );
    await api.delete(CustomResourceDefinition, { name: `widgets.${group}` });
  });
});

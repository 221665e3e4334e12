// With HTTP/2 on, every request and watch of one RestConfig shares one connection, as
// client-go does; with it off the client works as before (one connection per open watch).
import { listWatchFor, SharedIndexInformer } from '@kubeloop/cache';
import { ConfigMap, Namespace, newClient, Pod } from '@kubeloop/client';
import type { V1ConfigMap, V1Pod } from '@kubeloop/client/models';
import { describe, expect, it } from 'vitest';
import { realCluster, useFaultServer } from './support/fault-server.js';
import { testConfig, uniqueName, useLiveCluster, waitFor } from './support.js';

const INFORMERS = 100;

describe('HTTP/2 on and off: every watch of one client works', () => {
  const live = useLiveCluster();

  for (const http2 of [true, false]) {
    it(`${INFORMERS} informers of one client (http2 ${http2 ? 'on' : 'off'}) all sync, and each one's watch delivers its own new object`, async () => {
      const { api, ns } = await live.namespace('h2');
      const client = newClient(testConfig(), { transport: { http2 } });
      live.cleanups.push(() => client.close());
      const ac = new AbortController();
      // One informer per label value in one namespace: INFORMERS concurrent watches.
      const informers = Array.from(
        { length: INFORMERS },
        (_, i) =>
          new SharedIndexInformer<V1ConfigMap>(
            listWatchFor(client, ConfigMap, { namespace: ns, labelSelector: `h2-informer=${i}` }),
            { name: `h2-${i}` },
          ),
      );
      const runs = informers.map((inf) => inf.run(ac.signal));
      live.cleanups.push(async () => {
        ac.abort();
        await Promise.allSettled(runs);
      });
      await waitFor(() => informers.every((inf) => inf.hasSynced()), 'all informers synced', 30_000);
      for (let i = 0; i < INFORMERS; i += 20)
        await Promise.all(
          Array.from({ length: 20 }, (_, k) =>
            api.create(ConfigMap, {
              metadata: { namespace: ns, name: `cm-${i + k}`, labels: { 'h2-informer': String(i + k) } },
            }),
          ),
        );
      await waitFor(
        () =>
          informers.every((inf, i) => {
            const items = inf.getIndexer().list();
            return items.length === 1 && items[0]?.metadata?.name === `cm-${i}`;
          }),
        () =>
          `every informer to hold its own ConfigMap (${informers.filter((inf) => inf.getIndexer().list().length === 1).length} do)`,
        30_000,
      );
    });
  }
});

// The connection counts are read from the in-process server (its count of the client's TCP connections),
// which a real kube-apiserver does not expose.
describe.skipIf(realCluster)('HTTP/2 connection counts against envtest (envtest only)', () => {
  const ctx = useFaultServer('kubeloop-h2');

  async function informersOn(http2: boolean): Promise<number> {
    const client = newClient(ctx.config, { transport: { http2 } });
    const ac = new AbortController();
    try {
      const namespaces = Array.from({ length: INFORMERS }, () => uniqueName('h2'));
      for (const ns of namespaces) await client.create(Namespace, { metadata: { name: ns } });
      const informers = namespaces.map(
        (ns) => new SharedIndexInformer<V1Pod>(listWatchFor(client, Pod, { namespace: ns }), { name: ns }),
      );
      const runs = informers.map((inf) => inf.run(ac.signal));
      await waitFor(() => informers.every((inf) => inf.hasSynced()), 'all informers synced', 30_000);
      // Every informer holds an open watch now; the server counts the client's TCP connections.
      const open = ctx.server.faults.openConnections();
      ac.abort();
      await Promise.allSettled(runs);
      return open;
    } finally {
      ac.abort();
      await client.close();
    }
  }

  // envtest advertises 100 streams per connection, as kube-apiserver does: at start each informer's list and
  // watch overlap (up to 200 streams), so a second connection may open; never one per watch.
  it(`${INFORMERS} informers on ${INFORMERS} namespaces use at most 2 TCP connections at the server with http2 on`, async () => {
    expect(await informersOn(true)).toBeLessThanOrEqual(2);
  });

  it(`with http2 off the same ${INFORMERS} informers all watch (one connection each; a cap of 25 connections used to stall the 26th watch)`, async () => {
    expect(await informersOn(false)).toBeGreaterThanOrEqual(INFORMERS);
  });
});

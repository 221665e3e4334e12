// Issue 9 item 8: with HTTP/2 on, every request and watch of one RestConfig shares one connection, as
// client-go does; with it off the client works as before (one connection per open watch).
import { listWatchFor, SharedIndexInformer } from '@kubeloop/cache';
import { Namespace, newClient, Pod } from '@kubeloop/client';
import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { realCluster, useFaultServer } from './support/fault-server.js';
import { uniqueName, waitFor } from './support.js';

const INFORMERS = 100;

describe.skipIf(realCluster)('HTTP/2 against envtest (issue 9 item 8)', () => {
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

import { InformerCache } from '@kubeloop/cache';
import {
  type ApiClient,
  type DeepReadonly,
  type KubeObject,
  metadataOnly,
  Namespace,
  newClient,
  Secret,
} from '@kubeloop/client';
import type { RestConfig } from '@kubeloop/config';
import { describe, expect, it, vi } from 'vitest';
import { realCluster, useFaultServer } from './support/fault-server.js';
import { testConfig, uniqueName, useLiveCluster } from './support.js';

/**
 * The C37 scenario: a metadata-only Secret informer sees every label edit once (`beforeEdit(i)` runs before
 * edit i: the fault variant ends the watch there), its objects say v1/Secret and carry no data, and a typed
 * read starts its own informer.
 */
async function metadataInformerCase(
  config: RestConfig,
  api: ApiClient,
  ns: string,
  beforeEdit: (i: number) => Promise<void> = async () => {},
): Promise<void> {
  await api.create(Secret, {
    metadata: { namespace: ns, name: 's1', labels: { n: '0' } },
    data: { key: 'c2VjcmV0' },
  });
  const client = newClient(config);
  const cache = new InformerCache({ client, defaultNamespaces: [ns] });
  const ac = new AbortController();
  const running = cache.start(ac.signal);
  try {
    const MetaSecret = metadataOnly(Secret);
    const meta = cache.getInformer(MetaSecret);
    const seen: DeepReadonly<KubeObject>[] = [];
    meta.addEventHandler({ onAdd: (o) => seen.push(o), onUpdate: (_a, b) => seen.push(b) });
    expect(await cache.waitForCacheSync()).toBe(true);
    for (let i = 1; i <= 10; i++) {
      await beforeEdit(i);
      await api.patch(
        Secret,
        { namespace: ns, name: 's1' },
        { type: 'merge', data: { metadata: { labels: { n: String(i) } } } },
      );
    }
    await vi.waitFor(() => expect(seen.at(-1)?.metadata?.labels?.n).toBe('10'), { timeout: 20_000 });
    expect(seen.map((o) => o.metadata?.labels?.n)).toEqual([
      '0',
      '1',
      '2',
      '3',
      '4',
      '5',
      '6',
      '7',
      '8',
      '9',
      '10',
    ]);
    for (const o of [...seen, ...meta.getIndexer().list()]) {
      expect(o.apiVersion).toBe('v1');
      expect(o.kind).toBe('Secret');
      expect((o as { data?: unknown }).data).toBeUndefined();
    }
    // A typed read starts and uses its own informer: the data is there, and the metadata cache stays without it.
    const typed = await cache.get(Secret, { namespace: ns, name: 's1' });
    expect((typed as { data?: Record<string, string> }).data?.key).toBe('c2VjcmV0');
    expect(cache.getInformer(Secret)).not.toBe(meta);
    expect((meta.getIndexer().list()[0] as { data?: unknown }).data).toBeUndefined();
    expect((await cache.get(MetaSecret, { namespace: ns, name: 's1' })).metadata?.labels?.n).toBe('10');
  } finally {
    ac.abort();
    await running;
    await client.close();
  }
}

describe('C37: metadata-only informer beside a typed one', () => {
  const live = useLiveCluster();

  it('C37: every edit arrives once, objects report v1/Secret without data, and a typed read uses its own informer', async () => {
    const { api, ns } = await live.namespace('c37');
    await metadataInformerCase(testConfig(), api, ns);
  });
});

// Fault injection: the in-process server ends the metadata watch on purpose, which a real cluster cannot be
// made to do.
describe.skipIf(realCluster)(
  'C37: metadata-only informer through watch ends (fault injection; envtest only)',
  () => {
    const ctx = useFaultServer('kubeloop-c37-test');

    it('C37: through 10 watch ends every edit arrives once, objects report v1/Secret without data, and a typed read uses its own informer', async () => {
      const ns = uniqueName('c37');
      await ctx.api.create(Namespace, { metadata: { name: ns } });
      // The server ends every metadata watch after 1.1 s, 10 times; a label edit lands in each cycle.
      const ends = ctx.server.faults.endWatches({
        match: { verb: 'watch', resource: 'secrets', namespace: ns },
        afterMs: 1100,
        times: 10,
      });
      try {
        await metadataInformerCase(ctx.config, ctx.api, ns, (i) =>
          vi.waitFor(() => expect(ends.hits).toBeGreaterThanOrEqual(i - 1), {
            timeout: 20_000,
            interval: 20,
          }),
        );
      } finally {
        ctx.server.faults.reset();
      }
    });
  },
);

// What an operator of a multi-cluster manager sees of its member caches: the informer_* metrics labelled by
// cluster and /debug/cache listing each member's informers with its cluster, scraped over HTTP from the
// manager's metrics server; a disengaged member leaves both.
import {
  ConfigMap,
  newMultiClusterControllerManagedBy,
  newMultiClusterManager,
  StaticProvider,
} from '@kubeloop/builder';
import { describe, expect, it } from 'vitest';
import { useClusters } from './support/clusters.js';
import { uniqueName, waitFor } from './support.js';

/** The series of `name` in a Prometheus text exposition, each with its labels parsed. */
function seriesOf(text: string, name: string): Array<{ labels: Record<string, string>; value: number }> {
  const out: Array<{ labels: Record<string, string>; value: number }> = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const body = line.slice(name.length + 1, line.lastIndexOf('}'));
    const labels: Record<string, string> = {};
    for (const m of body.matchAll(/(\w+)="([^"]*)"/g)) labels[m[1]!] = m[2]!;
    out.push({ labels, value: Number(line.slice(line.lastIndexOf(' ') + 1)) });
  }
  return out;
}

/** The ConfigMap informer's value of `name` per cluster (`''`: the manager's own, which has no `cluster` label). */
function configMapsByCluster(text: string, name: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of seriesOf(text, name))
    if (s.labels.kind === 'ConfigMap') out[s.labels.cluster ?? ''] = s.value;
  return out;
}

interface DebugInformer {
  cluster?: string;
  kind: string;
  synced: boolean;
  stats: { objects: number };
}

describe('multi-cluster manager: member caches in the metrics and /debug/cache', () => {
  const fleet = useClusters(['mgmt', 'm1', 'm2'], { tokens: ['token-mc-obs'] });
  const { clusters } = fleet;

  it('informer metrics carry the member cluster as label `cluster` (none for the own cluster); /debug/cache lists every member informer with its cluster; a disengaged member leaves both', async () => {
    const ns = uniqueName('mc-obs');
    await fleet.namespaceEverywhere(ns);
    const counts: Record<string, number> = { mgmt: 1, m1: 2, m2: 3 };
    for (const [c, n] of Object.entries(counts))
      for (let i = 0; i < n; i++)
        await clusters[c]!.api.create(ConfigMap, { metadata: { namespace: ns, name: `cm-${i}` } });
    const provider = new StaticProvider(
      { m1: clusters.m1!.config, m2: clusters.m2!.config },
      { clusterOptions: { cache: { defaultNamespaces: [ns] } } },
    );
    const mgr = newMultiClusterManager(clusters.mgmt!.config, {
      provider,
      cache: { defaultNamespaces: [ns] },
      metrics: { bindAddress: '127.0.0.1:0' },
    });
    const reconciled = new Set<string>();
    newMultiClusterControllerManagedBy(mgr)
      .for(ConfigMap)
      .named(uniqueName('mc-obs'))
      .withOptions({ engageLocalCluster: true })
      .complete({
        async reconcile(_ctx, req) {
          reconciled.add(`${req.cluster ?? ''}/${req.name}`);
        },
      });
    const stop = new AbortController();
    const done = mgr.start(stop.signal);
    fleet.cleanups.push(async () => {
      stop.abort();
      await done;
    });
    await waitFor(() => reconciled.size === 6, 'every ConfigMap reconciled in its cluster');

    const base = `http://${mgr.metricsServerAddress()}`;
    const scrape = async () => (await fetch(`${base}/metrics`)).text();
    const debug = async () =>
      (
        (await (await fetch(`${base}/debug/cache`)).json()) as { informers: DebugInformer[] }
      ).informers.filter((i) => i.kind === 'ConfigMap');

    const text = await scrape();
    expect(configMapsByCluster(text, 'informer_store_objects')).toEqual({ '': 1, m1: 2, m2: 3 });
    expect(configMapsByCluster(text, 'informer_synced')).toEqual({ '': 1, m1: 1, m2: 1 });
    const informers = await debug();
    expect(
      informers.map((i) => ({ cluster: i.cluster, objects: i.stats.objects, synced: i.synced })),
    ).toEqual([
      { cluster: undefined, objects: 1, synced: true },
      { cluster: 'm1', objects: 2, synced: true },
      { cluster: 'm2', objects: 3, synced: true },
    ]);

    // Disengaged: m2's cache stops and its series and /debug/cache entry go; the others stay.
    provider.remove('m2');
    await waitFor(
      async () => !('m2' in configMapsByCluster(await scrape(), 'informer_store_objects')),
      'the m2 series gone',
    );
    expect(configMapsByCluster(await scrape(), 'informer_store_objects')).toEqual({ '': 1, m1: 2 });
    expect((await debug()).map((i) => i.cluster)).toEqual([undefined, 'm1']);
  });
});

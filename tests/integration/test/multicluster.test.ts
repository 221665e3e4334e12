// Multi-cluster: one manager over a management envtest and member envtests engaged at runtime by providers;
// cluster-aware requests reach the cluster they came from; disengaging stops a cluster's controller.
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ClusterNotFoundError,
  ConfigMap,
  enqueueRequestsFromMapFunc,
  isNotFound,
  KUBECONFIG_SECRET_LABEL,
  KubeconfigDirProvider,
  KubeconfigSecretProvider,
  type MultiClusterManager,
  newCluster,
  newControllerManagedBy,
  newManager,
  newMultiClusterControllerManagedBy,
  newMultiClusterManager,
  newPredicateFuncs,
  type Provider,
  type Reconciler,
  type Request,
  Secret,
  StaticProvider,
} from '@kubeloop/builder';
import { deepCopy } from '@kubeloop/client';
import { describe, expect, it } from 'vitest';
import { kubeconfigText, useClusters } from './support/clusters.js';
import { uniqueName, waitFor } from './support.js';

const notSeen = newPredicateFuncs((o) => !o.metadata?.name?.endsWith('-seen'));

/** A reconciler that writes `<name>-seen` beside each ConfigMap, in the cluster the request names. */
function seenWriter(mgr: MultiClusterManager, log: Request[]): Reconciler {
  return {
    async reconcile(ctx, req) {
      log.push(req);
      const client = mgr.getCluster(req.cluster).getClient();
      const cm = await client.get(ConfigMap, req, { signal: ctx.signal }).catch((err: unknown) => {
        if (isNotFound(err)) return undefined;
        throw err;
      });
      if (!cm) return;
      const seen = {
        metadata: { namespace: req.namespace, name: `${req.name}-seen` },
        data: { cluster: req.cluster ?? '', value: cm.data?.value ?? '' },
      };
      try {
        const cur = await client.get(ConfigMap, seen.metadata, { signal: ctx.signal });
        await client.update(ConfigMap, { ...deepCopy(cur), data: seen.data }, { signal: ctx.signal });
      } catch (err) {
        if (!isNotFound(err)) throw err;
        await client.create(ConfigMap, seen, { signal: ctx.signal });
      }
    },
  };
}

describe('multi-cluster manager', () => {
  const fleet = useClusters(['mgmt', 'm1', 'm2', 'm3'], { tokens: ['token-mc-manager'] });
  const { clusters } = fleet;

  async function seenIn(c: string, ns: string, name: string): Promise<Record<string, string> | undefined> {
    try {
      return (await clusters[c]!.api.get(ConfigMap, { namespace: ns, name: `${name}-seen` })).data;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async function run(provider: Provider, ns: string, log: Request[]) {
    const mgr = newMultiClusterManager(clusters.mgmt!.config, {
      provider,
      cache: { defaultNamespaces: [ns] },
    });
    newMultiClusterControllerManagedBy(mgr)
      .for(ConfigMap, { predicates: [notSeen] })
      .named(uniqueName('mc'))
      .complete(seenWriter(mgr, log));
    const stop = new AbortController();
    const done = mgr.start(stop.signal);
    fleet.cleanups.push(async () => {
      stop.abort();
      await done;
    });
    return mgr;
  }

  it('static provider: engages and disengages clusters at runtime; each request reaches the cluster it came from', async () => {
    const ns = uniqueName('mc-static');
    await fleet.namespaceEverywhere(ns);
    const clusterOptions = { cache: { defaultNamespaces: [ns] } };
    const provider = new StaticProvider(
      { m1: clusters.m1!.config, m2: clusters.m2!.config },
      { clusterOptions },
    );
    const log: Request[] = [];
    const mgr = await run(provider, ns, log);
    for (const c of ['m1', 'm2', 'm3'])
      await clusters[c]!.api.create(ConfigMap, {
        metadata: { namespace: ns, name: 'a' },
        data: { value: c },
      });

    // Each engaged member's object is reconciled in that member, with its own cluster name on the request.
    for (const c of ['m1', 'm2'])
      await waitFor(async () => (await seenIn(c, ns, 'a'))?.cluster === c, `a-seen in ${c}`);
    expect(await seenIn('m1', ns, 'a')).toEqual({ cluster: 'm1', value: 'm1' });
    expect(await seenIn('m2', ns, 'a')).toEqual({ cluster: 'm2', value: 'm2' });
    expect(mgr.clusterNames()).toEqual(['m1', 'm2']);
    expect(log.every((r) => r.cluster === 'm1' || r.cluster === 'm2')).toBe(true);
    // The management cluster's controller did not run there (no engageLocalCluster).
    expect(log.some((r) => !r.cluster)).toBe(false);

    // Engage m3 at runtime: its existing object is reconciled from its cache's initial list.
    provider.add('m3', clusters.m3!.config);
    await waitFor(
      async () => (await seenIn('m3', ns, 'a'))?.cluster === 'm3',
      'a-seen in m3 after engaging it',
    );
    await waitFor(() => mgr.clusterStatus().every((s) => s.synced), 'every engaged cluster synced');
    expect(mgr.clusterStatus().map((s) => s.name)).toEqual(['m1', 'm2', 'm3']);

    // Disengage m1: its controller and cache stop; a change there is no longer reconciled, while a change in
    // m2 made after it still is (the barrier that shows the controller ran after the change in m1).
    provider.remove('m1');
    await waitFor(() => !mgr.clusterNames().includes('m1'), 'm1 disengaged');
    expect(() => mgr.getCluster('m1')).toThrow(ClusterNotFoundError);
    await clusters.m1!.api.create(ConfigMap, {
      metadata: { namespace: ns, name: 'b' },
      data: { value: 'x' },
    });
    await clusters.m2!.api.create(ConfigMap, {
      metadata: { namespace: ns, name: 'b' },
      data: { value: 'y' },
    });
    await waitFor(async () => (await seenIn('m2', ns, 'b'))?.cluster === 'm2', 'b-seen in m2');
    expect(await seenIn('m1', ns, 'b')).toBeUndefined();
    expect(log.some((r) => r.cluster === 'm1' && r.name === 'b')).toBe(false);

    // Engaged again, m1 catches up from a fresh cache.
    provider.add('m1', clusters.m1!.config);
    await waitFor(
      async () => (await seenIn('m1', ns, 'b'))?.value === 'x',
      'b-seen in m1 after re-engaging it',
    );
  });

  it('kubeconfig Secret provider: a labelled Secret in the management cluster engages its cluster; deleting it disengages', async () => {
    const ns = uniqueName('mc-secret');
    await fleet.namespaceEverywhere(ns);
    const mgmt = clusters.mgmt!;
    const log: Request[] = [];
    const box: { mgr?: MultiClusterManager } = {};
    const provider: Provider = {
      start(signal, aware) {
        return new KubeconfigSecretProvider({
          reader: (box.mgr as MultiClusterManager).getAPIReader(),
          namespace: ns,
          pollIntervalMs: 100,
          clusterOptions: { cache: { defaultNamespaces: [ns] } },
        }).start(signal, aware);
      },
    };
    box.mgr = await run(provider, ns, log);
    const mgr = box.mgr;
    for (const c of ['m1', 'm2'])
      await clusters[c]!.api.create(ConfigMap, {
        metadata: { namespace: ns, name: 'a' },
        data: { value: c },
      });
    for (const c of ['m1', 'm2']) {
      await mgmt.api.create(Secret, {
        metadata: { namespace: ns, name: c, labels: { [KUBECONFIG_SECRET_LABEL]: 'true' } },
        data: { kubeconfig: Buffer.from(kubeconfigText(clusters[c]!.server)).toString('base64') },
      });
    }
    // An unlabelled Secret is not a cluster.
    await mgmt.api.create(Secret, {
      metadata: { namespace: ns, name: 'm3' },
      data: { kubeconfig: Buffer.from(kubeconfigText(clusters.m3!.server)).toString('base64') },
    });
    for (const c of ['m1', 'm2'])
      await waitFor(async () => (await seenIn(c, ns, 'a'))?.cluster === c, `a-seen in ${c}`);
    expect(mgr.clusterNames()).toEqual(['m1', 'm2']);

    await mgmt.api.delete(Secret, { namespace: ns, name: 'm2' });
    await waitFor(() => mgr.clusterNames().join() === 'm1', 'm2 disengaged after its Secret was deleted');
  });

  it('kubeconfig folder provider: a file engages its cluster, removing it disengages', async () => {
    const ns = uniqueName('mc-dir');
    await fleet.namespaceEverywhere(ns);
    const dir = mkdtempSync(join(tmpdir(), 'kubeloop-mc-'));
    fleet.cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'm3.yaml'), kubeconfigText(clusters.m3!.server), { mode: 0o600 });
    writeFileSync(join(dir, '.hidden.yaml'), 'not: a kubeconfig');
    const log: Request[] = [];
    const mgr = await run(
      new KubeconfigDirProvider({
        dir,
        pollIntervalMs: 100,
        clusterOptions: { cache: { defaultNamespaces: [ns] } },
      }),
      ns,
      log,
    );
    await clusters.m3!.api.create(ConfigMap, {
      metadata: { namespace: ns, name: 'a' },
      data: { value: 'm3' },
    });
    await waitFor(async () => (await seenIn('m3', ns, 'a'))?.cluster === 'm3', 'a-seen in m3');
    writeFileSync(join(dir, 'm2.kubeconfig'), kubeconfigText(clusters.m2!.server), { mode: 0o600 });
    await waitFor(() => mgr.clusterNames().join() === 'm2,m3', 'm2 engaged from its new file');
    unlinkSync(join(dir, 'm3.yaml'));
    await waitFor(() => mgr.clusterNames().join() === 'm2', 'm3 disengaged after its file was removed');
  });

  it('a black-holed cluster does not delay the others; the manager stays ready; its cache converges once it is back', async () => {
    const ns = uniqueName('mc-dead');
    await fleet.namespaceEverywhere(ns);
    // The manager reaches m3 with a token of its own, so the black hole swallows its requests only.
    const token = 'token-mc-manager';
    const provider = new StaticProvider(
      {
        m1: clusters.m1!.config,
        m2: clusters.m2!.config,
        m3: { ...clusters.m3!.config, bearerToken: token, timeoutMs: 0 },
      },
      { clusterOptions: { cache: { defaultNamespaces: [ns] } } },
    );
    const log: Request[] = [];
    const mgr = await run(provider, ns, log);
    for (const c of ['m1', 'm2', 'm3'])
      await clusters[c]!.api.create(ConfigMap, {
        metadata: { namespace: ns, name: 'a' },
        data: { value: c },
      });
    for (const c of ['m1', 'm2', 'm3'])
      await waitFor(async () => (await seenIn(c, ns, 'a'))?.cluster === c, `a-seen in ${c}`);

    /** ms from creating `name` in m1 and m2 until both are reconciled. */
    const latency = async (name: string): Promise<number> => {
      const t = performance.now();
      for (const c of ['m1', 'm2'])
        await clusters[c]!.api.create(ConfigMap, { metadata: { namespace: ns, name }, data: { value: c } });
      for (const c of ['m1', 'm2'])
        await waitFor(async () => (await seenIn(c, ns, name)) !== undefined, `${name} in ${c}`);
      return performance.now() - t;
    };
    const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
    const before: number[] = [];
    for (let i = 0; i < 5; i++) before.push(await latency(`before-${i}`));

    // Black-hole m3: every request of the manager hangs, and the open watches are cut so the reflector
    // reconnects into the hole. A change there now is seen by nobody; its reconciles would hang.
    const hole = clusters.m3!.server.faults.blackhole({ match: { token } });
    clusters.m3!.server.faults.endWatches({ match: { verb: 'watch', token }, afterMs: 0 });
    await clusters.m3!.api.create(ConfigMap, {
      metadata: { namespace: ns, name: 'during' },
      data: { value: 'm3' },
    });
    const during: number[] = [];
    for (let i = 0; i < 5; i++) during.push(await latency(`during-${i}`));
    expect(mgr.readinessPending()).toBeUndefined();
    console.log(
      `multi-cluster isolation: reconcile latency in m1+m2, median of 5: ${median(before).toFixed(0)} ms before, ` +
        `${median(during).toFixed(0)} ms while m3 is black-holed (max ${Math.max(...during).toFixed(0)} ms); ` +
        `m3 status: ${JSON.stringify(mgr.clusterStatus().find((s) => s.name === 'm3'))}`,
    );

    // m3 comes back: its reflector reconnects, the cache converges and the change made meanwhile is reconciled.
    hole.clear();
    clusters.m3!.server.faults.releaseBlackholes(true);
    await waitFor(
      async () => (await seenIn('m3', ns, 'during'))?.cluster === 'm3',
      'during-seen in m3 after it came back',
      60_000,
    );
    await waitFor(() => mgr.clusterStatus().every((s) => s.synced), 'every cluster synced again');
  });

  it('a Kind source on another cluster: watch in cluster B, reconcile in cluster A', async () => {
    const ns = uniqueName('mc-cross');
    await fleet.namespaceEverywhere(ns);
    const mgr = newManager(clusters.mgmt!.config, { cache: { defaultNamespaces: [ns] } });
    const b = newCluster(clusters.m1!.config, { name: 'b', cache: { defaultNamespaces: [ns] } });
    mgr.add(b);
    const reqs: Request[] = [];
    newControllerManagedBy(mgr)
      .named(uniqueName('cross'))
      .watches(
        ConfigMap,
        enqueueRequestsFromMapFunc((o) => [
          { namespace: o.metadata?.namespace ?? '', name: `from-${o.metadata?.name}` },
        ]),
        { cluster: b },
      )
      .complete({
        async reconcile(_ctx, req) {
          reqs.push(req);
          const src = await b
            .getClient()
            .get(ConfigMap, { namespace: req.namespace, name: req.name.slice(5) });
          try {
            await mgr.getClient().create(ConfigMap, {
              metadata: { namespace: req.namespace, name: req.name },
              data: src.data ?? {},
            });
          } catch (err) {
            if (!isNotFound(err) && (err as { code?: number }).code !== 409) throw err;
          }
        },
      });
    const stop = new AbortController();
    const done = mgr.start(stop.signal);
    fleet.cleanups.push(async () => {
      stop.abort();
      await done;
    });
    await clusters.m1!.api.create(ConfigMap, { metadata: { namespace: ns, name: 'x' }, data: { k: 'v' } });
    await waitFor(async () => {
      try {
        return (await clusters.mgmt!.api.get(ConfigMap, { namespace: ns, name: 'from-x' })).data?.k === 'v';
      } catch {
        return false;
      }
    }, 'from-x copied into the management cluster');
    expect(reqs.every((r) => r.cluster === undefined)).toBe(true);
  });
});

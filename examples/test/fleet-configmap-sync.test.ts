import { setTimeout as sleep } from 'node:timers/promises';
import {
  newMetricsRegistry,
  newMultiClusterManager,
  type RestConfig,
  StaticProvider,
} from '@kubeloop/builder';
import { type ApiClient, ConfigMap, deepCopy, isNotFound, Namespace, newClient } from '@kubeloop/client';
import { type ApiServer, startApiServer } from '@kubeloop/envtest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addFleetSync, COPY_LABEL, SYNC_LABEL } from '../src/fleet-configmap-sync.js';

interface TestCluster {
  readonly server: ApiServer;
  readonly config: RestConfig;
  readonly client: ApiClient;
}

const MEMBERS = ['member-1', 'member-2', 'member-3'] as const;

/** Polls `check` (every 50 ms, up to 20 s) until it returns true; the last failure's message says what differed. */
async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within 20 s: ${what}`);
    await sleep(50);
  }
}

describe('example: a ConfigMap synced from a management cluster into three members', () => {
  const clusters: Record<string, TestCluster> = {};
  const stop = new AbortController();
  let running: Promise<void> | undefined;
  let provider: StaticProvider;
  const ns = 'fleet';

  beforeAll(async () => {
    // Four in-process API servers: the management cluster and three members.
    for (const name of ['management', ...MEMBERS]) {
      const server = await startApiServer();
      const config: RestConfig = {
        host: server.url,
        tlsClientConfig: { caData: server.caPem },
        bearerToken: server.token,
        qps: -1,
        burst: 0,
        timeoutMs: 30_000,
        userAgent: `fleet-example-${name}`,
      };
      const client = newClient(config);
      clusters[name] = { server, config, client };
      await client.create(Namespace, { metadata: { name: ns } });
    }
    provider = new StaticProvider(Object.fromEntries(MEMBERS.map((m) => [m, clusters[m]!.config])));
    const mgr = newMultiClusterManager(clusters.management!.config, {
      provider,
      metrics: { registry: newMetricsRegistry() },
    });
    addFleetSync(mgr);
    running = mgr.start(stop.signal);
  });

  afterAll(async () => {
    stop.abort();
    await running;
    for (const c of Object.values(clusters)) {
      await c.client.close();
      await c.server.stop();
    }
  });

  const mgmt = () => clusters.management!.client;
  const copyIn = (m: string, name: string) =>
    clusters[m]!.client.get(ConfigMap, { namespace: ns, name }).catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw err;
    });
  const everywhere = async (name: string, want: Record<string, string> | undefined) => {
    for (const m of MEMBERS) {
      const copy = await copyIn(m, name);
      if (want === undefined ? copy !== undefined : JSON.stringify(copy?.data) !== JSON.stringify(want))
        return false;
    }
    return true;
  };

  it('creates, updates and deletes the copies in every member with the source', async () => {
    await mgmt().create(ConfigMap, {
      metadata: { namespace: ns, name: 'settings', labels: { [SYNC_LABEL]: 'true' } },
      data: { color: 'blue' },
    });
    // An unlabelled ConfigMap stays in the management cluster.
    await mgmt().create(ConfigMap, { metadata: { namespace: ns, name: 'local-only' }, data: { a: '1' } });
    await eventually('created in every member', () => everywhere('settings', { color: 'blue' }));
    for (const m of MEMBERS)
      expect((await copyIn(m, 'settings'))?.metadata?.labels?.[COPY_LABEL]).toBe('true');

    await mgmt().patch(
      ConfigMap,
      { namespace: ns, name: 'settings' },
      { type: 'merge', data: { data: { color: 'green' } } },
    );
    await eventually('updated in every member', () => everywhere('settings', { color: 'green' }));

    await mgmt().delete(ConfigMap, { namespace: ns, name: 'settings' });
    await eventually('deleted in every member', () => everywhere('settings', undefined));
    for (const m of MEMBERS) expect(await copyIn(m, 'local-only')).toBeUndefined();
  });

  it('puts back a copy edited or deleted in a member, and leaves a ConfigMap it did not make alone', async () => {
    await mgmt().create(ConfigMap, {
      metadata: { namespace: ns, name: 'limits', labels: { [SYNC_LABEL]: 'true' } },
      data: { max: '10' },
    });
    await eventually('created in every member', () => everywhere('limits', { max: '10' }));

    const edited = deepCopy((await copyIn('member-2', 'limits'))!);
    edited.data = { max: '999' };
    await clusters['member-2']!.client.update(ConfigMap, edited);
    await clusters['member-3']!.client.delete(ConfigMap, { namespace: ns, name: 'limits' });
    await eventually('edited and deleted copies put back', () => everywhere('limits', { max: '10' }));

    // A member's own ConfigMap of a source's name is not ours: not overwritten, not deleted.
    await clusters['member-1']!.client.create(ConfigMap, {
      metadata: { namespace: ns, name: 'theirs' },
      data: { owner: 'member-1' },
    });
    await mgmt().create(ConfigMap, {
      metadata: { namespace: ns, name: 'theirs', labels: { [SYNC_LABEL]: 'true' } },
      data: { owner: 'fleet' },
    });
    await eventually('copied where free', async () => {
      for (const m of ['member-2', 'member-3'])
        if ((await copyIn(m, 'theirs'))?.data?.owner !== 'fleet') return false;
      return true;
    });
    await mgmt().delete(ConfigMap, { namespace: ns, name: 'theirs' });
    await eventually('copies deleted', async () => {
      for (const m of ['member-2', 'member-3']) if (await copyIn(m, 'theirs')) return false;
      return true;
    });
    expect((await copyIn('member-1', 'theirs'))?.data).toEqual({ owner: 'member-1' });
  });

  it('a member engaged later gets the copies once its namespace exists', async () => {
    await mgmt().create(ConfigMap, {
      metadata: { namespace: ns, name: 'welcome', labels: { [SYNC_LABEL]: 'true' } },
      data: { hello: 'world' },
    });
    await eventually('created in every member', () => everywhere('welcome', { hello: 'world' }));
    const server = await startApiServer();
    const config: RestConfig = {
      ...clusters['member-1']!.config,
      host: server.url,
      tlsClientConfig: { caData: server.caPem },
      bearerToken: server.token,
    };
    const client = newClient(config);
    clusters['member-4'] = { server, config, client };
    provider.add('member-4', config);
    // No source changes: the new member's Namespace event maps to the sources of that namespace.
    await client.create(Namespace, { metadata: { name: ns } });
    await eventually('copied into the new member', async () => {
      const copy = await client.get(ConfigMap, { namespace: ns, name: 'welcome' }).catch(() => undefined);
      return copy?.data?.hello === 'world';
    });
  });
});

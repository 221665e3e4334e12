import { type ApiClient, Deployment, Namespace, Service, type WatchEvent } from '@kubeloop/client';
import { createOrPatch, createOrUpdate, type OperationResult } from '@kubeloop/client/controllerutil';
import { InvalidRequestError } from '@kubeloop/client/errors';
import type { V1Deployment, V1Service } from '@kubeloop/client/models';
import type { RestConfig } from '@kubeloop/config';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { realCluster, useFaultServer } from './support/fault-server.js';
import { type RecordedRequest, recordingClient } from './support/recording-transport.js';
import { testConfig, uniqueName, waitFor } from './support.js';

/**
 * C30: writes that change nothing. Against envtest the writes are also counted in the server's request log;
 * against a real cluster (USE_EXISTING_CLUSTER=true) they are counted as the client sent them.
 */
describe('C30 writes that change nothing', () => {
  const fault = realCluster ? undefined : useFaultServer('kubeloop-c30');
  let config: RestConfig;
  let api: ApiClient;
  let requests: RecordedRequest[];
  const cleanups: Array<() => Promise<void>> = [];
  beforeAll(() => {
    config = fault ? fault.config : testConfig();
    ({ client: api, requests } = recordingClient(config, { fieldOwner: 'c30' }));
  });
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });
  afterAll(async () => {
    await api?.close();
  });

  async function namespace(): Promise<string> {
    const ns = uniqueName('c30');
    await api.create(Namespace, { metadata: { name: ns } });
    cleanups.push(async () => {
      await api.delete(Namespace, { name: ns }).catch(() => undefined);
    });
    return ns;
  }

  /** Writes (not GET) in `ns`, counted at the server when it is envtest, else as sent by the client. */
  function writesIn(ns: string, since: number): number {
    if (fault)
      return fault.server.faults
        .requests({ namespace: ns, since })
        .filter((r) => !['get', 'list', 'watch'].includes(r.verb)).length;
    return requests.slice(since).filter((r) => r.method !== 'GET' && r.path.includes(`/namespaces/${ns}/`))
      .length;
  }
  const mark = () => (fault ? Date.now() : requests.length);

  /** Sets only replicas, image and labels; labels in a different key order each call; one optional field undefined. */
  const mutateDeployment = (i: number) => (d: V1Deployment) => {
    const labels = i % 2 ? { tier: 'web', app: 'c30' } : { app: 'c30', tier: 'web' };
    d.metadata!.labels = labels;
    d.spec ??= { selector: { matchLabels: { app: 'c30' } }, template: {} };
    d.spec.replicas = 2;
    d.spec.paused = undefined;
    d.spec.selector = { matchLabels: { app: 'c30' } };
    const tpl = d.spec.template;
    tpl.metadata = { ...tpl.metadata, labels };
    tpl.spec ??= { containers: [] };
    const c = tpl.spec.containers[0];
    if (c) c.image = 'registry.k8s.io/pause:3.10';
    else tpl.spec.containers.push({ name: 'app', image: 'registry.k8s.io/pause:3.10' });
  };

  it.each([
    ['createOrUpdate', createOrUpdate],
    ['createOrPatch', createOrPatch],
  ] as const)(
    'C30 %s of a server-defaulted Deployment: created once, then 100 × unchanged with 0 writes',
    async (_n, fn) => {
      const ns = await namespace();
      const key = { namespace: ns, name: 'web' };
      const first = await fn(api, Deployment, key, mutateDeployment(0));
      expect(first.result).toBe('created');
      // the server filled defaults the mutate never mentions
      const stored = await api.get(Deployment, key);
      expect(stored.spec?.template.spec?.containers[0]?.imagePullPolicy).toBe('IfNotPresent');
      expect(stored.spec?.revisionHistoryLimit).toBe(10);
      const since = mark();
      const results = new Set<OperationResult>();
      for (let i = 1; i <= 100; i++)
        results.add((await fn(api, Deployment, key, mutateDeployment(i))).result);
      expect([...results]).toEqual(['unchanged']);
      expect(writesIn(ns, since)).toBe(0);
      expect((await api.get(Deployment, key)).metadata?.resourceVersion).toBe(
        stored.metadata?.resourceVersion,
      );
      // a real change is one write
      const changed = await fn(api, Deployment, key, (d) => {
        mutateDeployment(1)(d);
        d.spec!.replicas = 3;
      });
      expect(changed.result).toBe('updated');
      expect(writesIn(ns, since)).toBe(1);
    },
  );

  it('C30 createOrUpdate of a Service whose ports the server defaults (targetPort, protocol): 0 writes after create', async () => {
    const ns = await namespace();
    const key = { namespace: ns, name: 'svc' };
    const mutate = (s: V1Service) => {
      s.metadata!.labels = { app: 'c30' };
      s.spec = { ...s.spec, selector: { app: 'c30' }, ports: s.spec?.ports ?? [{ name: 'http', port: 80 }] };
    };
    expect((await createOrUpdate(api, Service, key, mutate)).result).toBe('created');
    const since = mark();
    for (let i = 0; i < 10; i++)
      expect((await createOrUpdate(api, Service, key, mutate)).result).toBe('unchanged');
    expect(writesIn(ns, since)).toBe(0);
  });

  it('C30 createOrPatch writes status through the status subresource: updatedStatusOnly, then updatedStatus', async () => {
    const ns = await namespace();
    const key = { namespace: ns, name: 'web' };
    await createOrPatch(api, Deployment, key, mutateDeployment(0));
    const only = await createOrPatch(api, Deployment, key, (d) => {
      d.status = { ...d.status, observedGeneration: 1 };
    });
    expect(only.result).toBe('updatedStatusOnly');
    expect(only.object.status?.observedGeneration).toBe(1);
    const both = await createOrPatch(api, Deployment, key, (d) => {
      d.spec!.replicas = 4;
      d.status = { ...d.status, observedGeneration: 2 };
    });
    expect(both.result).toBe('updatedStatus');
    const now = await api.get(Deployment, key);
    expect(now.spec?.replicas).toBe(4);
    expect(now.status?.observedGeneration).toBe(2);
  });

  it('C30 a mutate that changes the name or namespace throws before any write', async () => {
    const ns = await namespace();
    const since = mark();
    await expect(
      createOrUpdate(api, Deployment, { namespace: ns, name: 'web' }, (d) => {
        mutateDeployment(0)(d);
        d.metadata!.name = 'other';
      }),
    ).rejects.toBeInstanceOf(InvalidRequestError);
    await createOrPatch(api, Deployment, { namespace: ns, name: 'web' }, mutateDeployment(0));
    const since2 = mark();
    await expect(
      createOrPatch(api, Deployment, { namespace: ns, name: 'web' }, (d) => {
        d.metadata!.namespace = 'default';
      }),
    ).rejects.toThrow(/cannot change the object's name or namespace/);
    expect(writesIn(ns, since2)).toBe(0);
    expect(writesIn(ns, since)).toBe(1); // only the create in between
  });

  it('C30 server-side apply of unchanged intent 10 times: bodies carry only set fields, RV changes once, 1 ADDED and 0 MODIFIED', async () => {
    const ns = await namespace();
    const ac = new AbortController();
    cleanups.push(async () => ac.abort());
    const events: WatchEvent<V1Deployment>[] = [];
    const list = await api.list(Deployment, { namespace: ns });
    const watching = (async () => {
      for await (const ev of api.watch(Deployment, {
        namespace: ns,
        resourceVersion: list.metadata.resourceVersion,
        signal: ac.signal,
      }))
        events.push(ev);
    })();
    const from = requests.length;
    const rvs = new Set<string | undefined>();
    for (let i = 0; i < 10; i++) {
      const d: V1Deployment = {
        metadata: { name: 'web', namespace: ns },
        spec: { selector: { matchLabels: {} }, template: {} },
      };
      mutateDeployment(i)(d);
      // what a caller spreading a typed object leaves behind: null timestamps and an empty status
      const config = { ...d, metadata: { ...d.metadata!, creationTimestamp: null }, status: {} };
      rvs.add(
        (await api.apply(Deployment, config as never, { fieldManager: 'c30-apply' })).metadata
          ?.resourceVersion,
      );
    }
    expect(rvs.size).toBe(1);
    const bodies = requests
      .slice(from)
      .filter((r) => r.method === 'PATCH')
      .map((r) => r.body ?? '');
    expect(bodies).toHaveLength(10);
    for (const b of bodies) {
      expect(b).not.toContain('null');
      expect(JSON.parse(b)).not.toHaveProperty('status');
      expect(JSON.parse(b).spec).not.toHaveProperty('paused');
    }
    await waitFor(() => events.length >= 1, 'the ADDED event');
    // a later, real change shows as MODIFIED: the watch is live, so no MODIFIED above means none happened
    await api.apply(
      Deployment,
      { metadata: { name: 'web', namespace: ns }, spec: { replicas: 5 } },
      {
        fieldManager: 'c30-other',
        force: true,
      },
    );
    await waitFor(() => events.length >= 2, 'the MODIFIED event of the real change');
    ac.abort();
    await watching;
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED']);
  });
});

import { newManager } from '@kubeloop/builder';
import { type Client, ConfigMap, Deployment, StatusError } from '@kubeloop/client';
import { DelegatingClient } from '@kubeloop/client/apiutil';
import { testReconciler } from '@kubeloop/testing';
import { describe, expect, it, vi } from 'vitest';
import {
  addConfigMapGenerator,
  configMapGeneratorReconciler,
  configMapNameFor,
} from '../src/configmap-generator.js';
import { target, useTestTarget } from './support.js';

/** The reconciler reads as the manager's client does: the recording client wrapped as a cached-read client. */
const cached = (client: Client) => new DelegatingClient(client, client);

// One file, three targets: KUBELOOP_TEST_TARGET=fake|envtest|cluster (default envtest).
const t = useTestTarget();

const deployment = (ns: string, image: string) => ({
  metadata: { namespace: ns, name: 'web' },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image }] } },
  },
});

/** The reconciler as the controller registers it: for(Deployment).owns(ConfigMap). */
const generator = (ns: string) => ({
  client: t().client,
  request: { namespace: ns, name: 'web' },
  for: Deployment,
  owns: [ConfigMap],
});

describe('example: ConfigMap generator with owns', () => {
  it('one reconcile creates the ConfigMap, controlled by the Deployment, and its creation enqueues the Deployment', async () => {
    const ns = await t().namespace();
    const dep = await t().client.create(Deployment, deployment(ns, 'app:1'));
    const run = await testReconciler(
      ({ client }) => configMapGeneratorReconciler(cached(client)),
      generator(ns),
    );
    expect(run.error).toBeUndefined();
    expect(run.result).toEqual({});
    const cmName = configMapNameFor('web');
    expect(run.writes.map((w) => `${w.verb} ${w.kind.kind} ${w.name}`)).toEqual([
      `create ConfigMap ${cmName}`,
    ]);
    expect(run.enqueued).toEqual([
      { request: { namespace: ns, name: 'web' }, reason: 'watch', cause: `create ConfigMap ${ns}/${cmName}` },
    ]);
    const cm = await t().client.get(ConfigMap, { namespace: ns, name: cmName });
    expect(cm.data).toEqual({ images: 'app=app:1' });
    expect(cm.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'Deployment', name: 'web', uid: dep.metadata?.uid, controller: true }),
    ]);
  });

  it('until quiescent: the second reconcile (caused by the first) writes nothing', async () => {
    const ns = await t().namespace();
    await t().client.create(Deployment, deployment(ns, 'app:1'));
    const run = await testReconciler(({ client }) => configMapGeneratorReconciler(cached(client)), {
      ...generator(ns),
      untilQuiescent: true,
    });
    expect(run.quiescent).toBe(true);
    expect(run.runs.map((r) => r.writes.length)).toEqual([1, 0]);
    expect(run.pending).toEqual([]);
  });

  it('a deleted Deployment is done without writes', async () => {
    const ns = await t().namespace();
    const run = await testReconciler(
      ({ client }) => configMapGeneratorReconciler(cached(client)),
      generator(ns),
    );
    expect(run).toMatchObject({ result: {}, writes: [], enqueued: [] });
  });

  it.skipIf(target === 'cluster')('a failed write is the error, and the request is retried', async () => {
    const ns = await t().namespace();
    await t().client.create(Deployment, deployment(ns, 'app:1'));
    t().faults?.failRequests({
      match: { verb: 'create', resource: 'configmaps', namespace: ns },
      status: 500,
      times: 1,
    });
    const run = await testReconciler(
      ({ client }) => configMapGeneratorReconciler(cached(client)),
      generator(ns),
    );
    expect(run.error).toBeInstanceOf(StatusError);
    expect(run.pending).toEqual([{ request: { namespace: ns, name: 'web' }, reason: 'error' }]);
  });

  // A manager needs a listening server: envtest or a cluster, not the fake.
  it.skipIf(target === 'fake')(
    'the manager creates the owned ConfigMap, follows the Deployment, and restores the ConfigMap when someone edits it',
    async () => {
      const ns = await t().namespace();
      const client = t().client;
      // Scoped to the test namespace: on a shared cluster other tests own the rest.
      const mgr = newManager(t().config!, { cache: { defaultNamespaces: [ns] } });
      addConfigMapGenerator(mgr);
      const stop = new AbortController();
      const running = mgr.start(stop.signal);
      try {
        await client.create(Deployment, deployment(ns, 'app:1'));
        const key = { namespace: ns, name: configMapNameFor('web') };
        await vi.waitFor(async () =>
          expect((await client.get(ConfigMap, key)).data).toEqual({ images: 'app=app:1' }),
        );
        const current = await client.get(Deployment, { namespace: ns, name: 'web' });
        await client.update(Deployment, { ...current, spec: deployment(ns, 'app:2').spec });
        await vi.waitFor(async () =>
          expect((await client.get(ConfigMap, key)).data).toEqual({ images: 'app=app:2' }),
        );
        // owns(ConfigMap): an edit of the child reconciles its owner, which puts it back
        await client.update(ConfigMap, {
          ...(await client.get(ConfigMap, key)),
          data: { images: 'tampered' },
        });
        await vi.waitFor(async () =>
          expect((await client.get(ConfigMap, key)).data).toEqual({ images: 'app=app:2' }),
        );
      } finally {
        stop.abort();
        await running;
      }
    },
  );
});

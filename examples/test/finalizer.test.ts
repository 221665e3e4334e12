import { newManager } from '@kubeloop/builder';
import { type Client, ConfigMap, isNotFound } from '@kubeloop/client';
import { DelegatingClient } from '@kubeloop/client/apiutil';
import { testReconciler } from '@kubeloop/testing';
import { describe, expect, it, vi } from 'vitest';
import { addFinalizerController, FINALIZER, finalizerReconciler, LABEL } from '../src/finalizer.js';
import { target, useTestTarget } from './support.js';

/** The reconciler reads as the manager's client does: the recording client wrapped as a cached-read client. */
const cached = (client: Client) => new DelegatingClient(client, client);

// One file, three targets: KUBELOOP_TEST_TARGET=fake|envtest|cluster (default envtest).
const t = useTestTarget();

const gone = (ns: string, name: string) =>
  t()
    .client.get(ConfigMap, { namespace: ns, name })
    .then(
      () => false,
      (err: unknown) => isNotFound(err),
    );

describe('example: finalizer controller', () => {
  it('a labelled ConfigMap gets the finalizer; an unlabelled one is left alone', async () => {
    const ns = await t().namespace();
    await t().client.create(ConfigMap, {
      metadata: { namespace: ns, name: 'settings', labels: { [LABEL]: 'true' } },
    });
    await t().client.create(ConfigMap, { metadata: { namespace: ns, name: 'other' } });
    const cleanup = async () => undefined;
    const opts = { client: t().client, for: ConfigMap };
    const labelled = await testReconciler(
      ({ client, recorder }) => finalizerReconciler(cached(client), cleanup, recorder),
      {
        ...opts,
        request: { namespace: ns, name: 'settings' },
      },
    );
    expect(labelled.writes.map((w) => `${w.verb} ${w.name}`)).toEqual(['update settings']);
    expect(
      (await t().client.get(ConfigMap, { namespace: ns, name: 'settings' })).metadata?.finalizers,
    ).toEqual([FINALIZER]);
    const other = await testReconciler(({ client }) => finalizerReconciler(cached(client), cleanup), {
      ...opts,
      request: { namespace: ns, name: 'other' },
    });
    expect(other.writes).toEqual([]);
  });

  it('on delete: cleans up once, records an Event, removes the finalizer, and the object goes', async () => {
    const ns = await t().namespace();
    const key = { namespace: ns, name: 'settings' };
    await t().client.create(ConfigMap, {
      metadata: { ...key, labels: { [LABEL]: 'true' }, finalizers: [FINALIZER] },
    });
    await t().client.delete(ConfigMap, key); // terminating: the finalizer holds it
    const cleaned: string[] = [];
    const run = await testReconciler(
      ({ client, recorder }) =>
        finalizerReconciler(
          cached(client),
          async (cm) => void cleaned.push(cm.metadata?.name ?? ''),
          recorder,
        ),
      { client: t().client, for: ConfigMap, request: key },
    );
    expect(cleaned).toEqual(['settings']);
    expect(run.events.map((e) => `${e.type} ${e.reason}: ${e.note}`)).toEqual([
      'Normal BackedUp: data backed up before deletion',
    ]);
    expect(run.writes.map((w) => `${w.verb} ${w.name}`)).toEqual(['update settings']);
    // the deletion reaches the controller's watch: for(ConfigMap) enqueues the object once more
    expect(run.enqueued).toEqual([
      { request: key, reason: 'watch', cause: `delete ConfigMap ${ns}/settings` },
    ]);
    expect(await gone(ns, 'settings')).toBe(true);
  });

  it('a failing cleanup is the error: no Event, the finalizer stays, the request is retried', async () => {
    const ns = await t().namespace();
    const key = { namespace: ns, name: 'settings' };
    await t().client.create(ConfigMap, {
      metadata: { ...key, labels: { [LABEL]: 'true' }, finalizers: [FINALIZER] },
    });
    await t().client.delete(ConfigMap, key);
    const run = await testReconciler(
      ({ client, recorder }) =>
        finalizerReconciler(
          cached(client),
          async () => {
            throw new Error('backup target unavailable');
          },
          recorder,
        ),
      { client: t().client, for: ConfigMap, request: key },
    );
    expect(String(run.error)).toContain('backup target unavailable');
    expect(run.events).toEqual([]);
    expect(run.pending).toEqual([{ request: key, reason: 'error' }]);
    expect((await t().client.get(ConfigMap, key)).metadata?.finalizers).toEqual([FINALIZER]);
  });

  // A manager needs a listening server: envtest or a cluster, not the fake.
  it.skipIf(target === 'fake')(
    'the manager adds its finalizer, runs the cleanup once on delete (retrying a failure), then lets the object go',
    async () => {
      const ns = await t().namespace();
      const client = t().client;
      const cleaned: string[] = [];
      let failures = 1;
      // Scoped to the test namespace: on a shared cluster other tests own the rest.
      const mgr = newManager(t().config!, { cache: { defaultNamespaces: [ns] } });
      addFinalizerController(mgr, async (cm) => {
        if (failures-- > 0) throw new Error('backup target unavailable');
        cleaned.push(cm.metadata?.name ?? '');
      });
      const stop = new AbortController();
      const running = mgr.start(stop.signal);
      try {
        const key = { namespace: ns, name: 'settings' };
        await client.create(ConfigMap, {
          metadata: { ...key, labels: { [LABEL]: 'true' } },
          data: { a: '1' },
        });
        await client.create(ConfigMap, { metadata: { namespace: ns, name: 'other' }, data: {} });
        await vi.waitFor(async () =>
          expect((await client.get(ConfigMap, key)).metadata?.finalizers).toEqual([FINALIZER]),
        );
        expect(
          (await client.get(ConfigMap, { namespace: ns, name: 'other' })).metadata?.finalizers,
        ).toBeUndefined();
        await client.delete(ConfigMap, key);
        await vi.waitFor(async () => expect(await gone(ns, 'settings')).toBe(true));
        expect(cleaned).toEqual(['settings']);
      } finally {
        stop.abort();
        await running;
      }
    },
  );
});

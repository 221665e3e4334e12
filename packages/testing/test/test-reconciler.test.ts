import { enqueueRequestsFromMapFunc, type Reconciler, TerminalError } from '@kubeloop/builder';
import { ConfigMap, isNotFound, type KubeObject, Namespace, Secret } from '@kubeloop/client';
import { FakeClock } from '@kubeloop/core/testing';
import { describe, expect, it } from 'vitest';
import { newFakeClient, startTestTarget, testReconciler, testTargetName } from '../src/index.js';

const cm = (name: string, data: Record<string, string> = {}, ns = 'default'): KubeObject =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: ns, name }, data }) as KubeObject;

/** Copies `data.value` of each ConfigMap into a Secret of the same name and records an Event. */
const copier = (t: {
  client: import('@kubeloop/client').Client;
  recorder: { event: (...a: never[]) => void };
}): Reconciler => ({
  async reconcile(_ctx, req) {
    const src = await t.client.get(ConfigMap, req);
    await t.client.apply(
      Secret,
      {
        metadata: { namespace: req.namespace, name: req.name },
        stringData: { value: src.data?.value ?? '' },
      },
      { fieldManager: 'copier', force: true },
    );
    (t.recorder.event as (...a: unknown[]) => void)(src, 'Normal', 'Copied', 'Copy', `copied ${req.name}`);
    return { requeueAfterMs: 60_000 };
  },
});

describe('testReconciler', () => {
  it('runs one reconcile on a seeded fake: result, writes, events, requeueAfter', async () => {
    const run = await testReconciler(copier, { objects: [cm('a', { value: 'x' })], for: ConfigMap });
    expect(run.result).toEqual({ requeueAfterMs: 60_000 });
    expect(run.writes.map((w) => `${w.verb} ${w.kind.kind} ${w.name}`)).toEqual(['apply Secret a']);
    expect(run.events.map((e) => `${e.type} ${e.reason} ${e.note}`)).toEqual(['Normal Copied copied a']);
    expect(run.enqueued).toEqual([
      { request: { namespace: 'default', name: 'a' }, reason: 'requeueAfter', afterMs: 60_000 },
    ]);
    expect(run.quiescent).toBe(true);
  });

  it('maps changes of watched kinds through the handlers (watches)', async () => {
    const run = await testReconciler(copier, {
      objects: [cm('a', { value: 'x' })],
      for: ConfigMap,
      watches: [
        {
          kind: Secret,
          handler: enqueueRequestsFromMapFunc((s) => [
            { namespace: s.metadata?.namespace ?? '', name: `from-${s.metadata?.name}` },
          ]),
        },
      ],
    });
    expect(run.enqueued[0]).toEqual({
      request: { namespace: 'default', name: 'from-a' },
      reason: 'watch',
      cause: 'create Secret default/a',
    });
  });

  it('untilQuiescent stops at its bound when every reconcile causes another', async () => {
    let n = 0;
    const client = await newFakeClient({ objects: [cm('a')] });
    try {
      const churning: Reconciler = {
        async reconcile(_ctx, req) {
          n++;
          const o = await client.get(ConfigMap, req);
          await client.update(ConfigMap, { ...o, data: { n: String(n) } });
        },
      };
      const run = await testReconciler(churning, {
        client,
        for: ConfigMap,
        request: { namespace: 'default', name: 'a' },
        untilQuiescent: 3,
      });
      expect(run.runs).toHaveLength(3);
      expect(run.quiescent).toBe(false);
      expect(run.pending).toEqual([{ request: { namespace: 'default', name: 'a' }, reason: 'watch' }]);
    } finally {
      await client.close();
    }
  });

  it('a TerminalError is not retried; another error is; a malformed Result is an error', async () => {
    const terminal = await testReconciler(
      { reconcile: async () => Promise.reject(new TerminalError('bad spec')) },
      { request: { namespace: 'default', name: 'x' } },
    );
    expect(terminal.error).toBeInstanceOf(TerminalError);
    expect(terminal.pending).toEqual([]);
    const retried = await testReconciler(
      { reconcile: async () => Promise.reject(new Error('flaky')) },
      { request: { namespace: 'default', name: 'x' } },
    );
    expect(retried.pending).toEqual([{ request: { namespace: 'default', name: 'x' }, reason: 'error' }]);
    const malformed = await testReconciler(
      { reconcile: async () => ({ requeueAfterMs: '1000' }) as never },
      { request: { namespace: 'default', name: 'x' } },
    );
    expect(String(malformed.error)).toMatch(/requeueAfterMs must be a finite number/);
    const requeue = await testReconciler(
      { reconcile: async () => ({ requeue: true }) },
      { request: { namespace: 'default', name: 'x' } },
    );
    expect(requeue.pending).toEqual([{ request: { namespace: 'default', name: 'x' }, reason: 'requeue' }]);
  });

  it('gives the factory the clock; refuses what it cannot run', async () => {
    const clock = new FakeClock(5_000);
    let seen = -1;
    await testReconciler(
      ({ clock: c }) => ({
        reconcile: async () => {
          seen = c.now();
        },
      }),
      { clock, request: { namespace: 'default', name: 'x' } },
    );
    expect(seen).toBe(5_000);
    await expect(testReconciler(copier, { objects: [cm('a'), cm('b')], for: ConfigMap })).rejects.toThrow(
      /request is required/,
    );
    await expect(
      testReconciler(copier, { owns: [Secret], request: { namespace: '', name: 'x' } }),
    ).rejects.toThrow(/owns needs for/);
    const client = await newFakeClient();
    await expect(
      testReconciler(copier, { client, objects: [cm('a')], request: { namespace: 'default', name: 'a' } }),
    ).rejects.toThrow(/not with client/);
    await expect(
      testReconciler(copier, { request: { namespace: 'default', name: 'a' }, untilQuiescent: 0 }),
    ).rejects.toThrow(/untilQuiescent/);
    await client.close();
  });
});

describe('test targets', () => {
  it('reads KUBELOOP_TEST_TARGET, then USE_EXISTING_CLUSTER', () => {
    expect(testTargetName({})).toBe('envtest');
    expect(testTargetName({ USE_EXISTING_CLUSTER: 'true' })).toBe('cluster');
    expect(testTargetName({ KUBELOOP_TEST_TARGET: 'fake', USE_EXISTING_CLUSTER: 'true' })).toBe('fake');
    expect(() => testTargetName({ KUBELOOP_TEST_TARGET: 'kind' })).toThrow(
      /KUBELOOP_TEST_TARGET must be one of fake, envtest, cluster; got "kind"/,
    );
  });

  it('fake and envtest targets give a client, namespaces and faults; only envtest a config', async () => {
    for (const name of ['fake', 'envtest'] as const) {
      const t = await startTestTarget({ target: name });
      try {
        const ns = await t.namespace();
        await t.client.create(ConfigMap, { metadata: { namespace: ns, name: 'a' } });
        expect((await t.client.list(ConfigMap, { namespace: ns })).items).toHaveLength(1);
        expect(t.faults).toBeDefined();
        expect(t.config === undefined).toBe(name === 'fake');
      } finally {
        await t.stop();
      }
    }
  });

  // Runs only when pointed at a cluster (KUBELOOP_TEST_TARGET=cluster or USE_EXISTING_CLUSTER=true, KUBECONFIG set):
  // CI has none; docs/compatibility.md records the runs against a real kube-apiserver.
  it.skipIf(testTargetName() !== 'cluster')(
    'the cluster target: a live client and config, no faults, namespaces of its own, testReconciler on it; stop deletes the namespaces',
    async () => {
      const t = await startTestTarget();
      let ns = '';
      try {
        expect(t.name).toBe('cluster');
        expect(t.faults).toBeUndefined();
        expect(t.config?.host).toMatch(/^https:/);
        ns = await t.namespace();
        await t.client.create(ConfigMap, {
          metadata: { namespace: ns, name: 'a' },
          data: { value: 'v' },
        } as KubeObject);
        const run = await testReconciler(copier, {
          client: t.client,
          request: { namespace: ns, name: 'a' },
        });
        expect(run.error).toBeUndefined();
        expect(run.result).toEqual({ requeueAfterMs: 60_000 });
        expect(run.writes.map((w) => w.verb)).toEqual(['apply']);
        expect((await t.client.get(Secret, { namespace: ns, name: 'a' })).data?.value).toBe(
          Buffer.from('v').toString('base64'),
        );
      } finally {
        await t.stop();
      }
      // the namespace is deleted (gone, or Terminating on a cluster without a namespace controller)
      const check = await startTestTarget();
      try {
        const gone = await check.client.get(Namespace, { name: ns }).catch((e: unknown) => e);
        expect(
          isNotFound(gone) || (gone as KubeObject).metadata?.deletionTimestamp !== undefined,
          String(gone),
        ).toBe(true);
      } finally {
        await check.stop();
      }
    },
    60_000,
  );
});

import {
  enqueueRequestsFromMapFunc,
  labelSelectorPredicate,
  newControllerManagedBy,
  newManager,
  TerminalError,
} from '@kubeloop/builder';
import { ConfigMap, type DeepReadonly, type KubeObject, kind, Secret } from '@kubeloop/client';
import { onAbort } from '@kubeloop/core';
import { FakeClock } from '@kubeloop/core/testing';
import { ItemExponentialFailureRateLimiter } from '@kubeloop/workqueue';
import { describe, expect, it, vi } from 'vitest';
import { installCRD } from './support/crds.js';
import {
  captureLogger,
  type LogRecord,
  testConfig,
  uniqueName,
  useLiveCluster,
  withNamespace,
} from './support.js';

const AppV1 = kind<KubeObject>('watches.example.com/v1', 'App');
const AppV2 = kind<KubeObject>('watches.example.com/v2', 'App');

describe('builder watches, handlers and reconcile results through the real stack', () => {
  const live = useLiveCluster();

  async function setup(prefix: string) {
    const api = live.client();
    const ns = uniqueName(prefix);
    live.cleanups.push(await withNamespace(api, ns));
    const records: LogRecord[] = [];
    const mgr = newManager(testConfig(), {
      logger: captureLogger(records),
      cache: { defaultNamespaces: [ns] },
    });
    const start = async () => {
      const ac = new AbortController();
      const run = mgr.start(ac.signal);
      live.cleanups.push(async () => {
        ac.abort();
        await run;
      });
      await vi.waitFor(() => expect(records.some((r) => r.msg === 'Starting workers')).toBe(true), {
        timeout: 20_000,
      });
    };
    return { api, ns, mgr, records, start };
  }

  it('owns: an owner reference written with an older API version still reaches the owner; watchesMetadata with a map function and a label selector predicate', async () => {
    const { api, ns, mgr, start } = await setup('owns-version');
    await installCRD(api, {
      group: 'watches.example.com',
      kind: 'App',
      plural: 'apps',
      scope: 'Namespaced',
      versions: ['v1', 'v2'],
    });
    const owner = await api.create(AppV1, { metadata: { namespace: ns, name: 'app' } });
    await api.create(ConfigMap, {
      metadata: {
        namespace: ns,
        name: 'child',
        ownerReferences: [
          {
            apiVersion: 'watches.example.com/v1',
            kind: 'App',
            name: 'app',
            uid: owner.metadata?.uid as string,
            controller: true,
          },
        ],
      },
    });
    const seen: string[] = [];
    newControllerManagedBy(mgr)
      .for(AppV2, { predicates: [{ create: () => false }] })
      .owns(ConfigMap, { predicates: [{ create: () => false }] })
      .watchesMetadata(
        Secret,
        enqueueRequestsFromMapFunc((s: DeepReadonly<KubeObject>) => [
          { namespace: ns, name: s.metadata?.annotations?.app ?? '' },
        ]),
        { predicates: [labelSelectorPredicate('notify=app')] },
      )
      .complete({
        async reconcile(_ctx, req) {
          seen.push(req.name);
        },
      });
    await start();
    await api.patch(
      ConfigMap,
      { namespace: ns, name: 'child' },
      { type: 'merge', data: { data: { a: '1' } } },
    );
    await vi.waitFor(() => expect(seen).toEqual(['app']), { timeout: 20_000 });
    // A Secret without the label is filtered; one with it maps (from metadata only) to its App.
    await api.create(Secret, { metadata: { namespace: ns, name: 's0', annotations: { app: 'ignored' } } });
    await api.create(Secret, {
      metadata: { namespace: ns, name: 's1', labels: { notify: 'app' }, annotations: { app: 'from-secret' } },
      data: { k: 'dg==' },
    });
    await vi.waitFor(() => expect(seen).toEqual(['app', 'from-secret']), { timeout: 20_000 });
  });

  it('requeue, requeueAfter and error backoff follow the test clock; terminal errors stop, thrown errors retry, a reconcile timeout aborts the signal', async () => {
    const { api, ns, mgr, records, start } = await setup('results');
    const clock = new FakeClock();
    const times: Record<string, number[]> = {};
    let timedOutSignal: unknown;
    newControllerManagedBy(mgr)
      .for(ConfigMap)
      .withOptions({
        clock,
        rateLimiter: new ItemExponentialFailureRateLimiter(100, 10_000),
        reconciliationTimeoutMs: 30_000,
        maxConcurrentReconciles: 4,
      })
      .complete({
        async reconcile(ctx, req) {
          times[req.name] ??= [];
          const t = times[req.name] as number[];
          t.push(clock.now());
          if (req.name === 'after' && t.length < 3) return { requeueAfterMs: 1000 };
          if (req.name === 'again' && t.length < 3) return { requeue: true };
          if (req.name === 'throws' && t.length < 3) throw new Error('transient');
          if (req.name === 'terminal') throw new TerminalError('bad spec');
          if (req.name === 'slow' && t.length === 1) {
            await new Promise<void>((resolve) => onAbort(ctx.signal, () => resolve()));
            timedOutSignal = ctx.signal.reason;
            throw ctx.signal.reason;
          }
          return undefined;
        },
      });
    await start();
    for (const name of ['after', 'again', 'throws', 'terminal', 'slow']) {
      await api.create(ConfigMap, { metadata: { namespace: ns, name } });
    }
    await vi.waitFor(
      () => expect(Object.keys(times).sort()).toEqual(['after', 'again', 'slow', 'terminal', 'throws']),
      {
        timeout: 20_000,
      },
    );
    // Drive the clock in 50 ms steps, letting the queue hand out what became ready.
    for (let i = 0; i < 700 && (times.slow?.length ?? 0) < 2; i++) {
      clock.step(50);
      await new Promise((r) => setTimeout(r, 1));
    }
    await vi.waitFor(() => expect(times.slow).toHaveLength(2), { timeout: 20_000 });
    expect(times.after).toEqual([0, 1000, 2000]);
    expect(times.again).toEqual([0, 100, 300]); // backoff 100, 200
    expect(times.throws).toEqual([0, 100, 300]);
    expect(times.terminal).toEqual([0]);
    expect(times.slow?.[0]).toBe(0);
    expect(times.slow?.[1]).toBeGreaterThanOrEqual(30_000);
    expect((timedOutSignal as Error).name).toBe('TimeoutError');
    expect(records.filter((r) => r.msg === 'Reconciler error (terminal, not retried)')).toHaveLength(1);
    expect(records.some((r) => r.msg === 'Reconciler error' && r.timeoutMs === 30_000)).toBe(true);
  });

  it('never two concurrent reconciles of one key under 8 workers and heavy churn', async () => {
    const { api, ns, mgr, start } = await setup('churn');
    const active = new Map<string, number>();
    let overlap = false;
    let parallel = 0;
    let maxParallel = 0;
    let reconciles = 0;
    const lastSeen = new Map<string, string>();
    const client = mgr.getClient();
    newControllerManagedBy(mgr)
      .for(ConfigMap)
      .withOptions({ maxConcurrentReconciles: 8 })
      .complete({
        async reconcile(_ctx, req) {
          const n = (active.get(req.name) ?? 0) + 1;
          active.set(req.name, n);
          if (n > 1) overlap = true;
          parallel++;
          maxParallel = Math.max(maxParallel, parallel);
          try {
            const cm = await client.get(ConfigMap, req).catch(() => undefined);
            if (cm?.data?.v) lastSeen.set(req.name, cm.data.v);
            await new Promise((r) => setTimeout(r, 5));
          } finally {
            parallel--;
            active.set(req.name, (active.get(req.name) ?? 1) - 1);
            reconciles++;
          }
        },
      });
    await start();
    const names = Array.from({ length: 16 }, (_, i) => `cm-${i}`);
    await Promise.all(
      names.map((name) => api.create(ConfigMap, { metadata: { namespace: ns, name }, data: { v: '0' } })),
    );
    for (let round = 1; round <= 6; round++) {
      await Promise.all(
        names.map((name) =>
          api.patch(ConfigMap, { namespace: ns, name }, { type: 'merge', data: { data: { v: `${round}` } } }),
        ),
      );
    }
    // Every object's last state is reconciled (level-triggered), and no key ever ran twice at once.
    await vi.waitFor(() => expect(names.every((n) => lastSeen.get(n) === '6')).toBe(true), {
      timeout: 30_000,
    });
    expect(overlap).toBe(false);
    expect(maxParallel).toBeGreaterThan(1);
    expect(maxParallel).toBeLessThanOrEqual(8);
    expect(reconciles).toBeGreaterThanOrEqual(names.length);
  });
});

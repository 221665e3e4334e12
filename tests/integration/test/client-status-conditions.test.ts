import { InformerCache } from '@kubeloop/cache';
import { type ApiClient, deepCopy, isNotFound, type Kind, type KubeObject, kind } from '@kubeloop/client';
import {
  type Condition,
  findStatusCondition,
  isStatusConditionFalse,
  isStatusConditionTrue,
  removeStatusCondition,
  setStatusCondition,
} from '@kubeloop/client/conditions';
import { FrozenObjectError } from '@kubeloop/client/controllerutil';
import { describe, expect, it, vi } from 'vitest';
import { type LiveCluster, uniqueName, useLiveCluster } from './support.js';

const CustomResourceDefinition = kind('apiextensions.k8s.io/v1', 'CustomResourceDefinition');

interface Widget extends KubeObject {
  spec?: { size?: number };
  status?: { conditions?: Condition[] };
}

/** metav1.Condition's schema as controller-gen writes it, so the server validates what the helpers produce. */
const conditionSchema = {
  type: 'object',
  required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
  properties: {
    type: { type: 'string', maxLength: 316 },
    status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
    observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
    lastTransitionTime: { type: 'string', format: 'date-time' },
    reason: { type: 'string', minLength: 1, maxLength: 1024 },
    message: { type: 'string', maxLength: 32768 },
  },
};

/**
 * A Widget CRD of its own group (removed after the test) with a status subresource and a metav1.Condition
 * schema; resolves once the kind answers a list in `ns`.
 */
async function installWidgetCRD(live: LiveCluster, api: ApiClient, ns: string): Promise<Kind<Widget>> {
  const group = `${uniqueName('cond')}.example.com`;
  const crdName = `widgets.${group}`;
  await api.create(CustomResourceDefinition, {
    metadata: { name: crdName },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: { type: 'object', properties: { size: { type: 'integer' } } },
                status: {
                  type: 'object',
                  properties: {
                    conditions: {
                      type: 'array',
                      items: conditionSchema,
                      'x-kubernetes-list-type': 'map',
                      'x-kubernetes-list-map-keys': ['type'],
                    },
                  },
                },
              },
            },
          },
        },
      ],
    },
  } as KubeObject);
  live.cleanups.push(async () => {
    await api.delete(CustomResourceDefinition, { name: crdName }).catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
  });
  const Widget = kind<Widget>(`${group}/v1`, 'Widget');
  await vi.waitFor(() => api.list(Widget, { namespace: ns, limit: 1 }), { timeout: 20_000, interval: 100 });
  return Widget;
}

describe('status conditions through the real stack (apimachinery meta conditions)', () => {
  const live = useLiveCluster();

  it('setStatusCondition + status().update on a CRD with a status subresource and a metav1.Condition schema: read back as set, lastTransitionTime kept while the status stays and moved when it changes, observedGeneration follows, removeStatusCondition removes', async () => {
    const { api, ns } = await live.namespace('conditions');
    const Widget = await installWidgetCRD(live, api, ns);

    const key = { namespace: ns, name: 'w' };
    let w = await api.create(Widget, { metadata: key, spec: { size: 1 } });
    expect(w.metadata?.generation).toBe(1);

    // 1. a new condition: Ready=False with a fixed "now" (whole seconds), Progressing=True with a Date
    const t1 = new Date('2026-11-30T10:00:00.456Z');
    w.status ??= {};
    w.status.conditions ??= [];
    expect(
      setStatusCondition(
        w.status.conditions,
        { type: 'Ready', status: 'False', reason: 'Creating', message: 'not yet', observedGeneration: 1 },
        { now: () => t1 },
      ),
    ).toBe(true);
    setStatusCondition(w.status.conditions, {
      type: 'Progressing',
      status: 'True',
      reason: 'Scaling',
      lastTransitionTime: new Date('2026-11-30T09:00:00Z'),
    });
    w = await api.status().update(Widget, w);
    let read = await api.get(Widget, key);
    expect(read.status?.conditions).toEqual([
      {
        type: 'Ready',
        status: 'False',
        reason: 'Creating',
        message: 'not yet',
        observedGeneration: 1,
        lastTransitionTime: '2026-11-30T10:00:00Z',
      },
      {
        type: 'Progressing',
        status: 'True',
        reason: 'Scaling',
        message: '',
        lastTransitionTime: '2026-11-30T09:00:00Z',
      },
    ]);
    expect(isStatusConditionFalse(read.status?.conditions, 'Ready')).toBe(true);

    // 2. same status, new message: the stored lastTransitionTime is kept
    const conditions = structuredClone(read.status!.conditions!);
    expect(
      setStatusCondition(
        conditions,
        { type: 'Ready', status: 'False', reason: 'Creating', message: 'still not', observedGeneration: 1 },
        { now: () => new Date('2026-11-30T11:00:00Z') },
      ),
    ).toBe(true);
    read = await api.status().update(Widget, { ...read, status: { conditions } });
    expect(findStatusCondition(read.status?.conditions, 'Ready')).toMatchObject({
      message: 'still not',
      lastTransitionTime: '2026-11-30T10:00:00Z',
    });

    // 3. spec changes (generation 2); Ready turns True for generation 2: time moves, observedGeneration follows
    read = await api.update(Widget, { ...read, spec: { size: 2 } });
    expect(read.metadata?.generation).toBe(2);
    const next = structuredClone(read);
    setStatusCondition(
      next.status!.conditions!,
      { type: 'Ready', status: 'True', reason: 'Reconciled', message: 'size 2', observedGeneration: 2 },
      { now: () => new Date('2026-11-30T12:34:56.789Z') },
    );
    expect(removeStatusCondition(next.status!.conditions!, 'Progressing')).toBe(true);
    await api.status().update(Widget, next);
    read = await api.get(Widget, key);
    expect(read.status?.conditions).toEqual([
      {
        type: 'Ready',
        status: 'True',
        reason: 'Reconciled',
        message: 'size 2',
        observedGeneration: 2,
        lastTransitionTime: '2026-11-30T12:34:56Z',
      },
    ]);
    expect(isStatusConditionTrue(read.status?.conditions, 'Ready')).toBe(true);

    // 4. nothing to change: the helper says so, and no write is needed
    const again = structuredClone(read.status!.conditions!);
    expect(
      setStatusCondition(again, {
        type: 'Ready',
        status: 'True',
        reason: 'Reconciled',
        message: 'size 2',
        observedGeneration: 2,
      }),
    ).toBe(false);
    expect(again).toEqual(read.status?.conditions);
  });

  it('the conditions of an object read from an informer cache are frozen: setStatusCondition throws FrozenObjectError naming the fix, and on structuredClone of the object the update goes through', async () => {
    const { api, ns } = await live.namespace('conditions-cache');
    const Widget = await installWidgetCRD(live, api, ns);
    const key = { namespace: ns, name: 'w' };
    const created = await api.create(Widget, { metadata: key, spec: { size: 1 } });
    const conditions: Condition[] = [];
    setStatusCondition(conditions, { type: 'Ready', status: 'False', reason: 'Creating' });
    await api.status().update(Widget, { ...created, status: { conditions } });

    const cache = new InformerCache({ client: api, defaultNamespaces: [ns] });
    const ac = new AbortController();
    const running = cache.start(ac.signal);
    live.cleanups.push(async () => {
      ac.abort();
      await running;
    });
    expect(await cache.waitForCacheSync()).toBe(true);
    const cached = await vi.waitFor(async () => {
      const w = await cache.get(Widget, key);
      expect(w.status?.conditions).toHaveLength(1);
      return w;
    });
    expect(isStatusConditionFalse(cached.status?.conditions, 'Ready')).toBe(true);
    const ready = { type: 'Ready', status: 'True', reason: 'Reconciled' } as const;
    // a cached object is read-only in its type too: these are compile errors, and throw if forced
    // @ts-expect-error a cached conditions array is read-only
    expect(() => setStatusCondition(cached.status!.conditions!, ready)).toThrow(FrozenObjectError);
    // @ts-expect-error a cached conditions array is read-only
    expect(() => setStatusCondition(cached.status!.conditions!, ready)).toThrow(/structuredClone/);
    // @ts-expect-error a cached conditions array is read-only
    expect(() => removeStatusCondition(cached.status!.conditions!, 'Ready')).toThrow(FrozenObjectError);

    const copy = deepCopy(cached);
    expect(setStatusCondition(copy.status!.conditions!, ready)).toBe(true);
    await api.status().update(Widget, copy);
    await vi.waitFor(async () =>
      expect(isStatusConditionTrue((await cache.get(Widget, key)).status?.conditions, 'Ready')).toBe(true),
    );
  });
});

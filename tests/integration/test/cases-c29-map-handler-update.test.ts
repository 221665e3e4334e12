import {
  enqueueRequestsFromMapFunc,
  newControllerManagedBy,
  newManager,
  type Request,
} from '@kubeloop/builder';
import { type DeepReadonly, type KubeObject, kind, Namespace } from '@kubeloop/client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { installCRD } from './support/crds.js';
import { captureLogger, type LogRecord, liveClient, testConfig, uniqueName } from './support.js';

const Tenant = kind<KubeObject>('c29.example.com/v1', 'Tenant');

describe('C29 map handler on update', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()?.();
  });

  it('C29: a relabel reaches the Tenants found through the old object; an annotation edit reconciles each Tenant once; a rejecting map function is logged and counted, and later events still arrive', async () => {
    const api = liveClient();
    cleanups.push(() => api.close());
    await installCRD(api, { group: 'c29.example.com', kind: 'Tenant', plural: 'tenants', scope: 'Cluster' });
    const run = uniqueName('c29');
    const team = (t: string) => `${run}-${t}`;
    const tenantNames = { a: [`${run}-ta1`, `${run}-ta2`], f: [`${run}-tf`] };
    for (const [t, names] of Object.entries(tenantNames)) {
      for (const name of names) {
        await api.create(Tenant, { metadata: { name, labels: { team: team(t) } } });
        cleanups.push(() => api.delete(Tenant, { name }).catch(() => undefined));
      }
    }
    const n1 = `${run}-n1`;
    const fenceNs = `${run}-fence`;
    for (const [name, t] of [
      [n1, 'a'],
      [fenceNs, 'f'],
    ] as const) {
      await api.create(Namespace, { metadata: { name, labels: { team: team(t) } } });
      cleanups.push(() => api.delete(Namespace, { name }).catch(() => undefined));
    }

    const records: LogRecord[] = [];
    const mgr = newManager(testConfig(), { logger: captureLogger(records) });
    const cache = mgr.getCache();
    let rejectNext = false;
    const mapFn = async (ns: DeepReadonly<KubeObject>): Promise<Request[]> => {
      // Rejects once, for n1 while it is labelled team b (other tests' namespaces share the informer).
      if (rejectNext && ns.metadata?.name === n1 && ns.metadata?.labels?.team === team('b')) {
        rejectNext = false;
        throw new Error('tenant lookup failed');
      }
      const t = ns.metadata?.labels?.team;
      if (!t?.startsWith(run)) return [];
      const list = await cache.list(Tenant, { labelSelector: { team: t } });
      return list.items.map((x) => ({ namespace: '', name: x.metadata?.name as string }));
    };
    const reconciled: string[] = [];
    const ctrl = newControllerManagedBy(mgr)
      .named('c29')
      .for(Tenant, { predicates: [{ create: () => false, update: () => false }] })
      .watches(Namespace, enqueueRequestsFromMapFunc(mapFn), { predicates: [{ create: () => false }] })
      .complete({
        async reconcile(_ctx, req) {
          reconciled.push(req.name);
        },
      });
    const ac = new AbortController();
    const running = mgr.start(ac.signal);
    cleanups.push(async () => {
      ac.abort();
      await running;
    });
    await vi.waitFor(() => expect(records.some((r) => r.msg === 'Starting workers')).toBe(true), {
      timeout: 20_000,
    });

    /** Touches the fence namespace and waits for its Tenant: every earlier Namespace event was mapped. */
    let fences = 0;
    let touches = 0;
    const fence = async () => {
      fences++;
      touches++; // a new value each time: a patch that changes nothing sends no event
      await api.patch(
        Namespace,
        { name: fenceNs },
        { type: 'merge', data: { metadata: { annotations: { f: `${touches}` } } } },
      );
      await vi.waitFor(() => expect(reconciled.filter((n) => n === tenantNames.f[0])).toHaveLength(fences), {
        timeout: 20_000,
      });
    };
    const tenantsOfA = () => reconciled.filter((n) => tenantNames.a.includes(n)).sort();

    // Annotation while team=a: old and new map to the same Tenants, each reconciled once.
    await api.patch(
      Namespace,
      { name: n1 },
      { type: 'merge', data: { metadata: { annotations: { touched: '1' } } } },
    );
    await fence();
    expect(tenantsOfA()).toEqual([...tenantNames.a].sort());

    // Relabel a → b: the Tenants of team a are found through the old object.
    reconciled.length = 0;
    fences = 0;
    await api.patch(
      Namespace,
      { name: n1 },
      { type: 'merge', data: { metadata: { labels: { team: team('b') } } } },
    );
    await fence();
    expect(tenantsOfA()).toEqual([...tenantNames.a].sort());

    // The map function rejects once: one logged error, one counted, no unhandled rejection; later events arrive.
    reconciled.length = 0;
    fences = 0;
    rejectNext = true;
    await api.patch(
      Namespace,
      { name: n1 },
      { type: 'merge', data: { metadata: { labels: { team: team('a') } } } },
    );
    await fence();
    expect(ctrl.handlerErrors).toBe(1);
    const errs = records.filter((r) => r.level === 'error' && r.msg.startsWith('event handler failed'));
    expect(errs).toHaveLength(1);
    expect(String(errs[0]?.err)).toContain('tenant lookup failed');
    // The rejection lost only the old object's mapping (team b: no Tenants); the new one (team a) arrived.
    expect(tenantsOfA()).toEqual([...tenantNames.a].sort());
  });
});

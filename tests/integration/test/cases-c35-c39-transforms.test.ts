import {
  DeletedFinalStateUnknown,
  isDeletedFinalStateUnknown,
  listWatchFor,
  SharedIndexInformer,
  type SharedIndexInformerOptions,
  stripManagedFields,
} from '@kubeloop/cache';
import { type Cached, ConfigMap, type KubeObject, Namespace, newClient } from '@kubeloop/client';
import { describe, expect, it, vi } from 'vitest';
import { realCluster, useFaultServer } from './support/fault-server.js';
import { captureLogger, type LogRecord, uniqueName } from './support.js';

// The transform cases force a relist (a list/watch outage), so they use envtest's fault injection.
describe.skipIf(realCluster)('informer transforms (C35, C39)', () => {
  const ctx = useFaultServer('kubeloop-transform-test');

  async function namespaceWith(prefix: string, n: number): Promise<string> {
    const ns = uniqueName(prefix);
    await ctx.api.create(Namespace, { metadata: { name: ns } });
    for (let i = 0; i < n; i += 25)
      await Promise.all(
        Array.from({ length: Math.min(25, n - i) }, (_, j) =>
          ctx.api.create(ConfigMap, {
            metadata: {
              namespace: ns,
              name: `cm-${i + j}`,
              managedFields: [{ manager: 'test', operation: 'Update', apiVersion: 'v1' }],
            },
            data: { v: '0' },
          } as KubeObject),
        ),
      );
    return ns;
  }

  async function start(ns: string, transform: NonNullable<SharedIndexInformerOptions['transform']>) {
    const client = newClient(ctx.config);
    const records: LogRecord[] = [];
    const inf = new SharedIndexInformer(listWatchFor(client, ConfigMap, { namespace: ns }), {
      name: `configmaps/${ns}`,
      logger: captureLogger(records),
      transform,
      reflector: { backoff: { initialMs: 100, maxMs: 500 } },
    });
    const log: string[] = [];
    const tombstones: DeletedFinalStateUnknown<Cached<KubeObject>>[] = [];
    inf.addEventHandler({
      onAdd: (o) => log.push(`add ${o.metadata?.name}`),
      onUpdate: (_a, b) => log.push(`update ${b.metadata?.name}`),
      onDelete: (o) => {
        if (o instanceof DeletedFinalStateUnknown) tombstones.push(o);
        else log.push(`delete ${o.metadata?.name}`);
      },
    });
    const ac = new AbortController();
    const running = inf.run(ac.signal);
    ctx.cleanups.push(async () => {
      ac.abort();
      await running;
      await client.close();
    });
    await vi.waitFor(() => expect(inf.hasSynced()).toBe(true), { timeout: 20_000 });
    return { inf, log, tombstones, records };
  }

  const modify = (ns: string, name: string, v: string) =>
    ctx.api.patch(ConfigMap, { namespace: ns, name }, { type: 'merge', data: { data: { v } } });

  it('C35: the transform runs once per object version and never for a tombstone; tombstones carry the transformed last state', async () => {
    const ns = await namespaceWith('c35', 100);
    const calls: KubeObject[] = [];
    const { inf, tombstones } = await start(ns, (o) => {
      calls.push(o);
      return stripManagedFields(o);
    });
    expect(calls).toHaveLength(100);
    for (let i = 0; i < 50; i += 10)
      await Promise.all(Array.from({ length: 10 }, (_, j) => modify(ns, `cm-${i + j}`, '1')));
    await vi.waitFor(() => expect(calls).toHaveLength(150), { timeout: 20_000 });
    // An outage: lists and watches fail and the open watch is dropped; 10 objects are deleted meanwhile.
    const outage = ctx.server.faults.failRequests({
      match: { verb: ['list', 'watch'], namespace: ns },
      status: 503,
    });
    await ctx.server.faults.restart({ keepState: true });
    // A fresh client: the restart closed the test client's connection too.
    const writer = newClient(ctx.config);
    try {
      await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          writer.delete(ConfigMap, { namespace: ns, name: `cm-${90 + i}` }),
        ),
      );
    } finally {
      await writer.close();
    }
    // The deletions leave the watch history (etcd compaction): the informer must relist to see them, and a
    // relist can only report them as tombstones (it never saw the final state).
    await ctx.server.faults.compact();
    outage.clear();
    await vi.waitFor(() => expect(tombstones).toHaveLength(10), { timeout: 20_000 });
    expect(inf.getIndexer().size()).toBe(90);
    // The relist found every remaining object at its cached version: nothing was transformed again.
    expect(calls).toHaveLength(150);
    expect(calls.some((c) => isDeletedFinalStateUnknown(c))).toBe(false);
    for (const t of tombstones) {
      expect(t.obj.metadata?.managedFields).toBeUndefined();
      expect(Object.isFrozen(t.obj)).toBe(true);
    }
    for (const o of inf.getIndexer().list()) expect(o.metadata?.managedFields).toBeUndefined();
  });

  it('C39: a transform that throws for one object never wedges the informer: it syncs, keeps watching, delivers every later change, and reports each arrival of the bad object', async () => {
    const ns = await namespaceWith('c39', 100);
    const { inf, log, records } = await start(ns, (o) => {
      if (o.metadata?.name === 'cm-13') throw new Error('transform cannot handle cm-13');
      return o;
    });
    expect(inf.getIndexer().size()).toBe(99);
    await modify(ns, 'cm-13', '1');
    await modify(ns, 'cm-13', '2');
    for (const n of ['cm-1', 'cm-2', 'cm-3']) await modify(ns, n, '1');
    await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: 'late' } });
    await vi.waitFor(() => expect(log).toContain('add late'), { timeout: 20_000 });
    expect(log.filter((l) => l.startsWith('update'))).toEqual(['update cm-1', 'update cm-2', 'update cm-3']);
    // Reported once per arrival (list, then two MODIFIED), with the key and the error, and counted.
    const failures = records.filter((r) => r.level === 'error' && r.key === `${ns}/cm-13`);
    expect(failures).toHaveLength(3);
    expect(failures[0]?.err).toBeInstanceOf(Error);
    expect(inf.status().transformErrors).toBe(3);
    // Neither stored untransformed nor retried by relisting.
    expect(inf.getIndexer().get(`${ns}/cm-13`)).toBeUndefined();
    const lists = ctx.server.faults
      .requests({ verb: 'list', resource: 'configmaps', namespace: ns })
      .filter((r) => r.query.includes('resourceVersion'));
    expect(lists).toHaveLength(1);
    expect(ctx.server.faults.requests({ verb: 'watch', resource: 'configmaps', namespace: ns })).toHaveLength(
      1,
    );
  });
});

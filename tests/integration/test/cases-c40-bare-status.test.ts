import { listWatchFor, objectOfDelete, SharedIndexInformer } from '@kubeloop/cache';
import { newClient, Pod } from '@kubeloop/client';
import type { V1Pod } from '@kubeloop/client/models';
import { describe, expect, it } from 'vitest';
import { realCluster, useFaultServer } from './support/fault-server.js';
import { captureLogger, type LogRecord, podManifest, waitFor } from './support.js';

// C40 (cases README): a bare Status line inside a watch stream — not an ERROR event — is read as the typed error
// it carries (the client's WatchStatusError, a StatusError with details.retryAfterSeconds), and the reflector
// re-watches from the last resourceVersion no earlier than Retry-After (the larger of backoff and Retry-After),
// without a relist, a false delete or a replayed event. Fault injection: skipped on a real cluster.
describe.skipIf(realCluster)('C40 bare Status in a watch stream (envtest fault injection)', () => {
  const ctx = useFaultServer('kubeloop-c40');

  it('C40: a bare 429 Status with retryAfterSeconds 2 after one good event: typed 429, re-watch from the last RV ≥ 2 s later, cache unchanged, no delete', async () => {
    const ns = await ctx.namespace('c40');
    await ctx.api.create(Pod, podManifest(ns, 'a'));
    const records: LogRecord[] = [];
    const client = newClient(ctx.config);
    // a tiny backoff, so the wait can only come from Retry-After
    const inf = new SharedIndexInformer<V1Pod>(listWatchFor(client, Pod, { namespace: ns }), {
      name: `pods/${ns}`,
      logger: captureLogger(records),
      reflector: { backoff: { initialMs: 10, maxMs: 50, jitter: 0 } },
    });
    const log: string[] = [];
    inf.addEventHandler({
      onAdd: (p) => log.push(`add ${p.metadata?.name}`),
      onUpdate: (_a, b) => log.push(`update ${b.metadata?.name} ${b.metadata?.labels?.x ?? ''}`),
      onDelete: (p) => log.push(`delete ${objectOfDelete(p).metadata?.name}`),
    });
    const ac = new AbortController();
    const running = inf.run(ac.signal);
    ctx.cleanups.push(async () => {
      ac.abort();
      await running;
      await client.close();
    });
    await waitFor(() => inf.hasSynced(), 'sync');

    const status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'too many requests, please retry',
      reason: 'TooManyRequests',
      code: 429,
      details: { retryAfterSeconds: 2 },
    };
    const shaped = ctx.server.faults.shapeWatch({
      match: { verb: 'watch', namespace: ns },
      times: 1,
      steps: [{ op: 'pass' }, { op: 'raw', data: `${JSON.stringify(status)}\n`, after: 'end' }],
    });
    // Drop the running watch so the next one is the shaped stream.
    await ctx.server.faults.restart({ keepState: true });
    await waitFor(() => shaped.hits === 1, 'the shaped watch');
    const updated = await ctx.api.patch(
      Pod,
      { namespace: ns, name: 'a' },
      { type: 'merge', data: { metadata: { labels: { x: '1' } } } },
    );
    await waitFor(() => log.includes('update a 1'), 'the good event');
    const tGood = Date.now();
    // the next watch, after the bare Status
    await waitFor(
      () =>
        ctx.server.faults
          .requests({ verb: 'watch', namespace: ns, since: tGood })
          .some((r) => r.faultId !== shaped.id),
      'the re-watch',
      15_000,
    );
    const rewatch = ctx.server.faults
      .requests({ verb: 'watch', namespace: ns, since: tGood })
      .find((r) => r.faultId !== shaped.id)!;
    // ≥ 2 s after the Status (which came right after the good event; 100 ms of slack for clocks)
    expect(rewatch.time - tGood).toBeGreaterThanOrEqual(1900);
    expect(new URLSearchParams(rewatch.query).get('resourceVersion')).toBe(updated.metadata?.resourceVersion);
    // no relist in between
    expect(ctx.server.faults.requests({ verb: 'list', namespace: ns, since: tGood })).toHaveLength(0);
    // read as a typed 429, logged as the watch error
    const warned = records.filter((r) => r.level === 'warn' && r.code === 429);
    expect(warned.length).toBeGreaterThan(0);
    expect(warned[0]?.reason).toBe('TooManyRequests');
    expect((warned[0]?.err as Error | undefined)?.name).toBe('WatchStatusError');
    expect(records.some((r) => /decode|not JSON/i.test(String(r.err)))).toBe(false);
    // cache unchanged, no delete, no replay
    expect(
      inf
        .getIndexer()
        .list()
        .map((p) => p.metadata?.labels?.x),
    ).toEqual(['1']);
    expect(log).toEqual(['add a', 'update a 1']);
  });
});

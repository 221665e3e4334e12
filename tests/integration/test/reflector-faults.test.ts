import {
  DeletedFinalStateUnknown,
  listWatchFor,
  objectOfDelete,
  SharedIndexInformer,
  type SharedIndexInformerOptions,
} from '@kubeloop/cache';
import { type Cached, Namespace, type NewClientOptions, newClient, Pod } from '@kubeloop/client';
import type { V1Pod } from '@kubeloop/client/models';
import { FakeClock } from '@kubeloop/core/testing';
import { describe, expect, it } from 'vitest';
import { runClockUntil } from './support/fake-time.js';
import { realCluster, useFaultServer } from './support/fault-server.js';
import { podManifest, uniqueName, waitFor } from './support.js';

// These cases break the wire on purpose, so they need envtest's fault injection: each file starts its own
// in-process server (they are skipped against a real cluster).
describe.skipIf(realCluster)('reflector and informer under faults (envtest fault injection)', () => {
  const ctx = useFaultServer('kubeloop-faults-test');

  async function namespaceWithPods(prefix: string, names: string[], labels: Record<string, string> = {}) {
    const ns = uniqueName(prefix);
    await ctx.api.create(Namespace, { metadata: { name: ns } });
    for (let i = 0; i < names.length; i += 25) {
      await Promise.all(names.slice(i, i + 25).map((n) => ctx.api.create(Pod, podManifest(ns, n, labels))));
    }
    return ns;
  }

  /** A running informer on pods of `ns`, recording every notification. */
  async function informer(
    ns: string,
    options: Pick<SharedIndexInformerOptions<V1Pod>, 'clock' | 'reflector'> = {},
    clientOptions: NewClientOptions = {},
  ) {
    const client = newClient(ctx.config, clientOptions);
    const warnings: string[] = [];
    const record = (f: Record<string, unknown>, m: string) => warnings.push(`${m} ${JSON.stringify(f)}`);
    const logger = { debug: () => {}, info: record, warn: record, error: record, child: () => logger };
    const inf = new SharedIndexInformer<V1Pod>(listWatchFor(client, Pod, { namespace: ns }), {
      name: `pods/${ns}`,
      logger,
      ...options,
    });
    const log: string[] = [];
    const deletes: Array<Cached<V1Pod> | DeletedFinalStateUnknown<Cached<V1Pod>>> = [];
    inf.addEventHandler({
      onAdd: (p) => log.push(`add ${p.metadata?.name}`),
      onUpdate: (_a, b) => log.push(`update ${b.metadata?.name}`),
      onDelete: (p) => {
        deletes.push(p);
        log.push(`delete ${objectOfDelete(p).metadata?.name}`);
      },
    });
    const ac = new AbortController();
    const running = inf.run(ac.signal);
    ctx.cleanups.push(async () => {
      ac.abort();
      await running;
      await client.close();
    });
    await waitFor(() => inf.hasSynced(), 'informer sync');
    return { inf, log, deletes, warnings };
  }

  /**
   * The informer's lists and watches at the server. The test's own checking lists carry no query; the
   * reflector's carry a resourceVersion, a limit or a continue token (a relist at a specific resourceVersion
   * has no limit, C38).
   */
  const requestsFor = (ns: string, verb: 'list' | 'watch') =>
    ctx.server.faults.requests({ verb, resource: 'pods', namespace: ns }).filter((r) => {
      if (verb === 'watch') return true;
      const q = new URLSearchParams(r.query);
      return q.has('limit') || q.has('resourceVersion') || q.has('continue');
    });

  async function serverRVs(ns: string): Promise<string[]> {
    return (await ctx.api.list(Pod, { namespace: ns })).items
      .map((p) => `${p.metadata?.name}@${p.metadata?.resourceVersion}`)
      .sort();
  }
  const cacheRVs = (inf: SharedIndexInformer<V1Pod>) =>
    inf
      .getIndexer()
      .list()
      .map((p) => `${p.metadata?.name}@${p.metadata?.resourceVersion}`)
      .sort();

  /** Patches pod `a` until `done()`; returns how many patches were made. */
  async function churnUntil(ns: string, done: () => boolean, what: () => string): Promise<number> {
    let n = 0;
    await waitFor(
      async () => {
        await ctx.api.patch(
          Pod,
          { namespace: ns, name: 'a' },
          { type: 'merge', data: { metadata: { labels: { n: String(++n) } } } },
        );
        return done();
      },
      what,
      30_000,
    );
    return n;
  }

  async function expectResumedWithoutRelist(
    ns: string,
    inf: SharedIndexInformer<V1Pod>,
    log: string[],
    n: number,
    minWatches: number,
  ) {
    await waitFor(() => requestsFor(ns, 'watch').length >= minWatches, 'the watch after the last shaped one');
    await ctx.api.create(Pod, podManifest(ns, 'c'));
    await waitFor(async () => cacheRVs(inf).join() === (await serverRVs(ns)).join(), 'cache equals server');
    expect(requestsFor(ns, 'list')).toHaveLength(1);
    const watches = requestsFor(ns, 'watch');
    expect(watches.length).toBeGreaterThanOrEqual(minWatches);
    // Each re-watch starts where the previous stream left off, never from 0 or "".
    for (const w of watches)
      expect(new URLSearchParams(w.query).get('resourceVersion')).toMatch(/^[1-9]\d*$/);
    expect(log.filter((l) => l.startsWith('add')).sort()).toEqual(['add a', 'add b', 'add c']);
    expect(log.filter((l) => l === 'update a')).toHaveLength(n);
    expect(log.filter((l) => l.startsWith('update b'))).toEqual([]);
  }

  it('C01: watches that end cleanly are resumed from the last resourceVersion, with no relist and no replays', async () => {
    const ns = await namespaceWithPods('c01', ['a', 'b']);
    // Every watch ends cleanly after its first event, 6 times (no waiting on wall-clock time).
    const rule = ctx.server.faults.endWatches({
      match: { verb: 'watch', namespace: ns },
      afterEvents: 1,
      times: 6,
    });
    const { inf, log } = await informer(ns);
    const n = await churnUntil(
      ns,
      () => rule.hits >= 6 && !rule.active,
      () => `6 watch ends (hits ${rule.hits})`,
    );
    // The 6th shaped watch ends too; the 7th is a plain one.
    await expectResumedWithoutRelist(ns, inf, log, n, 7);
  });

  it('C01 (real-time canary): watches that end cleanly after 1.2 s without events are resumed, not counted as very short', async () => {
    const ns = await namespaceWithPods('c01rt', ['a', 'b']);
    // Longer than client-go's 1 s "very short watch", twice.
    const rule = ctx.server.faults.endWatches({
      match: { verb: 'watch', namespace: ns },
      afterMs: 1200,
      times: 2,
    });
    const { inf, log } = await informer(ns);
    await waitFor(
      () => rule.hits >= 2 && !rule.active,
      () => `2 watch ends (hits ${rule.hits})`,
    );
    await expectResumedWithoutRelist(ns, inf, log, 0, 3);
  });

  it('C03: a 410 ERROR event on the watch causes one relist, then a watch from the new list resourceVersion, no tight loop', async () => {
    const ns = await namespaceWithPods('c03', ['a']);
    const { inf, warnings } = await informer(ns);
    const before = requestsFor(ns, 'list').length;
    const rule = ctx.server.faults.expire({ match: { verb: 'watch', namespace: ns }, times: 1 });
    // A new rule does not touch the open watch: drop the connections so the next watch meets the rule.
    await ctx.server.restart({ keepState: true });
    await ctx.api.create(Pod, podManifest(ns, 'b'));
    await waitFor(
      () => rule.hits === 1,
      () => `the expired watch; informer said: ${warnings.join(' | ')}`,
    );
    const expired = requestsFor(ns, 'watch').find((w) => w.faultId === rule.id)!;
    await waitFor(() => requestsFor(ns, 'list').some((l) => l.id > expired.id), 'the relist after the 410');
    await waitFor(async () => cacheRVs(inf).join() === (await serverRVs(ns)).join(), 'cache equals server');
    // Exactly one relist answers the 410 (requests are numbered in arrival order), and a watch follows it.
    const relists = requestsFor(ns, 'list').filter((l) => l.id > expired.id);
    expect(relists).toHaveLength(1);
    expect(requestsFor(ns, 'watch').filter((w) => w.id > relists[0]!.id).length).toBeGreaterThanOrEqual(1);
    // Before the 410 there is no other relist, save one the restart may cause: it ends the open watch, and
    // when the end of the stream reaches the client before the socket is destroyed (timing; seen in loaded
    // runs) that watch closed cleanly within 1 s without events, a very short watch, which client-go's
    // reflector relists on too. It must then be logged as such.
    const earlier = requestsFor(ns, 'list').filter((l) => l.id < expired.id).length - before;
    expect(earlier).toBeLessThanOrEqual(1);
    if (earlier === 1) expect(warnings.join('\n')).toMatch(/VeryShortWatchError|very short|closed at once/i);
    expect(requestsFor(ns, 'watch').length).toBeLessThan(10);
  });

  it('C05: deletes during a watch gap reach handlers as typed tombstones, exactly once each', async () => {
    const names = Array.from({ length: 1000 }, (_, i) => `p${i}`);
    const ns = await namespaceWithPods('c05', names);
    // The informer backs off on an injected clock: during the outage it waits without requests however long
    // the 400 deletes take under load (on the real clock its backoff grew to 12-25 s and the recovery outlasted
    // the test), and the test moves the clock from wait to wait once the outage is over.
    const clock = new FakeClock();
    const { inf, deletes } = await informer(ns, { clock });
    expect(inf.getIndexer().size()).toBe(1000);
    // Cut the informer off: lists and watches fail, and the open watch is dropped.
    const outage = ctx.server.faults.failRequests({
      match: { verb: ['list', 'watch'], namespace: ns },
      status: 503,
    });
    await ctx.server.restart({ keepState: true });
    const gone = names.filter((_, i) => i % 5 < 2); // 400
    for (let i = 0; i < gone.length; i += 25) {
      await Promise.all(
        gone
          .slice(i, i + 25)
          .map((n) => ctx.api.delete(Pod, { namespace: ns, name: n }, { gracePeriodSeconds: 0 })),
      );
    }
    ctx.server.faults.compact();
    outage.clear();
    await runClockUntil(
      clock,
      () => inf.getIndexer().size() === 600,
      () => `store size 600 (is ${inf.getIndexer().size()})`,
    );
    await waitFor(async () => cacheRVs(inf).join() === (await serverRVs(ns)).join(), 'cache equals server');
    expect(deletes).toHaveLength(400);
    expect(deletes.every((d) => d instanceof DeletedFinalStateUnknown)).toBe(true);
    const tomb = deletes[0] as DeletedFinalStateUnknown<Cached<V1Pod>>;
    expect(tomb.key).toBe(`${ns}/${tomb.obj.metadata?.name}`);
    expect(new Set(deletes.map((d) => objectOfDelete(d).metadata?.name))).toEqual(new Set(gone));
  }, 120_000); // 1,000 pods made and 400 deleted: a deadline for a loaded machine, not a timing claim

  it('C07: after a failed watch the informer recovers by itself with no replayed callbacks; one real change gives one update', async () => {
    const ns = await namespaceWithPods('c07', ['a', 'b', 'c']);
    const { inf, log } = await informer(ns);
    const fail = ctx.server.faults.failRequests({
      match: { verb: 'watch', namespace: ns },
      status: 500,
      times: 1,
    });
    await ctx.server.restart({ keepState: true });
    await ctx.api.patch(
      Pod,
      { namespace: ns, name: 'b' },
      { type: 'merge', data: { metadata: { labels: { changed: 'yes' } } } },
    );
    await waitFor(() => fail.hits === 1, 'the failed watch');
    await waitFor(async () => cacheRVs(inf).join() === (await serverRVs(ns)).join(), 'recovery');
    expect(log).toEqual(['add a', 'add b', 'add c', 'update b']);
  });

  it('C10: frames split inside a UTF-8 character, merged, and unterminated arrive exactly once, in order', async () => {
    const ns = await namespaceWithPods('c10', []);
    const { inf, log } = await informer(ns);
    const rule = ctx.server.faults.shapeWatch({
      match: { verb: 'watch', namespace: ns },
      times: 1,
      steps: [
        { op: 'split', parts: 3, delayMs: 50, insideUtf8: true },
        { op: 'merge', count: 3 },
        { op: 'noNewline' },
      ],
    });
    // Drop the open watch so the next one is shaped.
    await ctx.server.restart({ keepState: true });
    await waitFor(() => rule.hits === 1, 'the shaped watch to start', 10_000);
    await ctx.api.create(Pod, {
      ...podManifest(ns, 'e1'),
      metadata: { namespace: ns, name: 'e1', annotations: { team: 'zürich-€-🚀' } },
    });
    for (const n of ['e2', 'e3', 'e4']) await ctx.api.create(Pod, podManifest(ns, n));
    const e5 = await ctx.api.create(Pod, podManifest(ns, 'e5'));
    await waitFor(
      () => inf.getIndexer().size() === 5,
      () => `5 pods (${log.join(' ')})`,
    );
    expect(log).toEqual(['add e1', 'add e2', 'add e3', 'add e4', 'add e5']);
    expect(inf.getIndexer().get(`${ns}/e1`)?.metadata?.annotations?.team).toBe('zürich-€-🚀');
    await waitFor(() => inf.lastSyncResourceVersion === e5.metadata?.resourceVersion, 'RV of E5');
  });

  it('C09: a half-written event or an HTML line breaks the stream; the informer resumes from the last good resourceVersion with no partial object', async () => {
    const ns = await namespaceWithPods('c09', []);
    const { inf, log } = await informer(ns);
    const half = ctx.server.faults.shapeWatch({
      match: { verb: 'watch', namespace: ns },
      times: 1,
      steps: [
        { op: 'pass', count: 1 },
        { op: 'truncate', after: 'end' },
      ],
    });
    await ctx.server.restart({ keepState: true });
    await waitFor(() => half.hits === 1, 'the truncating watch');
    await ctx.api.create(Pod, podManifest(ns, 'g1'));
    await ctx.api.create(Pod, podManifest(ns, 'g2'));
    await waitFor(
      async () => cacheRVs(inf).join() === (await serverRVs(ns)).join(),
      () => `recovery (${log.join(' ')})`,
    );
    const html = ctx.server.faults.shapeWatch({
      match: { verb: 'watch', namespace: ns },
      times: 1,
      steps: [{ op: 'raw', data: '<html><body>502 Bad Gateway</body></html>\n', after: 'continue' }],
    });
    await ctx.server.restart({ keepState: true });
    await waitFor(() => html.hits === 1, 'the HTML watch');
    await ctx.api.create(Pod, podManifest(ns, 'g3'));
    await waitFor(
      async () => cacheRVs(inf).join() === (await serverRVs(ns)).join(),
      () => `recovery (${log.join(' ')})`,
    );
    expect(log).toEqual(['add g1', 'add g2', 'add g3']);
    for (const p of inf.getIndexer().list()) expect(p.spec?.containers?.[0]?.name).toBe('app');
  });

  it('a watch line longer than maxWatchEventBytes ends the watch with a typed error; the informer recovers with no partial object', async () => {
    const ns = await namespaceWithPods('toolarge', ['a']);
    const limit = 64 * 1024;
    const { inf, log, warnings } = await informer(ns, {}, { maxWatchEventBytes: limit });
    const line = `{"type":"ADDED","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"big","namespace":"${ns}","resourceVersion":"1"},"spec":{"containers":[{"name":"${'x'.repeat(2 * limit)}"}]}}}\n`;
    const big = ctx.server.faults.shapeWatch({
      match: { verb: 'watch', namespace: ns },
      times: 1,
      steps: [{ op: 'raw', data: line, after: 'continue' }],
    });
    await ctx.server.restart({ keepState: true });
    await waitFor(() => big.hits === 1, 'the watch with the long line');
    await ctx.api.create(Pod, podManifest(ns, 'b'));
    await waitFor(
      async () => cacheRVs(inf).join() === (await serverRVs(ns)).join(),
      () => `recovery (${log.join(' ')}; ${warnings.join(' | ')})`,
    );
    expect(warnings.join('\n')).toMatch(/WatchEventTooLargeError/);
    expect(log).toEqual(['add a', 'add b']);
    expect(
      inf
        .getIndexer()
        .list()
        .map((p) => p.metadata?.name)
        .sort(),
    ).toEqual(['a', 'b']);
  });

  it('C02: a watch that fails at once 50 times backs off exponentially (800 ms x2 on an injected clock, a relist per failure) and recovers', async () => {
    const ns = await namespaceWithPods('c02', ['a']);
    const clock = new FakeClock();
    const { inf } = await informer(ns, { clock, reflector: { backoff: { random: () => 0 } } });
    const storm = ctx.server.faults.failRequests({
      match: { verb: 'watch', namespace: ns },
      status: 500,
      times: 50,
    });
    const t0 = Date.now();
    await ctx.server.restart({ keepState: true });
    await ctx.api.create(Pod, podManifest(ns, 'b'));
    // Drive the informer's clock from one backoff wait to the next for 10 s of (fake) outage.
    const waits: number[] = [];
    for (;;) {
      await waitFor(() => clock.pendingTimers() > 0, 'the reflector waiting out its backoff');
      const at = clock.nextTimerAt()!;
      if (at > 10_000) break;
      waits.push(at - clock.now());
      clock.setTime(at);
    }
    // 800 ms doubling (jitter drawn as 0): three waits fit in 10 s; each failure is one watch, then a relist.
    expect(waits).toEqual([800, 1600, 3200]);
    const inWindow = requestsFor(ns, 'watch').filter((r) => r.time >= t0);
    expect(inWindow.length).toBeLessThanOrEqual(5);
    storm.clear();
    await waitFor(async () => {
      if (clock.pendingTimers() > 0) clock.setTime(clock.nextTimerAt()!);
      return cacheRVs(inf).join() === (await serverRVs(ns)).join();
    }, 'recovery after the storm');
  });

  it('C02 (real-time canary): two failing watches back off on the real clock and the informer recovers', async () => {
    const ns = await namespaceWithPods('c02rt', ['a']);
    const { inf } = await informer(ns);
    const storm = ctx.server.faults.failRequests({
      match: { verb: 'watch', namespace: ns },
      status: 500,
      times: 2,
    });
    await ctx.server.restart({ keepState: true });
    await ctx.api.create(Pod, podManifest(ns, 'b'));
    await waitFor(() => storm.hits >= 2, 'two failed watches', 30_000);
    await waitFor(async () => cacheRVs(inf).join() === (await serverRVs(ns)).join(), 'recovery', 30_000);
  }, 60_000);

  it('C19: list and watch carry the same, correctly encoded field and label selectors on the namespaced path', async () => {
    const ns = await namespaceWithPods('c19', []);
    await ctx.api.create(Pod, podManifest(ns, 's1', { env: 'a', tier: 'db' }));
    await ctx.api.create(Pod, podManifest(ns, 's2', { env: 'a', tier: 'db' }));
    await ctx.api.create(Pod, podManifest(ns, 's1x', { env: 'a', tier: 'db', legacy: 'true' }));
    const labelSelector = 'env in (a,b),tier!=web,!legacy';
    const fieldSelector = 'metadata.name=s1';
    ctx.server.faults.requireSelector({ match: { namespace: ns }, labelSelector, fieldSelector });
    const client = newClient(ctx.config);
    const inf = new SharedIndexInformer<V1Pod>(
      listWatchFor(client, Pod, { namespace: ns, labelSelector, fieldSelector }),
    );
    const ac = new AbortController();
    const running = inf.run(ac.signal);
    ctx.cleanups.push(async () => {
      ac.abort();
      await running;
      await client.close();
    });
    await waitFor(() => inf.hasSynced(), 'sync through the selector gate');
    await waitFor(() => requestsFor(ns, 'watch').length >= 1, 'the watch');
    expect(inf.getIndexer().listKeys()).toEqual([`${ns}/s1`]);
    const sent = [...requestsFor(ns, 'list'), ...requestsFor(ns, 'watch')];
    for (const r of sent) {
      expect(r.path).toBe(`/api/v1/namespaces/${ns}/pods`);
      const q = new URLSearchParams(r.query);
      expect(q.get('labelSelector')).toBe(labelSelector);
      expect(q.get('fieldSelector')).toBe(fieldSelector);
      expect(r.status).toBe(200);
    }
  });
});

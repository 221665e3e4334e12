import { getEventListeners } from 'node:events';
import { ConfigMap, type KubeObject } from '@kubeloop/client';
import { discardLogger } from '@kubeloop/core';
import { FakeClock } from '@kubeloop/core/testing';
import { describe, expect, it, vi } from 'vitest';
import { InformerError, listWatchFor, SharedIndexInformer } from '../src/index.js';
import { StoreError } from '../src/indexes.js';
import { MultiNamespaceInformer } from '../src/internal/multi-namespace-informer.js';
import { FakeClient } from './support/fake-client.js';

describe('MultiNamespaceInformer addIndexers', () => {
  it('refuses a duplicate index name before run with StoreError, as the single-namespace informer does', () => {
    const inf = new MultiNamespaceInformer<KubeObject>(
      ['a', 'b'],
      () => {
        throw new Error('not started in this test');
      },
      async () => true,
      discardLogger,
    );
    inf.addIndexers({ byX: () => [] });
    expect(() => inf.addIndexers({ byX: () => [] })).toThrow(StoreError);
    expect(() => inf.addIndexers({ byY: () => [] })).not.toThrow();
  });
});

function seeded(fcl: FakeClient) {
  const s = fcl.server('ConfigMap');
  s.create('x', { app: 'web' }, 'a');
  s.create('y', { app: 'db' }, 'a');
  s.create('x', { app: 'web' }, 'b');
  return s;
}

const byApp = (o: KubeObject) => [String((o as { data?: { app?: string } }).data?.app ?? '')];

function multi(
  fcl: FakeClient,
  isNamespaced: () => Promise<boolean> = async () => true,
  clock = new FakeClock(),
) {
  return new MultiNamespaceInformer<KubeObject>(
    ['a', 'b', 'a'],
    (ns) =>
      new SharedIndexInformer(listWatchFor(fcl.asClient(), ConfigMap, ns ? { namespace: ns } : {}), {
        clock,
      }),
    isNamespaced,
    discardLogger,
    clock,
  );
}

describe('MultiNamespaceInformer: one informer per namespace read as one', () => {
  it('merges reads across namespaces: get, list, keys, size, index values (each value once), index names', async () => {
    const fcl = new FakeClient();
    seeded(fcl);
    const inf = multi(fcl);
    inf.addIndexers({ app: byApp });
    // Before it runs it reads as empty and names no index.
    expect(inf.getIndexer().size()).toBe(0);
    expect(inf.getIndexer().indexerNames()).toEqual([]);
    const ac = new AbortController();
    const run = inf.run(ac.signal);
    expect(await inf.waitForSync()).toBe(true);
    const r = inf.getIndexer();
    expect(r.size()).toBe(3);
    expect(r.listKeys().sort()).toEqual(['a/x', 'a/y', 'b/x']);
    expect(r.get('b/x')?.metadata?.namespace).toBe('b');
    expect(r.get('c/x')).toBeUndefined();
    expect(r.listIndexFuncValues('app').sort()).toEqual(['db', 'web']);
    expect(r.indexKeys('app', 'web').sort()).toEqual(['a/x', 'b/x']);
    expect(r.byIndex('app', 'db').map((o) => o.metadata?.name)).toEqual(['y']);
    expect(r.indexerNames()).toContain('app');
    // Each namespace has its own resourceVersion: the merged one is empty (controller-runtime does the same).
    expect(inf.lastSyncResourceVersion).toBe('');
    expect(inf.status()).toMatchObject({ synced: true, started: true, stopped: false, unserved: false });
    ac.abort();
    await run;
    expect(inf.isStopped()).toBe(true);
  });

  it('a cluster-scoped kind gets one cluster-wide informer whose resourceVersion is the informer’s own', async () => {
    const fcl = new FakeClient();
    seeded(fcl);
    const inf = multi(fcl, async () => false);
    const ac = new AbortController();
    const run = inf.run(ac.signal);
    expect(await inf.waitForSync()).toBe(true);
    expect(fcl.calls.every((c) => c.namespace === undefined)).toBe(true);
    expect(inf.lastSyncResourceVersion).not.toBe('');
    ac.abort();
    await run;
  });

  it('retries a scope lookup that fails (backing off on its clock), then runs; handlers added before and after, and removed, see exactly their events', async () => {
    const fcl = new FakeClient();
    const s = seeded(fcl);
    let lookups = 0;
    const clock = new FakeClock();
    const inf = multi(
      fcl,
      async () => {
        if (++lookups < 3) throw new Error('discovery unavailable');
        return true;
      },
      clock,
    );
    const early: string[] = [];
    const removed: string[] = [];
    inf.addEventHandler({ onAdd: (o) => early.push(`${o.metadata?.namespace}/${o.metadata?.name}`) });
    const reg = inf.addEventHandler({ onAdd: (o) => removed.push(String(o.metadata?.name)) });
    reg.remove();
    const ac = new AbortController();
    const run = inf.run(ac.signal);
    expect(() => inf.setWatchErrorHandler(() => {})).toThrow(InformerError);
    await expect(inf.run(ac.signal)).rejects.toBeInstanceOf(InformerError);
    await vi.waitFor(() => {
      clock.step(1000);
      expect(inf.hasSynced()).toBe(true);
    });
    expect(lookups).toBe(3);
    expect(early.sort()).toEqual(['a/x', 'a/y', 'b/x']);
    expect(removed).toEqual([]);
    const late: string[] = [];
    inf.addEventHandler({ onAdd: (o, initial) => late.push(`${o.metadata?.name}:${initial}`) });
    expect(late.sort()).toEqual(['x:true', 'x:true', 'y:true']);
    s.create('z', {}, 'b');
    await vi.waitFor(() => expect(late).toContain('z:false'));
    expect(early).toContain('b/z');
    ac.abort();
    await run;
  });

  it('a scope lookup that never answers (hung discovery) does not keep a stopped informer running; waitForSync answers false on its signal and on the stop', async () => {
    const fcl = new FakeClient();
    const inf = multi(fcl, () => new Promise(() => {}));
    const ac = new AbortController();
    const run = inf.run(ac.signal);
    const wait = new AbortController();
    const waiting = inf.waitForSync(wait.signal);
    wait.abort();
    expect(await waiting).toBe(false);
    expect(getEventListeners(wait.signal, 'abort')).toHaveLength(0);
    const pending = inf.waitForSync();
    ac.abort();
    // The scope lookup never answers (a hung discovery request): the run still ends with its signal.
    await run;
    expect(inf.isStopped()).toBe(true);
    expect(await pending).toBe(false);
  });
});

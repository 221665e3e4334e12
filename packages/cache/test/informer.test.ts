import { getEventListeners } from 'node:events';
import type { KubeObject } from '@kubeloop/client';
import type { Logger } from '@kubeloop/core';
import { FakeClock } from '@kubeloop/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  composeTransforms,
  DeletedFinalStateUnknown,
  type Delta,
  FIFOClosedError,
  Indexer,
  InformerError,
  isDeletedFinalStateUnknown,
  LAST_APPLIED_CONFIG_ANNOTATION,
  objectOfDelete,
  RealFIFO,
  Reflector,
  SharedIndexInformer,
  type SharedIndexInformerOptions,
  stripLastAppliedConfiguration,
  stripManagedFields,
} from '../src/index.js';
import { cm, FakeServer, statusError } from './support/fake-server.js';
import { eachRetention, retention } from './support/retention.js';

const running: AbortController[] = [];
afterEach(() => {
  for (const ac of running.splice(0)) ac.abort();
});

function recordingLogger() {
  const records: Array<{ level: string; msg: string } & Record<string, unknown>> = [];
  const mk = (level: string) => (f: Record<string, unknown>, msg: string) =>
    records.push({ ...f, level, msg });
  const logger: Logger = {
    debug: mk('debug'),
    info: mk('info'),
    warn: mk('warn'),
    error: mk('error'),
    child: () => logger,
  };
  return { logger, records };
}

function startInformer(srv: FakeServer, opts: SharedIndexInformerOptions = {}) {
  const { logger, records } = recordingLogger();
  const clock = new FakeClock();
  const inf = new SharedIndexInformer(srv, {
    logger,
    clock,
    random: () => 0.5,
    objectRetention: retention(),
    ...opts,
  });
  const log: string[] = [];
  inf.addEventHandler({
    onAdd: (o, initial) =>
      log.push(`add ${o.metadata?.name}@${o.metadata?.resourceVersion}${initial ? ' initial' : ''}`),
    onUpdate: (a, b) =>
      log.push(`update ${b.metadata?.name}@${a.metadata?.resourceVersion}->${b.metadata?.resourceVersion}`),
    onDelete: (o) =>
      log.push(
        o instanceof DeletedFinalStateUnknown
          ? `tombstone ${o.key}@${o.obj.metadata?.resourceVersion}`
          : `delete ${o.metadata?.name}`,
      ),
  });
  const ac = new AbortController();
  running.push(ac);
  const done = inf.run(ac.signal);
  const stop = async () => {
    ac.abort();
    await done;
  };
  return { inf, log, records, clock, ac, done, stop };
}

const withManagedFields = (o: KubeObject): KubeObject => {
  (o.metadata as Record<string, unknown>).managedFields = [{ manager: 'kubectl', operation: 'Update' }];
  return o;
};

eachRetention(() => {
  describe('SharedIndexInformer: store writes are internal', () => {
    it('exposes no replace/add/update/delete; the store it hands out is read-only', async () => {
      const inf = new SharedIndexInformer(new FakeServer(1), { objectRetention: retention() });
      for (const m of ['replace', 'add', 'update', 'delete', 'bookmark'])
        expect((inf as unknown as Record<string, unknown>)[m]).toBeUndefined();
      // @ts-expect-error the reader has no upsert
      expect(() => inf.getIndexer().upsert).not.toThrow();
    });
  });

  describe('SharedIndexInformer: transforms (C35, C39)', () => {
    it('C35: transform runs once per object version, never for tombstones; tombstones carry the transformed state', async () => {
      const srv = new FakeServer(0);
      for (let i = 0; i < 100; i++) withManagedFields(srv.create(`cm-${i}`));
      const calls: KubeObject[] = [];
      const t = startInformer(srv, {
        transform: (o) => {
          calls.push(o);
          return stripManagedFields(o);
        },
      });
      await vi.waitFor(() => expect(t.inf.hasSynced()).toBe(true));
      for (let i = 0; i < 50; i++) srv.modify(`cm-${i}`, { v: '2' });
      await vi.waitFor(() => expect(t.inf.lastSyncResourceVersion).toBe(String(srv.rv)));
      expect(calls).toHaveLength(150);
      // Watch gap: the watch fails with 410, and 10 objects are deleted and one modified before the relist.
      srv.endWatches(statusError(410, 'Expired', 'too old resource version'));
      for (let i = 90; i < 100; i++) srv.remove(`cm-${i}`);
      srv.modify('cm-80', { v: 'gap' });
      t.clock.step(60_000);
      await vi.waitFor(
        () => {
          t.clock.step(1000);
          expect(t.inf.getIndexer().size()).toBe(90);
        },
        { interval: 2 },
      );
      // The relist transformed only the one object whose version changed.
      expect(calls).toHaveLength(151);
      expect(calls.some((c) => isDeletedFinalStateUnknown(c))).toBe(false);
      const tombstones = t.log.filter((l) => l.startsWith('tombstone'));
      expect(tombstones).toHaveLength(10);
      for (const obj of t.inf.getIndexer().list()) expect(obj.metadata?.managedFields).toBeUndefined();
      await t.stop();
    });

    it('tombstone objects are the cached (transformed) last state', async () => {
      const srv = new FakeServer(0);
      withManagedFields(srv.create('a'));
      const seen: unknown[] = [];
      const clock = new FakeClock();
      const inf = new SharedIndexInformer(srv, {
        transform: stripManagedFields,
        clock,
        objectRetention: retention(),
      });
      inf.addEventHandler({ onDelete: (o) => seen.push(o) });
      const ac = new AbortController();
      running.push(ac);
      const done = inf.run(ac.signal);
      await vi.waitFor(() => expect(inf.hasSynced()).toBe(true));
      srv.endWatches(statusError(410, 'Expired', 'gone'));
      srv.remove('a');
      await vi.waitFor(() => {
        clock.step(1000);
        expect(seen).toHaveLength(1);
      });
      const t = seen[0] as DeletedFinalStateUnknown;
      expect(t).toBeInstanceOf(DeletedFinalStateUnknown);
      expect(t.obj.metadata?.managedFields).toBeUndefined();
      expect(Object.isFrozen(t.obj)).toBe(true);
      ac.abort();
      await done;
    });

    it('C39: a transform that throws for one object never wedges the informer; each arrival is logged and counted', async () => {
      const srv = new FakeServer(100);
      const t = startInformer(srv, {
        transform: (o) => {
          if (o.metadata?.name === 'cm-7') throw new Error('cannot transform cm-7');
          return o;
        },
      });
      await vi.waitFor(() => expect(t.inf.hasSynced()).toBe(true));
      expect(t.inf.getIndexer().size()).toBe(99);
      expect(t.inf.getIndexer().get('ns/cm-7')).toBeUndefined();
      srv.modify('cm-7', { v: '2' });
      srv.modify('cm-7', { v: '3' });
      srv.modify('cm-8', { v: '2' });
      srv.create('new-one');
      await vi.waitFor(() => expect(t.inf.getIndexer().get('ns/new-one')).toBeDefined());
      expect(t.log).toContain(`update cm-8@10->${srv.rv - 1}`);
      expect(t.inf.status().transformErrors).toBe(3);
      const errors = t.records.filter((r) => r.level === 'error');
      expect(errors).toHaveLength(3);
      expect(errors[0]).toMatchObject({ key: 'ns/cm-7', msg: expect.stringContaining('transform') });
      expect(errors[0]?.err).toBeInstanceOf(Error);
      // Still on the first list and watch: no relist loop.
      expect(srv.listCalls).toHaveLength(1);
      expect(srv.watchCalls).toHaveLength(1);
      expect(t.inf.getIndexer().get('ns/cm-7')).toBeUndefined();
      await t.stop();
    });

    it('a key whose new version fails to transform keeps its last good state through a relist (no false delete)', async () => {
      const srv = new FakeServer(2);
      let fail = false;
      const t = startInformer(srv, {
        transform: (o) => {
          if (fail && o.metadata?.name === 'cm-0') throw new Error('no');
          return o;
        },
      });
      await vi.waitFor(() => expect(t.inf.hasSynced()).toBe(true));
      fail = true;
      srv.endWatches(statusError(410, 'Expired', 'gone'));
      srv.modify('cm-0', { v: 'x' });
      await vi.waitFor(() => {
        t.clock.step(1000);
        expect(srv.listCalls.length).toBe(2);
      });
      await vi.waitFor(() => expect(t.inf.status().transformErrors).toBe(1));
      expect(t.inf.getIndexer().get('ns/cm-0')?.metadata?.resourceVersion).toBe('2');
      expect(t.log.filter((l) => l.startsWith('tombstone'))).toEqual([]);
      await t.stop();
    });

    it('setTransform and setWatchErrorHandler are refused once started; the watch error handler gets each error', async () => {
      const srv = new FakeServer(1);
      const boom = statusError(500, 'InternalError', 'boom');
      srv.watchFaults.push({ error: boom });
      const inf = new SharedIndexInformer(srv, { clock: new FakeClock(), objectRetention: retention() });
      const errs: unknown[] = [];
      inf.setWatchErrorHandler((e) => errs.push(e));
      const ac = new AbortController();
      running.push(ac);
      const done = inf.run(ac.signal);
      expect(() => inf.setTransform(stripManagedFields)).toThrow(InformerError);
      expect(() => inf.setWatchErrorHandler(() => {})).toThrow(InformerError);
      await expect(inf.run(ac.signal)).rejects.toThrow(InformerError);
      await vi.waitFor(() => expect(errs).toEqual([boom]));
      ac.abort();
      await done;
    });
  });

  describe('SharedIndexInformer: resync (per handler, jittered, spread)', () => {
    it('each handler gets resyncs at its own period (same object as old and new); 0 disables', async () => {
      const srv = new FakeServer(3);
      const t = startInformer(srv, { resyncJitter: 0 });
      const a: string[] = [];
      const b: string[] = [];
      const none: string[] = [];
      t.inf.addEventHandler(
        { onUpdate: (o, n) => a.push(`${n.metadata?.name}${o === n ? '' : ' changed'}`) },
        { resyncPeriodMs: 1000 },
      );
      t.inf.addEventHandler(
        { onUpdate: (_o, n) => b.push(String(n.metadata?.name)) },
        { resyncPeriodMs: 5000 },
      );
      t.inf.addEventHandler({ onUpdate: (_o, n) => none.push(String(n.metadata?.name)) });
      await vi.waitFor(() => expect(t.inf.hasSynced()).toBe(true));
      t.clock.step(1000);
      expect(a).toEqual(['cm-0', 'cm-1', 'cm-2']);
      expect(b).toEqual([]);
      t.clock.step(1000);
      expect(a).toHaveLength(6);
      t.clock.step(3000);
      expect(a).toHaveLength(15);
      expect(b).toHaveLength(3);
      expect(none).toEqual([]);
      expect(t.log.filter((l) => l.startsWith('update'))).toEqual([]);
      await t.stop();
    });

    it('periods are jittered by ±10 % by default, and a period under 1 s is raised to 1 s', async () => {
      const srv = new FakeServer(1);
      const t = startInformer(srv, { random: () => 1 }); // +10 %
      const got: string[] = [];
      t.inf.addEventHandler(
        { onUpdate: (_o, n) => got.push(String(n.metadata?.name)) },
        { resyncPeriodMs: 10 },
      );
      await vi.waitFor(() => expect(t.inf.hasSynced()).toBe(true));
      t.clock.step(1099);
      expect(got).toEqual([]);
      t.clock.step(1);
      expect(got).toEqual(['cm-0']);
      await t.stop();
    });

    it('a resync of many objects is delivered in batches with the event loop free in between', async () => {
      const srv = new FakeServer(2500);
      const t = startInformer(srv, { resyncJitter: 0 });
      let n = 0;
      t.inf.addEventHandler({ onUpdate: () => n++ }, { resyncPeriodMs: 1000 });
      await vi.waitFor(() => expect(t.inf.hasSynced()).toBe(true));
      t.clock.step(1000);
      expect(n).toBe(1000);
      await vi.waitFor(() => expect(n).toBe(2500));
      await t.stop();
    });

    it('the informer-wide resyncPeriodMs is every handler default; a removed handler gets no more resyncs', async () => {
      const srv = new FakeServer(1);
      const t = startInformer(srv, { resyncPeriodMs: 2000, resyncJitter: 0 });
      const got: string[] = [];
      const reg = t.inf.addEventHandler({ onUpdate: (_o, n) => got.push(String(n.metadata?.name)) });
      await vi.waitFor(() => expect(t.inf.hasSynced()).toBe(true));
      t.clock.step(2000);
      expect(got).toHaveLength(1);
      reg.remove();
      t.clock.step(2000);
      expect(got).toHaveLength(1);
      await t.stop();
      expect(t.clock.pendingTimers()).toBe(0);
    });
  });

  describe('SharedIndexInformer: sync and stop', () => {
    it('waitForSync resolves false when the informer stops or the signal aborts, leaving no listener behind', async () => {
      const srv = new FakeServer(1);
      srv.listFaults.push(statusError(500, 'InternalError', 'down'));
      const t = startInformer(srv);
      const caller = new AbortController();
      const w1 = t.inf.waitForSync(caller.signal);
      const w2 = t.inf.waitForSync();
      expect(getEventListeners(caller.signal, 'abort')).toHaveLength(1);
      caller.abort();
      expect(await w1).toBe(false);
      await t.stop();
      expect(await w2).toBe(false);
      expect(await t.inf.waitForSync()).toBe(false);
      expect(getEventListeners(t.ac.signal, 'abort')).toHaveLength(0);
    });

    it('status() reports an unserved kind (list 404) until a list succeeds again (C36)', async () => {
      const srv = new FakeServer(1);
      const t = startInformer(srv);
      await vi.waitFor(() => expect(t.inf.hasSynced()).toBe(true));
      srv.listFaults.push(statusError(404, 'NotFound', 'the server could not find the requested resource'));
      srv.endWatches(statusError(404, 'NotFound', 'the server could not find the requested resource'));
      await vi.waitFor(() => {
        t.clock.step(1000);
        expect(t.inf.status().unserved).toBe(true);
      });
      await vi.waitFor(() => {
        t.clock.step(5000);
        expect(t.inf.status().unserved).toBe(false);
      });
      expect(t.inf.status().lastListError).toBeUndefined();
      await t.stop();
    });

    it('a throwing or rejecting handler is logged with the error object, and the others go on', async () => {
      const srv = new FakeServer(2);
      const t = startInformer(srv);
      const err = new Error('handler bug');
      t.inf.addEventHandler({
        onAdd: () => {
          throw err;
        },
      });
      t.inf.addEventHandler({ onAdd: async () => Promise.reject(err) });
      await vi.waitFor(() => expect(t.inf.hasSynced()).toBe(true));
      srv.create('x');
      await vi.waitFor(() => expect(t.log).toContain(`add x@${srv.rv}`));
      await vi.waitFor(() =>
        expect(t.records.filter((r) => r.level === 'error' && r.err === err).length).toBe(6),
      );
      await t.stop();
    });

    it('a handler may remove itself or add another while being called', async () => {
      const srv = new FakeServer(0);
      const t = startInformer(srv);
      await vi.waitFor(() => expect(t.inf.hasSynced()).toBe(true));
      const seen: string[] = [];
      const reg = t.inf.addEventHandler({
        onAdd: (o) => {
          seen.push(`first ${o.metadata?.name}`);
          reg.remove();
          t.inf.addEventHandler({
            onAdd: (x, initial) => seen.push(`second ${x.metadata?.name} ${initial}`),
          });
        },
      });
      srv.create('a');
      await vi.waitFor(() => expect(seen).toEqual(['first a', 'second a true']));
      srv.create('b');
      await vi.waitFor(() => expect(seen).toEqual(['first a', 'second a true', 'second b false']));
      await t.stop();
    });
  });

  describe('RealFIFO (client-go the_real_fifo.go)', () => {
    it('fed by a Reflector: Replaced for the list, then Added/Updated/Deleted in order; a relist tombstones missing keys', async () => {
      const srv = new FakeServer(2);
      const store = new Indexer();
      const fifo = new RealFIFO({ knownObjects: store });
      const clock = new FakeClock();
      const r = new Reflector(srv, fifo, { clock });
      const ac = new AbortController();
      running.push(ac);
      const done = r.run(ac.signal);
      const deltas: string[] = [];
      const consume = async (n: number) => {
        for (let i = 0; i < n; i++) {
          const d = (await fifo.pop(ac.signal)) as Delta;
          const o = objectOfDelete(d.object);
          deltas.push(
            `${d.type} ${o.metadata?.name}${isDeletedFinalStateUnknown(d.object) ? ' (tombstone)' : ''}`,
          );
          if (d.type === 'Deleted') store.deleteKey(store.keyFunc(o));
          else store.upsert(structuredClone(o));
        }
      };
      await consume(2);
      expect(fifo.hasSynced()).toBe(true);
      srv.create('c');
      srv.modify('c', { v: '2' });
      srv.remove('cm-0');
      await consume(3);
      srv.endWatches(statusError(410, 'Expired', 'gone'));
      srv.remove('cm-1');
      await vi.waitFor(() => {
        clock.step(1000);
        expect(fifo.length).toBe(2);
      });
      await consume(2);
      expect(deltas).toEqual([
        'Replaced cm-0',
        'Replaced cm-1',
        'Added c',
        'Updated c',
        'Deleted cm-0',
        'Replaced c',
        'Deleted cm-1 (tombstone)',
      ]);
      fifo.resync();
      expect(fifo.tryPop()?.type).toBe('Sync');
      ac.abort();
      await done;
    });

    it('hasSynced waits until every delta of the first replace is popped; pop waits, returns undefined on abort, throws once closed', async () => {
      const fifo = new RealFIFO({ transform: stripManagedFields });
      expect(fifo.hasSynced()).toBe(false);
      fifo.replace([withManagedFields(cm('a', 1)), cm('b', 2)], '2');
      expect(fifo.length).toBe(2);
      expect(fifo.hasSynced()).toBe(false);
      const first = await fifo.pop();
      expect((first!.object as KubeObject).metadata?.managedFields).toBeUndefined();
      expect(fifo.hasSynced()).toBe(false);
      await fifo.pop();
      expect(fifo.hasSynced()).toBe(true);
      const ac = new AbortController();
      const waiting = fifo.pop(ac.signal);
      ac.abort();
      expect(await waiting).toBeUndefined();
      const later = fifo.pop();
      fifo.add(cm('c', 3));
      expect((await later)?.type).toBe('Added');
      fifo.close();
      await expect(fifo.pop()).rejects.toThrow(FIFOClosedError);
      expect(() => fifo.add(cm('d', 4))).toThrow(FIFOClosedError);
    });

    it('keeps order across many pushes and pops (the queue compacts without losing entries)', () => {
      const fifo = new RealFIFO();
      const out: string[] = [];
      for (let round = 0; round < 5; round++) {
        for (let i = 0; i < 3000; i++) fifo.add(cm(`o${round}-${i}`, i));
        for (let i = 0; i < 2000; i++) out.push(String((fifo.tryPop()!.object as KubeObject).metadata?.name));
      }
      while (fifo.length) out.push(String((fifo.tryPop()!.object as KubeObject).metadata?.name));
      expect(out).toHaveLength(15000);
      const expected: string[] = [];
      for (let round = 0; round < 5; round++) for (let i = 0; i < 3000; i++) expected.push(`o${round}-${i}`);
      expect(out).toEqual(expected);
    });
  });

  describe('transforms', () => {
    it('stripManagedFields and stripLastAppliedConfiguration edit in place, or copy a frozen object', () => {
      const o = withManagedFields(cm('a', 1));
      (o.metadata as Record<string, unknown>).annotations = {
        [LAST_APPLIED_CONFIG_ANNOTATION]: '{}',
        keep: 'me',
      };
      const both = composeTransforms(stripManagedFields, stripLastAppliedConfiguration);
      const out = both(o);
      expect(out).toBe(o);
      expect(out.metadata?.managedFields).toBeUndefined();
      expect(out.metadata?.annotations).toEqual({ keep: 'me' });
      const frozen = Object.freeze(withManagedFields(cm('b', 1)));
      Object.freeze(frozen.metadata);
      const copy = stripManagedFields(frozen);
      expect(copy).not.toBe(frozen);
      expect(copy.metadata?.managedFields).toBeUndefined();
      expect(frozen.metadata?.managedFields).toBeDefined();
      const plain = cm('c', 1);
      expect(stripManagedFields(plain)).toBe(plain);
      expect(stripLastAppliedConfiguration(plain)).toBe(plain);
    });
  });

  describe('tombstones across installed copies', () => {
    it('instanceof, isDeletedFinalStateUnknown and objectOfDelete recognise a tombstone from another copy of the module', async () => {
      // A second instance of the module, as a second installed copy of the package would load.
      vi.resetModules();
      const other = (await import('../src/store.js')) as typeof import('../src/store.js');
      expect(other.DeletedFinalStateUnknown).not.toBe(DeletedFinalStateUnknown);
      const foreign = new other.DeletedFinalStateUnknown('ns/a', cm('a', 1));
      expect(foreign instanceof DeletedFinalStateUnknown).toBe(true);
      expect(isDeletedFinalStateUnknown(foreign)).toBe(true);
      expect(objectOfDelete(foreign as DeletedFinalStateUnknown).metadata?.name).toBe('a');
      expect(isDeletedFinalStateUnknown(cm('a', 1))).toBe(false);
      expect(cm('a', 1) instanceof DeletedFinalStateUnknown).toBe(false);
    });
  });
});

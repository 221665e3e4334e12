import {
  type Cached,
  deepCopy,
  type KubeObject,
  type ObjectList,
  Pod,
  type WatchEvent,
  type Writer,
} from '@kubeloop/client';
import type { V1Pod } from '@kubeloop/client/models';
import { onAbort } from '@kubeloop/core';
import { describe, expect, expectTypeOf, it, vi } from 'vitest';
import {
  DeletedFinalStateUnknown,
  type IndexerReader,
  isDeletedFinalStateUnknown,
  type ListCallOptions,
  type ListerWatcher,
  objectOfDelete,
  type ResourceEventHandler,
  SharedIndexInformer,
  type WatchCallOptions,
} from '../src/index.js';
import { eachRetention, retention } from './support/retention.js';

/** vi.waitFor bounds: 5 ms checks, 5 s before giving up (a loaded CI box, not the expected time). */
const WAIT = { timeout: 5000, interval: 5 };

const pod = (name: string, rv: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { namespace: 'ns', name, resourceVersion: rv },
});

type Script = { events: WatchEvent[]; error?: unknown } | 'hang';

/**
 * A scripted source (like client-go's FakeControllerSource): lists answer from `lists`, each watch plays the
 * next script. Records every call so tests can assert resourceVersions.
 */
class ScriptedSource implements ListerWatcher {
  readonly listCalls: ListCallOptions[] = [];
  readonly watchCalls: WatchCallOptions[] = [];
  constructor(
    readonly lists: ObjectList[],
    readonly watches: Script[],
  ) {}
  async list(o: ListCallOptions): Promise<ObjectList> {
    this.listCalls.push(o);
    const l = this.lists.shift();
    if (!l) throw new Error('no more lists scripted');
    return structuredClone(l);
  }
  watch(o: WatchCallOptions): AsyncIterable<WatchEvent> {
    this.watchCalls.push(o);
    const script = this.watches.shift() ?? 'hang';
    return (async function* () {
      if (script === 'hang') {
        await new Promise<void>((resolve) => onAbort(o.signal, () => resolve()));
        return;
      }
      for (const ev of script.events) yield structuredClone(ev);
      if (script.error) throw script.error;
    })();
  }
}

const fastBackoff = { backoff: { initialMs: 1, maxMs: 2 } };

function record(inf: SharedIndexInformer) {
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
  return log;
}

eachRetention(() => {
  describe('SharedIndexInformer', () => {
    it('lists, then watches from the list RV; re-watches from the last RV after a clean end without relisting', async () => {
      const src = new ScriptedSource(
        [{ metadata: { resourceVersion: '10' }, items: [pod('a', '5'), pod('b', '6')] }],
        [
          {
            events: [
              { type: 'MODIFIED', object: pod('a', '11') },
              { type: 'BOOKMARK', object: { metadata: { resourceVersion: '15' } } },
            ],
          },
          {
            events: [
              { type: 'DELETED', object: pod('b', '16') },
              { type: 'ADDED', object: pod('c', '17') },
            ],
          },
        ],
      );
      const inf = new SharedIndexInformer(src, { reflector: fastBackoff, objectRetention: retention() });
      const log = record(inf);
      const ac = new AbortController();
      const run = inf.run(ac.signal);
      await vi.waitFor(() => expect(src.watchCalls.length, 'third watch').toBeGreaterThanOrEqual(3), WAIT);
      ac.abort();
      await run;
      expect(inf.hasSynced()).toBe(true);
      expect(src.listCalls).toHaveLength(1);
      expect(src.listCalls[0]?.resourceVersion).toBe('0');
      expect(src.watchCalls.map((w) => w.resourceVersion)).toEqual(['10', '15', '17']);
      expect(
        src.watchCalls.every(
          (w) => w.allowWatchBookmarks && w.timeoutSeconds >= 300 && w.timeoutSeconds < 600,
        ),
      ).toBe(true);
      expect(log).toEqual(['add a@5 initial', 'add b@6 initial', 'update a@5->11', 'delete b', 'add c@17']);
      expect(inf.getIndexer().listKeys().sort()).toEqual(['ns/a', 'ns/c']);
    });

    it('relists on a 410 ERROR event: unchanged objects notify nobody, missing ones become tombstones (C05/C07 shape)', async () => {
      const expired = {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        reason: 'Expired',
        code: 410,
        message: 'too old',
      };
      const src = new ScriptedSource(
        [
          { metadata: { resourceVersion: '10' }, items: [pod('a', '5'), pod('b', '6'), pod('c', '7')] },
          { metadata: { resourceVersion: '30' }, items: [pod('a', '5'), pod('c', '25')] },
        ],
        [{ events: [{ type: 'ERROR', object: expired }] }],
      );
      const inf = new SharedIndexInformer(src, { reflector: fastBackoff, objectRetention: retention() });
      const log = record(inf);
      const ac = new AbortController();
      const run = inf.run(ac.signal);
      await vi.waitFor(
        () => expect(src.watchCalls.length, 'watch after relist').toBeGreaterThanOrEqual(2),
        WAIT,
      );
      ac.abort();
      await run;
      expect(src.listCalls.map((l) => l.resourceVersion)).toEqual(['0', '10']);
      expect(src.watchCalls.map((w) => w.resourceVersion)).toEqual(['10', '30']);
      expect(log.slice(3)).toEqual(['update c@7->25', 'tombstone ns/b@6']);
    });

    it('pages through a list with continue tokens, without a resourceVersion on later pages', async () => {
      const src = new ScriptedSource(
        [
          { metadata: { resourceVersion: '9', continue: 't1' }, items: [pod('a', '1')] },
          { metadata: { resourceVersion: '9' }, items: [pod('b', '2')] },
        ],
        [],
      );
      const inf = new SharedIndexInformer(src, {
        reflector: { pageSize: 1, ...fastBackoff },
        objectRetention: retention(),
      });
      const ac = new AbortController();
      const run = inf.run(ac.signal);
      await vi.waitFor(() => expect(inf.hasSynced(), 'sync').toBe(true), WAIT);
      ac.abort();
      await run;
      expect(src.listCalls.map((l) => [l.limit, l.continue, l.resourceVersion])).toEqual([
        [1, undefined, '0'],
        [1, 't1', undefined],
      ]);
      expect(inf.getIndexer().size()).toBe(2);
    });

    it('gives a late handler synthetic adds, and a throwing handler does not stop the others', async () => {
      const src = new ScriptedSource(
        [{ metadata: { resourceVersion: '3' }, items: [pod('a', '1'), pod('b', '2')] }],
        [{ events: [{ type: 'ADDED', object: pod('c', '4') }] }],
      );
      const inf = new SharedIndexInformer(src, { reflector: fastBackoff, objectRetention: retention() });
      inf.addEventHandler({
        onAdd: () => {
          throw new Error('boom');
        },
      });
      const ac = new AbortController();
      const run = inf.run(ac.signal);
      await vi.waitFor(() => expect(inf.getIndexer().size(), 'third object').toBe(3), WAIT);
      const late: string[] = [];
      const reg = inf.addEventHandler({ onAdd: (o, initial) => late.push(`${o.metadata?.name}:${initial}`) });
      expect(reg.hasSynced()).toBe(true);
      ac.abort();
      await run;
      expect(late.sort()).toEqual(['a:true', 'b:true', 'c:true']);
    });
  });

  describe('handler types (C06)', () => {
    it('onDelete receives either the object or a typed tombstone, so both must be handled', () => {
      type OnDelete = NonNullable<import('../src/index.js').ResourceEventHandler<KubeObject>['onDelete']>;
      expectTypeOf<Parameters<OnDelete>[0]>().toEqualTypeOf<
        Cached<KubeObject> | DeletedFinalStateUnknown<Cached<KubeObject>>
      >();
      const t = new DeletedFinalStateUnknown('ns/a', pod('a', '1'));
      expect(t.kind).toBe('DeletedFinalStateUnknown');
      expect(Object.isFrozen(t)).toBe(true);
    });

    it('handler arguments and store reads are read-only Cached<T>: mutating one or writing it uncopied does not compile; deepCopy does', () => {
      type Handler = ResourceEventHandler<V1Pod>;
      type Added = Parameters<NonNullable<Handler['onAdd']>>[0];
      expectTypeOf<Added>().toEqualTypeOf<Cached<V1Pod>>();
      expectTypeOf<Parameters<NonNullable<Handler['onUpdate']>>[1]>().toEqualTypeOf<Cached<V1Pod>>();
      expectTypeOf<ReturnType<IndexerReader<V1Pod>['get']>>().toEqualTypeOf<Cached<V1Pod> | undefined>();
      expectTypeOf<ReturnType<IndexerReader<V1Pod>['list']>>().toEqualTypeOf<Cached<V1Pod>[]>();
      expectTypeOf<ReturnType<IndexerReader<V1Pod>['byIndex']>>().toEqualTypeOf<Cached<V1Pod>[]>();
      expectTypeOf<ReturnType<SharedIndexInformer<V1Pod>['getIndexer']>>().toEqualTypeOf<
        IndexerReader<V1Pod>
      >();
      // server-set metadata is there without `?.`
      expectTypeOf<Added['metadata']['name']>().toEqualTypeOf<string>();
      const handler: Handler = {
        onAdd(p) {
          // @ts-expect-error a cached object's fields are read-only
          p.metadata.labels = {};
          // @ts-expect-error nested maps too
          p.metadata.labels!.x = 'y';
          // @ts-expect-error and arrays
          p.spec?.containers.push({ name: 'c' });
          const w = {} as Pick<Writer, 'update'>;
          // @ts-expect-error a writer takes the mutable type: copy first
          void w.update(Pod, p);
          const copy = deepCopy(p);
          copy.metadata.labels = { x: 'y' };
          copy.spec!.containers.push({ name: 'c' });
          void w.update(Pod, copy);
        },
        onDelete(o) {
          const last = objectOfDelete(o);
          expectTypeOf(last).toEqualTypeOf<Cached<V1Pod>>();
          if (isDeletedFinalStateUnknown(o)) expectTypeOf(o.obj).toEqualTypeOf<Cached<V1Pod>>();
          else expectTypeOf(o).toEqualTypeOf<Cached<V1Pod>>();
        },
      };
      expect(typeof handler.onAdd).toBe('function');
      // the editable copy round-trips: equal content, a different (unfrozen) object
      const frozen = Object.freeze({
        metadata: Object.freeze({ name: 'a', uid: 'u', resourceVersion: '1', creationTimestamp: 't' }),
      }) as Cached<V1Pod>;
      const copy = deepCopy(frozen);
      expect(copy).toEqual(frozen);
      expect(Object.isFrozen(copy)).toBe(false);
    });
  });
});

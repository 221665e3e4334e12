import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { SharedIndexInformer } from '../src/index.js';
import { FakeServer, statusError } from './support/fake-server.js';

const WAIT = { timeout: 10_000, interval: 5 };
const names = ['a', 'b', 'c', 'd'];
const op = fc.oneof(
  fc.record({
    op: fc.constantFrom('create', 'modify', 'remove'),
    name: fc.constantFrom(...names),
    ns: fc.constantFrom('ns1', 'ns2'),
    v: fc.constantFrom('x', 'y', 'ü"\\'),
    app: fc.constantFrom('web', 'db'),
  }),
  fc.constant({ op: 'relist' as const }),
);

/** What an informer's readers and handlers show: every read path, and the notifications in order. */
function observe(inf: SharedIndexInformer) {
  const events: string[] = [];
  const show = (o: unknown) => JSON.stringify(o);
  inf.addEventHandler({
    onAdd: (o, initial) => events.push(`add ${initial} ${show(o)}`),
    onUpdate: (a, b) => events.push(`update ${show(a)} ${show(b)}`),
    onDelete: (o) => events.push(`delete ${JSON.stringify(o)}`),
  });
  const reads = () => {
    const idx = inf.getIndexer();
    const keys = idx.listKeys().sort();
    return {
      keys,
      got: keys.map((k) => idx.get(k)),
      frozen: keys.every((k) => Object.isFrozen(idx.get(k)) && Object.isFrozen(idx.get(k)?.metadata)),
      list: idx
        .list()
        .map((o) => JSON.stringify(o))
        .sort(),
      byV: ['x', 'y', 'ü"\\'].map((v) =>
        idx
          .byIndex('byV', v)
          .map((o) => o.metadata.name)
          .sort(),
      ),
      byNs: ['ns1', 'ns2'].map((n) => idx.indexKeys('namespace', n).sort()),
      values: idx.listIndexFuncValues('byV').sort(),
    };
  };
  return { events, reads };
}

describe("objectRetention: 'bytes' reads equal 'objects' reads", () => {
  it('for random sequences of creates, updates, deletes and relists', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 25 }), async (ops) => {
        const srv = new FakeServer(0);
        const make = (objectRetention: 'objects' | 'bytes') =>
          new SharedIndexInformer(srv, {
            // the real clock: a relist's backoff (0 ms here) must pass without a test driving a fake one
            random: () => 0.5,
            objectRetention,
            compactStore: { maxCachedObjects: 2 },
            indexers: { byV: (o) => [String((o as { data?: { v?: string } }).data?.v ?? '')] },
            reflector: { backoff: { initialMs: 0, maxMs: 0 } },
          });
        const eager = make('objects');
        const lazy = make('bytes');
        const a = observe(eager);
        const b = observe(lazy);
        const ac = new AbortController();
        const runs = [eager.run(ac.signal), lazy.run(ac.signal)];
        try {
          await vi.waitFor(() => expect(eager.hasSynced() && lazy.hasSynced()).toBe(true), WAIT);
          const live = new Set<string>();
          for (const o of ops) {
            if (o.op === 'relist') {
              srv.endWatches(statusError(410, 'Expired', 'too old resource version'));
              continue;
            }
            const key = `${o.ns}/${o.name}`;
            if (o.op === 'create' && !live.has(key)) {
              srv.create(o.name, { v: o.v }, o.ns, { app: o.app });
              live.add(key);
            } else if (o.op === 'modify' && live.has(key)) srv.modify(o.name, { v: o.v }, o.ns);
            else if (o.op === 'remove' && live.has(key)) {
              srv.remove(o.name, o.ns);
              live.delete(key);
            }
          }
          const at = String(srv.rv);
          await vi.waitFor(() => {
            expect(eager.lastSyncResourceVersion).toBe(at);
            expect(lazy.lastSyncResourceVersion).toBe(at);
          }, WAIT);
          expect(b.reads()).toEqual(a.reads());
          expect(b.reads().frozen).toBe(true);
          expect(b.events).toEqual(a.events);
        } finally {
          ac.abort();
          await Promise.allSettled(runs);
        }
      }),
      { numRuns: 30 },
    );
  });
});

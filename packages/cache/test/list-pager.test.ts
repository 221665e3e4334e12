import type { Cached, KubeObject, ObjectList } from '@kubeloop/client';
import { onAbort } from '@kubeloop/core';
import { FakeClock } from '@kubeloop/core/testing';
import { describe, expect, it, vi } from 'vitest';
import { type ListCallOptions, type ListerWatcher, Reflector, SharedIndexInformer } from '../src/index.js';
import { pagedList } from '../src/list-pager.js';
import { cm, FakeServer, RecordingStore, statusError } from './support/fake-server.js';

/** A lister of `total` ConfigMaps in pages of `limit` whose answers the test releases one by one. */
function heldPages(total: number) {
  const calls: Array<ListCallOptions & { release: () => void; fail: (err: unknown) => void }> = [];
  const lw: ListerWatcher = {
    list: (o) =>
      new Promise<ObjectList>((resolve, reject) => {
        const from = Number(o.continue ?? 0);
        const to = Math.min(total, from + (o.limit ?? total));
        const page: ObjectList = {
          metadata: { resourceVersion: '9', ...(to < total ? { continue: String(to) } : {}) },
          items: Array.from({ length: to - from }, (_, i) => cm(`cm-${from + i}`, 5)),
        };
        onAbort(o.signal, () => reject(o.signal.reason));
        calls.push({ ...o, release: () => resolve(page), fail: reject });
      }),
    watch: () => {
      throw new Error('no watch here');
    },
  };
  return { lw, calls };
}

describe('pagedList: the next page is requested while this one is prepared (client-go ListPager page buffer)', () => {
  it('asks for page N+1 as soon as page N is answered, before preparing page N, and prepares every object once, in list order', async () => {
    const { lw, calls } = heldPages(6);
    const prepared: string[] = [];
    const requestsAtFirstPrepare: number[] = [];
    const ac = new AbortController();
    const listed = pagedList(lw, '0', 2, ac.signal, (o: KubeObject) => {
      if (prepared.length % 2 === 0) requestsAtFirstPrepare.push(calls.length);
      prepared.push(o.metadata!.name!);
      return { ...o, prepared: true };
    });
    await vi.waitFor(() => expect(calls).toHaveLength(1));
    calls[0]!.release();
    // page 2 is asked for before any object of page 1 is prepared
    await vi.waitFor(() => expect(prepared).toHaveLength(2));
    expect(requestsAtFirstPrepare[0]).toBe(2);
    expect(calls[1]).toMatchObject({ continue: '2', limit: 2 });
    expect(calls[1]!.resourceVersion).toBeUndefined();
    calls[1]!.release();
    await vi.waitFor(() => expect(calls).toHaveLength(3));
    calls[2]!.release();
    const result = await listed;
    expect(prepared).toEqual(['cm-0', 'cm-1', 'cm-2', 'cm-3', 'cm-4', 'cm-5']);
    expect(result.items.map((o) => o.metadata!.name)).toEqual(prepared);
    expect(result.items.every((o) => (o as { prepared?: boolean }).prepared)).toBe(true);
    expect(result).toMatchObject({ resourceVersion: '9', paginated: true });
    expect(calls).toHaveLength(3);
  });

  it('keeps at most two answered pages waiting while one is prepared, however fast the server is', async () => {
    const total = 40;
    let requested = 0;
    let ahead = 0;
    const lw: ListerWatcher = {
      list: async (o) => {
        requested++;
        const from = Number(o.continue ?? 0);
        const to = Math.min(total, from + 2);
        return {
          metadata: { resourceVersion: '3', ...(to < total ? { continue: String(to) } : {}) },
          items: [cm(`cm-${from}`, 1), cm(`cm-${from + 1}`, 1)],
        };
      },
      watch: () => {
        throw new Error('no watch here');
      },
    };
    let taken = 0;
    const result = await pagedList(lw, '', 2, new AbortController().signal, (o) => {
      const page = Number(o.metadata!.name!.slice(3)) / 2;
      if (page >= taken) taken = page + 1;
      ahead = Math.max(ahead, requested - taken);
      return o;
    });
    expect(result.items).toHaveLength(total);
    expect(requested).toBe(total / 2);
    expect(ahead).toBe(2);
  });

  it('a page that fails rejects the list with its error, after the pages before it were prepared, and requests nothing more', async () => {
    const { lw, calls } = heldPages(8);
    const prepared: string[] = [];
    const ac = new AbortController();
    const listed = pagedList(lw, '0', 2, ac.signal, (o) => {
      prepared.push(o.metadata!.name!);
      return o;
    });
    await vi.waitFor(() => expect(calls).toHaveLength(1));
    calls[0]!.release();
    await vi.waitFor(() => expect(calls).toHaveLength(2));
    const boom = statusError(500, 'InternalError', 'boom');
    calls[1]!.fail(boom);
    await expect(listed).rejects.toBe(boom);
    expect(prepared).toEqual(['cm-0', 'cm-1']);
    expect(calls).toHaveLength(2);
    expect(calls.every((c) => c.signal.aborted)).toBe(true);
  });

  it('a prepare that throws rejects the list and aborts the page requested ahead', async () => {
    const { lw, calls } = heldPages(6);
    const bad = new Error('prepare failed');
    const listed = pagedList(lw, '0', 2, new AbortController().signal, () => {
      throw bad;
    });
    await vi.waitFor(() => expect(calls).toHaveLength(1));
    calls[0]!.release();
    await expect(listed).rejects.toBe(bad);
    expect(calls).toHaveLength(2);
    expect(calls[1]!.signal.aborted).toBe(true);
  });

  it('an abort mid-list aborts every page request (the one in flight and the one answered) and rejects', async () => {
    const { lw, calls } = heldPages(6);
    const ac = new AbortController();
    const prepared: string[] = [];
    const listed = pagedList(lw, '0', 2, ac.signal, (o) => {
      prepared.push(o.metadata!.name!);
      return o;
    });
    listed.catch(() => {});
    await vi.waitFor(() => expect(calls).toHaveLength(1));
    calls[0]!.release();
    await vi.waitFor(() => expect(calls).toHaveLength(2));
    ac.abort(new Error('stop'));
    await expect(listed).rejects.toThrow();
    expect(calls.every((c) => c.signal.aborted)).toBe(true);
    expect(prepared.length).toBeLessThanOrEqual(2);
  });

  it('an expired continue token on a page asked for ahead gives one full list, each version prepared once (objects of the dropped pages reused when unchanged)', async () => {
    const srv = new FakeServer(7);
    srv.watchCache = false;
    let continued = 0;
    const lw: ListerWatcher = {
      list: async (o) => {
        if (o.continue && continued++ >= 1) {
          if (continued === 2) srv.modify('cm-0', { v: '2' }); // changed while the token expired
          throw statusError(410, 'Expired', 'continue too old');
        }
        return srv.list(o);
      },
      watch: (o) => srv.watch(o),
    };
    const prepared: string[] = [];
    const result = await pagedList(lw, '0', 2, new AbortController().signal, (o) => {
      prepared.push(o.metadata!.name!);
      return o;
    });
    expect(result.items.map((o) => o.metadata!.name).sort()).toEqual(
      Array.from({ length: 7 }, (_, i) => `cm-${i}`).sort(),
    );
    expect(srv.listCalls.at(-1)).toMatchObject({ resourceVersion: '' });
    expect(srv.listCalls.at(-1)!.limit).toBeUndefined();
    // 3 of the 4 objects of the two good pages are the same versions in the full list: prepared once, reused;
    // cm-0 changed, so its new version is prepared
    expect(prepared).toHaveLength(4 + 4);
    expect(prepared.filter((n) => n === 'cm-0')).toHaveLength(2);
    expect(result.items.find((o) => o.metadata!.name === 'cm-0')!.metadata!.resourceVersion).toBe(
      String(srv.rv),
    );
  });

  it('an unpaged list (limit 0) makes one request and prepares each object once', async () => {
    const srv = new FakeServer(130);
    const seen = new Set<string>();
    const result = await pagedList(srv, '0', 0, new AbortController().signal, (o) => {
      const n = o.metadata!.name!;
      if (seen.has(n)) throw new Error(`${n} prepared twice`);
      seen.add(n);
      return o;
    });
    expect(srv.listCalls).toHaveLength(1);
    expect(srv.listCalls[0]!.limit).toBeUndefined();
    expect(result).toMatchObject({ paginated: false });
    expect(seen.size).toBe(130);
  });
});

describe('Reflector: a store with prepare', () => {
  it('replace receives what prepare returned, for a paged list and for a streaming list (WatchList)', async () => {
    for (const useWatchList of [false, true]) {
      const srv = new FakeServer(5);
      srv.watchCache = false;
      const store = new RecordingStore();
      const replaced: KubeObject[][] = [];
      const withPrepare = Object.assign(store, {
        prepare: (o: KubeObject) => ({ ...o, metadata: { ...o.metadata, labels: { prepared: 'yes' } } }),
        replace: (items: KubeObject[], rv: string) => {
          replaced.push(items);
          RecordingStore.prototype.replace.call(store, items, rv);
        },
      });
      const ac = new AbortController();
      const done = new Reflector(srv, withPrepare, { pageSize: 2, useWatchList }).run(ac.signal);
      await vi.waitFor(() => expect(replaced).toHaveLength(1));
      expect(replaced[0]).toHaveLength(5);
      expect(replaced[0]!.every((o) => o.metadata?.labels?.prepared === 'yes')).toBe(true);
      if (useWatchList) expect(srv.watchCalls[0]).toMatchObject({ sendInitialEvents: true });
      ac.abort();
      await done;
    }
  });
});

describe('SharedIndexInformer: listed objects are transformed and frozen as their page arrives', () => {
  it('transforms each listed object once, freezes it, and the store and handlers get that object', async () => {
    const srv = new FakeServer(9);
    srv.watchCache = false;
    let transforms = 0;
    const inf = new SharedIndexInformer(srv, {
      reflector: { pageSize: 2 },
      clock: new FakeClock(),
      transform: (o) => {
        transforms++;
        return { ...o, metadata: { ...o.metadata, annotations: { t: 'yes' } } };
      },
    });
    const added: Cached<KubeObject>[] = [];
    inf.addEventHandler({
      onAdd: (o) => {
        added.push(o);
      },
    });
    const ac = new AbortController();
    const running = inf.run(ac.signal);
    expect(await inf.waitForSync()).toBe(true);
    await vi.waitFor(() => expect(added).toHaveLength(9));
    expect(transforms).toBe(9);
    for (const o of added) {
      expect(o.metadata?.annotations?.t).toBe('yes');
      expect(Object.isFrozen(o.metadata)).toBe(true);
      expect(inf.getIndexer().get(`${o.metadata?.namespace}/${o.metadata?.name}`)).toBe(o);
    }
    // the fake watch listens for the abort only once it is open
    await vi.waitFor(() => expect(srv.live).toHaveLength(1));
    ac.abort();
    await running;
  });

  it('a streaming initial list (WatchList) transforms each initial object once', async () => {
    const srv = new FakeServer(4);
    let transforms = 0;
    const inf = new SharedIndexInformer(srv, {
      reflector: { useWatchList: true },
      clock: new FakeClock(),
      transform: (o) => {
        transforms++;
        return o;
      },
    });
    const ac = new AbortController();
    const running = inf.run(ac.signal);
    expect(await inf.waitForSync()).toBe(true);
    expect(srv.watchCalls[0]).toMatchObject({ sendInitialEvents: true });
    expect(inf.getIndexer().size()).toBe(4);
    expect(transforms).toBe(4);
    await vi.waitFor(() => expect(srv.live).toHaveLength(1));
    ac.abort();
    await running;
  });
});

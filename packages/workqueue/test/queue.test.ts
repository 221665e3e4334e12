import { describe, expect, it } from 'vitest';
import { newQueue } from '../src/index.js';

async function getItem<T>(q: {
  get(): Promise<{ item: T; shutdown: false } | { item: undefined; shutdown: true }>;
}) {
  const r = await q.get();
  if (r.shutdown) throw new Error('unexpected shutdown');
  return r.item;
}

describe('queue', () => {
  it('hands out items in FIFO order and collapses duplicates', async () => {
    const q = newQueue<string>();
    q.add('a');
    q.add('b');
    q.add('a');
    q.add('c');
    expect(q.len()).toBe(3);
    expect(await getItem(q)).toBe('a');
    expect(await getItem(q)).toBe('b');
    expect(await getItem(q)).toBe('c');
    expect(q.len()).toBe(0);
  });

  it('never hands a key being processed to a second worker; re-added key comes back after done', async () => {
    const q = newQueue<string>();
    q.add('a');
    const first = await getItem(q);
    q.add('a'); // while processing
    expect(q.len()).toBe(0);
    let second: string | undefined;
    const pending = q.get().then((r) => {
      second = r.item;
    });
    await Promise.resolve();
    await Promise.resolve();
    expect(second).toBeUndefined();
    q.done(first);
    await pending;
    expect(second).toBe('a');
    q.done('a');
    expect(q.debugSizes()).toMatchObject({ queue: 0, dirty: 0, processing: 0, waiters: 0 });
  });

  it('a key re-added several times while processing is queued once', async () => {
    const q = newQueue<string>();
    q.add('a');
    await getItem(q);
    q.add('a');
    q.add('a');
    q.done('a');
    expect(q.len()).toBe(1);
  });

  it('wakes a waiting get on add', async () => {
    const q = newQueue<number>();
    const p = q.get();
    q.add(7);
    await expect(p).resolves.toEqual({ item: 7, shutdown: false });
  });

  it('uses keyFn for identity', async () => {
    type Req = { namespace: string; name: string };
    const q = newQueue<Req>({ keyFn: (r) => `${r.namespace}/${r.name}` });
    q.add({ namespace: 'a', name: 'x' });
    q.add({ namespace: 'a', name: 'x' });
    q.add({ namespace: 'b', name: 'x' });
    expect(q.len()).toBe(2);
    const r = await getItem(q);
    expect(r).toEqual({ namespace: 'a', name: 'x' });
    q.add({ namespace: 'a', name: 'x' });
    expect(q.len()).toBe(1);
    q.done({ namespace: 'a', name: 'x' });
    expect(q.len()).toBe(2);
  });

  it('after shutDown ignores adds but still hands out queued items, then reports shutdown', async () => {
    const q = newQueue<string>();
    q.add('a');
    q.add('b');
    q.shutDown();
    expect(q.shuttingDown()).toBe(true);
    q.add('c');
    expect(q.len()).toBe(2);
    expect(await getItem(q)).toBe('a');
    expect(await getItem(q)).toBe('b');
    await expect(q.get()).resolves.toEqual({ item: undefined, shutdown: true });
  });

  it('shutDown wakes every waiting get with shutdown', async () => {
    const q = newQueue<string>();
    const ps = [q.get(), q.get(), q.get()];
    q.shutDown();
    for (const p of ps) await expect(p).resolves.toEqual({ item: undefined, shutdown: true });
  });

  it('a key re-added while processing is still queued at done after shutdown', async () => {
    const q = newQueue<string>();
    q.add('a');
    await getItem(q);
    q.add('a');
    q.shutDown();
    q.done('a');
    expect(await getItem(q)).toBe('a');
  });

  it('shutDownWithDrain resolves only after every in-flight item is done', async () => {
    const q = newQueue<string>();
    q.add('a');
    q.add('b');
    const a = await getItem(q);
    const b = await getItem(q);
    let drained = false;
    const p = q.shutDownWithDrain().then(() => {
      drained = true;
    });
    q.done(a);
    await Promise.resolve();
    await Promise.resolve();
    expect(drained).toBe(false);
    q.done(b);
    await p;
    expect(drained).toBe(true);
  });

  it('shutDownWithDrain resolves at once when nothing is in flight', async () => {
    const q = newQueue<string>();
    await q.shutDownWithDrain();
    expect(q.shuttingDown()).toBe(true);
  });

  it('done of an item not being processed is ignored', () => {
    const q = newQueue<string>();
    q.done('nope');
    q.add('a');
    q.done('a');
    expect(q.len()).toBe(1);
  });
});

describe('tryGet', () => {
  it('follows the same hand-out rules without waiting', () => {
    const q = newQueue<string>();
    expect(q.tryGet()).toBeUndefined();
    q.add('a');
    q.add('b');
    expect(q.tryGet()).toBe('a');
    q.add('a');
    expect(q.tryGet()).toBe('b');
    expect(q.tryGet()).toBeUndefined(); // 'a' is still being processed
    q.done('a');
    expect(q.tryGet()).toBe('a');
  });

  it('done of interleaved workers finishes the right keys (done skips the map look-up for the last one handed out)', () => {
    const q = newQueue<{ id: string; v: number }>({ keyFn: (o) => o.id });
    q.add({ id: 'x', v: 1 });
    q.add({ id: 'y', v: 1 });
    const x = q.tryGet();
    const y = q.tryGet(); // handed out last
    q.add({ id: 'x', v: 2 }); // re-added while processing: back in line at done
    q.done({ id: 'x', v: 0 }); // not the last one handed out: found by key
    expect(q.debugSizes()).toMatchObject({ processing: 1, queue: 1 });
    expect(q.tryGet()).toEqual({ id: 'x', v: 2 });
    q.done({ id: 'y', v: 0 });
    q.done({ id: 'y', v: 0 }); // twice: ignored
    q.done({ id: 'x', v: 0 });
    expect([x?.v, y?.v]).toEqual([1, 1]);
    expect(q.debugSizes()).toMatchObject({ keys: 0, dirty: 0, processing: 0, queue: 0 });
    q.add({ id: 'y', v: 3 }); // a finished key starts afresh (its entry may be reused for another key)
    q.add({ id: 'z', v: 3 });
    expect([q.tryGet()?.id, q.tryGet()?.id, q.tryGet()]).toEqual(['y', 'z', undefined]);
  });
});

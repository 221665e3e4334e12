import { describe, expect, it } from 'vitest';
import { listAll, listPages, pruneUnset } from '../src/entries/apiutil.js';
import { type Kind, type KubeObject, type ObjectList, StatusError } from '../src/index.js';

describe('pruneUnset (apply bodies)', () => {
  it('drops undefined and null at any depth and objects made only of them, keeps objects empty on purpose', () => {
    expect(
      pruneUnset({
        metadata: { name: 'a', creationTimestamp: null, labels: { x: undefined } },
        spec: { volumes: [{ name: 'v', emptyDir: {} }, null], replicas: 0, paused: false, s: '' },
        status: {},
      }),
    ).toEqual({
      metadata: { name: 'a' },
      spec: { volumes: [{ name: 'v', emptyDir: {} }], replicas: 0, paused: false, s: '' },
      status: {},
    });
  });
});

const K: Kind = { apiVersion: 'v1', kind: 'ConfigMap' };
const item = (n: number): KubeObject => ({ metadata: { name: `c${n}`, uid: `u${n}` } });
const expired = () =>
  new StatusError({
    kind: 'Status',
    code: 410,
    reason: 'Expired',
    message: 'The provided continue parameter is too old',
  });

/** A reader serving 5 items in pages; optionally expiring the continue token once. */
function fakeReader(expireOnce: boolean) {
  const calls: Array<{ limit?: number; continue?: string }> = [];
  let expiredAlready = false;
  return {
    calls,
    async list<T extends KubeObject>(_k: Kind<T>, o: { limit?: number; continue?: string } = {}) {
      calls.push({ limit: o.limit, continue: o.continue });
      const all = [0, 1, 2, 3, 4].map(item);
      if (o.continue && expireOnce && !expiredAlready) {
        expiredAlready = true;
        throw expired();
      }
      if (!o.limit) return { metadata: {}, items: all } as ObjectList<T>;
      const start = o.continue ? Number(o.continue) : 0;
      const end = start + o.limit;
      return {
        metadata: end < all.length ? { continue: String(end) } : {},
        items: all.slice(start, end),
      } as ObjectList<T>;
    },
  };
}

describe('listPages / listAll (client-go pager)', () => {
  it('follows continue tokens page by page', async () => {
    const r = fakeReader(false);
    const pages = [];
    for await (const p of listPages(r, K, { pageSize: 2 })) pages.push(p.items.length);
    expect(pages).toEqual([2, 2, 1]);
    expect(r.calls).toEqual([
      { limit: 2, continue: undefined },
      { limit: 2, continue: '2' },
      { limit: 2, continue: '4' },
    ]);
  });

  it('an expired continue token is answered by one full list; listAll yields each object once', async () => {
    const r = fakeReader(true);
    const names = [];
    for await (const o of listAll(r, K, { pageSize: 2 })) names.push(o.metadata?.name);
    expect(names).toEqual(['c0', 'c1', 'c2', 'c3', 'c4']);
    expect(r.calls.at(-1)).toEqual({ limit: undefined, continue: undefined });
  });

  it('listAll yields exactly one consistent snapshot: after an expired token, the full list alone (no object deleted or changed since the first page)', async () => {
    // the first page is read at RV 10; then c0 is deleted, c1 changed, c5 added (RV 11) and the token expires
    const at10 = [0, 1, 2, 3, 4].map((n) => ({
      metadata: { name: `c${n}`, uid: `u${n}`, resourceVersion: '10' },
    }));
    const at11 = [
      { metadata: { name: 'c1', uid: 'u1', resourceVersion: '11' } },
      ...[2, 3, 4, 5].map((n) => ({ metadata: { name: `c${n}`, uid: `u${n}`, resourceVersion: '10' } })),
    ];
    const r = {
      async list<T extends KubeObject>(_k: Kind<T>, o: { limit?: number; continue?: string } = {}) {
        if (o.continue) throw expired();
        if (!o.limit) return { metadata: { resourceVersion: '11' }, items: at11 } as ObjectList<T>;
        return {
          metadata: { resourceVersion: '10', continue: '2' },
          items: at10.slice(0, o.limit),
        } as ObjectList<T>;
      },
    };
    const got = [];
    for await (const o of listAll(r, K, { pageSize: 2 }))
      got.push(`${o.metadata?.name}@${o.metadata?.resourceVersion}`);
    expect(got).toEqual(['c1@11', 'c2@10', 'c3@10', 'c4@10', 'c5@10']);
    // listPages says what happened: the pages before a restarted one belong to an abandoned snapshot
    const pages = [];
    for await (const p of listPages(r, K, { pageSize: 2 }))
      pages.push({ n: p.items.length, restarted: p.restarted });
    expect(pages).toEqual([
      { n: 2, restarted: false },
      { n: 5, restarted: true },
    ]);
  });

  it('later pages carry only the continue token: resourceVersion and resourceVersionMatch go with the first page and the full list after an expired token', async () => {
    // kube-apiserver refuses a continue token with a resourceVersion ("specifying resource version is not
    // allowed when using continue") or a resourceVersionMatch; client-go's pager clears both on later pages.
    type Opts = {
      limit?: number;
      continue?: string;
      resourceVersion?: string;
      resourceVersionMatch?: string;
      labelSelector?: unknown;
    };
    const serve = (expireOnce: boolean) => {
      const calls: Opts[] = [];
      let expiredAlready = false;
      const all = [0, 1, 2, 3, 4].map(item);
      return {
        calls,
        async list<T extends KubeObject>(_k: Kind<T>, o: Opts = {}) {
          calls.push({ ...o });
          if (o.continue && ((o.resourceVersion && o.resourceVersion !== '0') || o.resourceVersionMatch))
            throw new StatusError({
              kind: 'Status',
              code: 422,
              reason: 'Invalid',
              message: 'specifying resource version is not allowed when using continue',
            });
          if (o.continue && expireOnce && !expiredAlready) {
            expiredAlready = true;
            throw expired();
          }
          if (!o.limit) return { metadata: { resourceVersion: '7' }, items: all } as ObjectList<T>;
          const start = o.continue ? Number(o.continue) : 0;
          const end = start + o.limit;
          return {
            metadata: { resourceVersion: '7', ...(end < all.length ? { continue: String(end) } : {}) },
            items: all.slice(start, end),
          } as ObjectList<T>;
        },
      };
    };
    for (const rv of [
      { resourceVersion: '7' },
      { resourceVersion: '7', resourceVersionMatch: 'NotOlderThan' as const },
      { resourceVersion: '0' },
    ]) {
      const r = serve(false);
      const names: unknown[] = [];
      for await (const o of listAll(r, K, { pageSize: 2, labelSelector: 'a=b', ...rv }))
        names.push(o.metadata?.name);
      expect(names).toEqual(['c0', 'c1', 'c2', 'c3', 'c4']);
      expect(r.calls).toEqual([
        { limit: 2, labelSelector: 'a=b', ...rv },
        { limit: 2, labelSelector: 'a=b', continue: '2' },
        { limit: 2, labelSelector: 'a=b', continue: '4' },
      ]);
      // an expired token: the full list is read at the requested resourceVersion (client-go FullListIfExpired)
      const e = serve(true);
      const pages = [];
      for await (const p of listPages(e, K, { pageSize: 2, labelSelector: 'a=b', ...rv }))
        pages.push({ n: p.items.length, restarted: p.restarted });
      expect(pages).toEqual([
        { n: 2, restarted: false },
        { n: 5, restarted: true },
      ]);
      expect(e.calls.at(-1)).toEqual({ labelSelector: 'a=b', ...rv });
    }
  });

  it('without fullListIfExpired the 410 is thrown; a bad pageSize is refused', async () => {
    const r = fakeReader(true);
    const it = listPages(r, K, { pageSize: 2, fullListIfExpired: false });
    await it.next();
    await expect(it.next()).rejects.toBeInstanceOf(StatusError);
    await expect(listPages(r, K, { pageSize: 0 }).next()).rejects.toBeInstanceOf(RangeError);
    // listAll yields nothing of a list it cannot finish
    const names: unknown[] = [];
    const err = await (async () => {
      for await (const o of listAll(fakeReader(true), K, { pageSize: 2, fullListIfExpired: false }))
        names.push(o.metadata?.name);
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StatusError);
    expect(names).toEqual([]);
  });
});

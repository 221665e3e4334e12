import { getEventListeners } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type KubeObject, type ObjectList, StatusError } from '@kubeloop/client';
import { WatchDecodeError } from '@kubeloop/client/errors';
import { onAbort } from '@kubeloop/core';
import { FakeClock } from '@kubeloop/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  INITIAL_EVENTS_END_ANNOTATION,
  type ListCallOptions,
  type ListerWatcher,
  Reflector,
  type ReflectorOptions,
  VeryShortWatchError,
  type WatchCallOptions,
} from '../src/index.js';
import { isTooLargeResourceVersionError } from '../src/watch-errors.js';
import {
  cm,
  expiredEvent,
  FakeServer,
  RecordingStore,
  statusError,
  warnRecordingLogger,
} from './support/fake-server.js';

const running: AbortController[] = [];
afterEach(() => {
  for (const ac of running.splice(0)) ac.abort();
});

function start(lw: ListerWatcher, opts: ReflectorOptions = {}) {
  const clock = new FakeClock();
  const store = new RecordingStore();
  const errors: unknown[] = [];
  const { logger, warns } = warnRecordingLogger();
  const r = new Reflector(lw, store, {
    clock,
    random: () => 0,
    logger,
    onWatchError: (e) => errors.push(e),
    ...opts,
  });
  const ac = new AbortController();
  running.push(ac);
  const done = r.run(ac.signal);
  /** Waits for `cond`, moving the fake clock so backoffs pass. */
  const until = (cond: () => boolean, stepMs = 0) =>
    vi.waitFor(
      () => {
        if (stepMs) clock.step(stepMs);
        if (!cond()) throw new Error('not yet');
      },
      { timeout: 5000, interval: 2 },
    );
  const stop = async () => {
    ac.abort();
    await done;
  };
  return { r, store, clock, errors, warns, ac, done, until, stop };
}

describe('Reflector: resourceVersion rules of the first list, relists and after a 410 (client-go reflector.list)', () => {
  it('first list asks resourceVersion=0 with limit=pageSize; the watch starts at the list RV with bookmarks and a timeout in [min, 2min)', async () => {
    const srv = new FakeServer(3);
    const t = start(srv, { random: () => 0.5 });
    await t.until(() => srv.watchCalls.length === 1);
    expect(srv.listCalls).toEqual([expect.objectContaining({ resourceVersion: '0', limit: 500 })]);
    expect(srv.watchCalls[0]).toMatchObject({
      resourceVersion: '4',
      allowWatchBookmarks: true,
      timeoutSeconds: 450,
    });
    expect(t.store.ops).toEqual(['replace 3@4']);
    await t.stop();
  });

  it('C38: a relist after a watch 410 at the last RV is not paginated, so it is answered "not older than" and reaches the latest state', async () => {
    const srv = new FakeServer(5);
    const t = start(srv);
    await t.until(() => srv.watchCalls.length === 1);
    const rvAtList = srv.watchCalls[0]!.resourceVersion; // '6'
    // Writes the watch never delivers (it is down), then an API server restart: the watch cache starts at the
    // current RV, so a watch from the informer's RV gets 410.
    srv.endWatches(new StatusError({ code: 500, reason: 'InternalError', message: 'x' } as never));
    srv.watchFaults.push({ error: Object.assign(new Error('reset'), { code: 'ECONNRESET' }) });
    srv.create('while-down');
    srv.restart();
    const fresh = srv.create('after-restart');
    await t.until(() => t.store.items.has('after-restart'), 1000);
    const relists = srv.listCalls.slice(1);
    // The relist asks for the last seen RV without a limit, gets the latest state, and one relist is enough.
    expect(relists[0]).toMatchObject({ resourceVersion: rvAtList });
    expect(relists[0]?.limit).toBeUndefined();
    expect(srv.listCalls.length).toBeLessThanOrEqual(3);
    expect(t.store.items.get('while-down')).toBeDefined();
    expect(t.store.items.get('after-restart')?.metadata?.resourceVersion).toBe(
      fresh.metadata?.resourceVersion,
    );
    await t.stop();
  });

  it('C38 (the fault itself): a paginated relist at the last RV reads the old snapshot again and the informer never catches up', async () => {
    // Guard that the fake server models the real one: the request the old reflector made returns old data.
    const srv = new FakeServer(2);
    srv.create('later');
    const old = await srv.list({ signal: new AbortController().signal, resourceVersion: '3', limit: 500 });
    expect(old.metadata.resourceVersion).toBe('3');
    expect(old.items.map((o) => o.metadata?.name)).toEqual(['cm-0', 'cm-1']);
    const latest = await srv.list({ signal: new AbortController().signal, resourceVersion: '3' });
    expect(latest.items.map((o) => o.metadata?.name)).toEqual(['cm-0', 'cm-1', 'later']);
  });

  it('keeps paging relists when the first resourceVersion=0 list came back paginated (watch cache off)', async () => {
    const srv = new FakeServer(5);
    srv.watchCache = false;
    srv.watchFaults.push({ events: [expiredEvent] });
    const t = start(srv, { pageSize: 2 });
    await t.until(() => srv.watchCalls.length === 2, 1000);
    const firstPages = srv.listCalls.filter((c) => c.resourceVersion === '0');
    expect(firstPages).toHaveLength(1);
    const relist = srv.listCalls.find(
      (c, i) => i > 0 && c.resourceVersion !== undefined && c.resourceVersion !== '0',
    );
    expect(relist).toMatchObject({ resourceVersion: '6', limit: 2 });
    await t.stop();
  });

  it('an unpaginated first list leaves relists unpaged even after an RV="" list came back paged', async () => {
    const srv = new FakeServer(5);
    srv.watchFaults.push({ events: [expiredEvent] }, { events: [expiredEvent] });
    const t = start(srv, { pageSize: 2 });
    await t.until(() => srv.watchCalls.length === 3, 1000);
    const relists = srv.listCalls.filter((c) => c.resourceVersion && c.resourceVersion !== '0');
    expect(relists.length).toBeGreaterThanOrEqual(2);
    expect(relists.every((c) => c.limit === undefined)).toBe(true);
    await t.stop();
  });

  it('a list refused with 410 Expired is retried at once (no backoff) with resourceVersion=""', async () => {
    const srv = new FakeServer(2);
    srv.listFaults.push(statusError(410, 'Expired', 'too old'));
    const t = start(srv);
    // No clock step: the retry must not wait for a backoff.
    await t.until(() => srv.watchCalls.length === 1);
    expect(srv.listCalls.map((c) => [c.resourceVersion, c.limit])).toEqual([
      ['0', 500],
      ['', 500],
    ]);
    expect(t.store.replaced).toBe(1);
    await t.stop();
  });

  it('a relist at an RV the server has not reached (504 too large) falls back to resourceVersion=""', async () => {
    const srv = new FakeServer(2);
    srv.watchFaults.push({
      events: [
        { type: 'BOOKMARK', object: { metadata: { resourceVersion: '99' } } as KubeObject },
        expiredEvent,
      ],
    });
    const t = start(srv);
    await t.until(() => srv.watchCalls.length === 2, 1000);
    expect(srv.listCalls.map((c) => c.resourceVersion)).toEqual(['0', '99', '']);
    expect(isTooLargeResourceVersionError(statusError(504, 'Timeout', 'Too large resource version: 9'))).toBe(
      true,
    );
    expect(isTooLargeResourceVersionError(statusError(504, 'Timeout', 'etcd slow'))).toBe(false);
    expect(srv.watchCalls[1]?.resourceVersion).toBe(String(srv.rv));
    await t.stop();
  });

  it('an expired continue token gives one full unpaged list at resourceVersion="" (client-go FullListIfExpired)', async () => {
    const srv = new FakeServer(5);
    srv.watchCache = false;
    let pages = 0;
    const lw: ListerWatcher = {
      list: async (o: ListCallOptions) => {
        if (o.continue && pages++ >= 1) {
          srv.listCalls.push({ ...o });
          throw statusError(410, 'Expired', 'continue too old');
        }
        return srv.list(o);
      },
      watch: (o: WatchCallOptions) => srv.watch(o),
    };
    const t = start(lw, { pageSize: 2 });
    await t.until(() => srv.watchCalls.length === 1);
    const last = srv.listCalls.at(-1)!;
    expect(last.resourceVersion).toBe('');
    expect(last.limit).toBeUndefined();
    expect(last.continue).toBeUndefined();
    expect(t.store.ops).toEqual(['replace 5@6']);
    await t.stop();
  });

  it('after a 410 ERROR event the relist starts at the last seen RV (not "")', async () => {
    const srv = new FakeServer(9);
    srv.watchFaults.push({ events: [{ type: 'ADDED', object: cm('x', 7) }, expiredEvent] });
    const t = start(srv);
    await t.until(() => srv.listCalls.length >= 2, 1000);
    expect(srv.listCalls[1]?.resourceVersion).toBe('7');
    await t.stop();
  });
});

describe('Reflector: watch endings', () => {
  it('a clean end re-watches from the last RV without a relist; bookmarks advance the RV', async () => {
    const srv = new FakeServer(1);
    srv.watchFaults.push({
      events: [
        { type: 'ADDED', object: cm('a', 5) },
        { type: 'BOOKMARK', object: { metadata: { resourceVersion: '9' } } as KubeObject },
      ],
    });
    const t = start(srv);
    await t.until(() => srv.watchCalls.length === 2);
    expect(srv.listCalls).toHaveLength(1);
    expect(srv.watchCalls.map((w) => w.resourceVersion)).toEqual(['2', '9']);
    expect(t.store.ops).toEqual(['replace 1@2', 'add a@5', 'bookmark 9']);
    expect(t.r.lastSyncResourceVersion).toBe('9');
    await t.stop();
  });

  it('a watch that closes at once without events is a VeryShortWatchError: backoff, then relist', async () => {
    const srv = new FakeServer(1);
    srv.watchFaults.push({ events: [] });
    const t = start(srv);
    await t.until(() => srv.listCalls.length === 2, 1000);
    expect(t.errors[0]).toBeInstanceOf(VeryShortWatchError);
    expect((t.errors[0] as VeryShortWatchError).code).toBe('ERR_VERY_SHORT_WATCH');
    await t.stop();
  });

  it('an empty watch that lasted longer than 1 s is a normal end (re-watch, no relist)', async () => {
    let calls = 0;
    const srv = new FakeServer(1);
    const lw: ListerWatcher = {
      list: (o) => srv.list(o),
      watch: (o) =>
        (async function* () {
          calls++;
          if (calls === 1) {
            clockRef.step(1500);
            return;
          }
          yield* srv.watch(o);
        })(),
    };
    const clockRef = new FakeClock();
    const store = new RecordingStore();
    const r = new Reflector(lw, store, { clock: clockRef });
    const ac = new AbortController();
    running.push(ac);
    const done = r.run(ac.signal);
    await vi.waitFor(() => expect(calls).toBe(2));
    expect(srv.listCalls).toHaveLength(1);
    ac.abort();
    await done;
  });

  it('429 on the watch re-watches from the same RV without a relist, no earlier than Retry-After', async () => {
    const srv = new FakeServer(1);
    srv.watchFaults.push({
      error: statusError(429, 'TooManyRequests', 'slow down', { details: { retryAfterSeconds: 7 } }),
    });
    const t = start(srv);
    await t.until(() => srv.watchCalls.length === 1);
    await new Promise((r) => setTimeout(r, 10));
    t.clock.step(5000); // backoff (800 ms) passed, Retry-After (7 s) not
    await new Promise((r) => setTimeout(r, 10));
    expect(srv.watchCalls).toHaveLength(1);
    t.clock.step(2500);
    await t.until(() => srv.watchCalls.length === 2);
    expect(srv.listCalls).toHaveLength(1);
    expect(srv.watchCalls[1]?.resourceVersion).toBe(srv.watchCalls[0]?.resourceVersion);
    await t.stop();
  });

  it('a connection reset re-watches without a relist', async () => {
    const srv = new FakeServer(1);
    srv.watchFaults.push({ error: Object.assign(new Error('reset'), { code: 'ECONNRESET' }) });
    const t = start(srv);
    await t.until(() => srv.watchCalls.length === 2, 1000);
    expect(srv.listCalls).toHaveLength(1);
    await t.stop();
  });

  it('a decode error after good events resumes from the last good RV; one before any event relists', async () => {
    const srv = new FakeServer(9);
    srv.watchFaults.push(
      { events: [{ type: 'ADDED', object: cm('a', 5) }], error: new WatchDecodeError('bad line') },
      { error: new WatchDecodeError('bad line') },
    );
    const t = start(srv);
    await t.until(() => srv.watchCalls.length === 3, 1000);
    expect(srv.watchCalls.map((w) => w.resourceVersion).slice(0, 2)).toEqual(['10', '5']);
    expect(srv.listCalls.length).toBe(2);
    await t.stop();
  });

  it('any other watch error (500) backs off and relists; errors reach onWatchError and the log whole', async () => {
    const srv = new FakeServer(1);
    const boom = statusError(500, 'InternalError', 'boom');
    srv.watchFaults.push({ error: boom });
    const t = start(srv);
    await t.until(() => srv.listCalls.length === 2, 1000);
    expect(t.errors).toContain(boom);
    expect(t.warns.find((w) => w.err === boom)).toMatchObject({ code: 500, reason: 'InternalError' });
    await t.stop();
  });

  it('an abort during a list ends run() promptly with no further requests', async () => {
    let release!: () => void;
    const lw: ListerWatcher = {
      list: (o) =>
        new Promise<ObjectList>((_, reject) => {
          release = () => reject(new Error('aborted'));
          onAbort(o.signal, () => release());
        }),
      watch: () => {
        throw new Error('no watch expected');
      },
    };
    const t = start(lw);
    await vi.waitFor(() => expect(release).toBeDefined());
    await t.stop();
  });

  it('refuses a page size that is not a positive integer (0 would silently mean unpaged)', () => {
    expect(() => new Reflector(new FakeServer(), new RecordingStore(), { pageSize: 0 })).toThrow(RangeError);
    expect(() => new Reflector(new FakeServer(), new RecordingStore(), { pageSize: 1.5 })).toThrow(
      /pageSize/,
    );
  });
});

describe('Reflector: abort listeners', () => {
  it('40 reflectors sharing one signal put one listener on it, whatever their requests and waits', async () => {
    const ac = new AbortController();
    running.push(ac);
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const servers = Array.from({ length: 40 }, () => new FakeServer(1));
      // Half of them fail their watch and sit in a backoff wait (a listener on their signal while waiting).
      for (const s of servers.slice(0, 20))
        s.watchFaults.push({ error: statusError(500, 'InternalError', 'x') });
      const runs = servers.map((s) =>
        new Reflector(s, new RecordingStore(), { clock: new FakeClock() }).run(ac.signal),
      );
      await vi.waitFor(() => expect(servers.every((s) => s.watchCalls.length >= 1)).toBe(true));
      expect(getEventListeners(ac.signal, 'abort').length).toBeLessThanOrEqual(1);
      ac.abort();
      await Promise.all(runs);
      await new Promise((r) => setImmediate(r));
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });
});

describe('Reflector: lists of any size', () => {
  it('no source file of the cache spreads an array into push() (a stack overflow past ~125k items on Node 20)', () => {
    const dir = fileURLToPath(new URL('../src/', import.meta.url));
    const offenders: string[] = [];
    for (const f of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
      if (!f.endsWith('.ts')) continue;
      const text = readFileSync(join(dir, f), 'utf8');
      if (/\.(push|unshift|splice)\([^)]*\.\.\./.test(text)) offenders.push(f);
    }
    expect(offenders).toEqual([]);
  });

  it('stores a 200k-item list page without overflowing the call stack (no push(...items))', async () => {
    const items: KubeObject[] = new Array(200_000);
    for (let i = 0; i < items.length; i++) items[i] = { metadata: { name: `o${i}`, resourceVersion: '1' } };
    let got = 0;
    const lw: ListerWatcher = {
      list: async () => ({ metadata: { resourceVersion: '5' }, items }),
      watch: (o) =>
        (async function* () {
          await new Promise<void>((r) => onAbort(o.signal, () => r()));
        })(),
    };
    const r = new Reflector(lw, {
      replace: (list) => {
        got = list.length;
      },
      add() {},
      update() {},
      delete() {},
    });
    const ac = new AbortController();
    running.push(ac);
    const done = r.run(ac.signal);
    await vi.waitFor(() => expect(got).toBe(200_000));
    ac.abort();
    await done;
  });

  it('stores 200k items that came in pages', async () => {
    const srvItems = Array.from({ length: 200_000 }, (_, i) => ({
      metadata: { name: `o${i}`, resourceVersion: '1' },
    }));
    let got = 0;
    const lw: ListerWatcher = {
      list: async (o) => {
        const off = Number(o.continue ?? 0);
        const end = Math.min(srvItems.length, off + (o.limit ?? srvItems.length));
        return {
          metadata: { resourceVersion: '5', ...(end < srvItems.length ? { continue: String(end) } : {}) },
          items: srvItems.slice(off, end),
        };
      },
      watch: (o) =>
        (async function* () {
          await new Promise<void>((r) => onAbort(o.signal, () => r()));
        })(),
    };
    const r = new Reflector(
      lw,
      {
        replace: (l) => {
          got = l.length;
        },
        add() {},
        update() {},
        delete() {},
      },
      { pageSize: 50_000 },
    );
    const ac = new AbortController();
    running.push(ac);
    const done = r.run(ac.signal);
    await vi.waitFor(() => expect(got).toBe(200_000));
    ac.abort();
    await done;
  });
});

describe('Reflector: WatchList (streaming initial sync, C04)', () => {
  it('asks sendInitialEvents with NotOlderThan, replaces the store on the end bookmark and keeps the same watch', async () => {
    const srv = new FakeServer(3);
    const t = start(srv, { useWatchList: true });
    await t.until(() => t.store.replaced === 1);
    expect(srv.listCalls).toHaveLength(0);
    expect(srv.watchCalls[0]).toMatchObject({
      sendInitialEvents: true,
      resourceVersionMatch: 'NotOlderThan',
      allowWatchBookmarks: true,
      resourceVersion: '',
    });
    srv.create('later');
    await t.until(() => t.store.items.has('later'));
    expect(srv.watchCalls).toHaveLength(1);
    expect(t.store.ops).toEqual(['replace 3@4', 'add later@5']);
    await t.stop();
  });

  it('counts the streaming list as a watch request (onWatchStart), and the plain watch after a fallback too', async () => {
    const served = new FakeServer(1);
    let starts = 0;
    const t = start(served, { useWatchList: true, onWatchStart: () => starts++ });
    await t.until(() => t.store.replaced === 1);
    // One request: the streaming list, whose watch goes on.
    expect(starts).toBe(1);
    expect(served.watchCalls).toHaveLength(1);
    await t.stop();

    const refusing = new FakeServer(1);
    refusing.watchFaults.push({ error: statusError(500, 'InternalError', 'etcd') });
    let refusedStarts = 0;
    const u = start(refusing, { useWatchList: true, onWatchStart: () => refusedStarts++ });
    await u.until(() => u.store.replaced === 1 && refusing.watchCalls.length === 2);
    // The refused streaming list and the plain watch after the list: two watch requests.
    expect(refusedStarts).toBe(2);
    await u.stop();
  });

  it('falls back to list + watch (logged once) when the end bookmark does not come in time', async () => {
    const srv = new FakeServer(2);
    // The server sends the initial events but never the end bookmark, and keeps the stream open.
    const lw: ListerWatcher = {
      list: (o) => srv.list(o),
      watch: (o) =>
        o.sendInitialEvents
          ? (async function* () {
              yield { type: 'ADDED' as const, object: cm('cm-0', 2) };
              await new Promise<void>((r) => onAbort(o.signal, () => r()));
            })()
          : srv.watch(o),
    };
    const t = start(lw, { useWatchList: true, watchListTimeoutMs: 10_000 });
    await new Promise((r) => setTimeout(r, 10));
    expect(t.store.replaced).toBe(0);
    t.clock.step(10_000);
    await t.until(() => t.store.replaced === 1 && srv.watchCalls.length === 1);
    expect(srv.listCalls).toHaveLength(1);
    expect(t.warns.filter((w) => String(w.msg).includes('end bookmark'))).toHaveLength(1);
    await t.stop();
  });

  it('falls back at once when the server refuses the streaming list (400)', async () => {
    const srv = new FakeServer(2);
    srv.watchFaults.push({ error: statusError(400, 'BadRequest', 'sendInitialEvents is not supported') });
    const t = start(srv, { useWatchList: true });
    await t.until(() => t.store.replaced === 1);
    expect(srv.listCalls).toHaveLength(1);
    expect(srv.watchCalls.at(-1)?.sendInitialEvents).toBeUndefined();
    await t.stop();
  });
  it('applies a MODIFIED or DELETED that comes before the end bookmark to the initial list it is building', async () => {
    const srv = new FakeServer(0);
    const end = {
      type: 'BOOKMARK' as const,
      object: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { resourceVersion: '9', annotations: { [INITIAL_EVENTS_END_ANNOTATION]: 'true' } },
      },
    };
    srv.watchFaults.push({
      events: [
        { type: 'ADDED', object: cm('a', 2) },
        { type: 'ADDED', object: cm('b', 3) },
        { type: 'MODIFIED', object: cm('a', 4, { v: '2' }) },
        { type: 'DELETED', object: cm('b', 5) },
        { type: 'MODIFIED', object: cm('c', 6) },
        { type: 'BOOKMARK', object: { ...end.object, metadata: { resourceVersion: '7' } } },
        end,
      ],
      end: true,
    });
    const t = start(srv, { useWatchList: true });
    await t.until(() => t.store.replaced === 1);
    expect([...t.store.items.keys()].sort()).toEqual(['a', 'c']);
    expect(t.store.items.get('a')?.metadata?.resourceVersion).toBe('4');
    expect(t.store.ops[0]).toBe('replace 2@9');
    await t.stop();
  });

  it('a streaming list refused with 410 is retried from the most recent state (resourceVersion "") after a backoff', async () => {
    const srv = new FakeServer(2);
    srv.watchFaults.push({ error: statusError(410, 'Expired', 'too old resource version') });
    const t = start(srv, { useWatchList: true });
    await t.until(() => t.store.replaced === 1, 1000);
    expect(srv.watchCalls.length).toBeGreaterThanOrEqual(2);
    expect(srv.watchCalls[1]).toMatchObject({ sendInitialEvents: true, resourceVersion: '' });
    expect(srv.listCalls).toHaveLength(0);
    expect(t.errors.length).toBeGreaterThanOrEqual(1);
    await t.stop();
  });
});

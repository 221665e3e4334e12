import type { KubeObject, WatchEvent } from '@kubeloop/client';
import { WatchDecodeError } from '@kubeloop/client/errors';
import { onAbort } from '@kubeloop/core';
import { FakeClock } from '@kubeloop/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type ListerWatcher,
  Reflector,
  type ReflectorOptions,
  type WatchCallOptions,
  WatchListSupport,
} from '../src/index.js';
import { cm, FakeServer, RecordingStore, statusError } from './support/fake-server.js';

// C43: a server may refuse a streaming list (WatchList) in many ways; the reflector must list + watch instead, in
// the same attempt, whatever the way (client-go reflector.go ListAndWatchWithContext falls back on any watchList
// error but its retriable ones), and must not keep trying WatchList on that server.

const running: AbortController[] = [];
afterEach(() => {
  for (const ac of running.splice(0)) ac.abort();
});

interface Logged {
  level: string;
  msg: string;
  fields: Record<string, unknown>;
}

function recordingLogger() {
  const records: Logged[] = [];
  const at =
    (level: string) =>
    (fields: Record<string, unknown>, msg: string): void => {
      records.push({ level, msg, fields });
    };
  const logger = {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: () => logger,
  };
  return { logger, records };
}

type Refusal = (o: WatchCallOptions) => AsyncIterable<WatchEvent>;

/** A server that answers every streaming-list watch with `refuse` and serves plain lists and watches. */
function refusingServer(srv: FakeServer, refuse: Refusal): ListerWatcher & { streamCalls: () => number } {
  let streams = 0;
  return {
    list: (o) => srv.list(o),
    watch: (o) => {
      if (!o.sendInitialEvents) return srv.watch(o);
      streams++;
      return refuse(o);
    },
    streamCalls: () => streams,
  };
}

const failWith =
  (err: unknown): Refusal =>
  () => ({
    [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(err) }),
  });

function start(lw: ListerWatcher, opts: ReflectorOptions = {}) {
  const clock = (opts.clock as FakeClock | undefined) ?? new FakeClock();
  const store = new RecordingStore();
  const { logger, records } = recordingLogger();
  const r = new Reflector(lw, store, { clock, random: () => 0, logger, useWatchList: true, ...opts });
  const ac = new AbortController();
  running.push(ac);
  const done = r.run(ac.signal);
  const until = (cond: () => boolean, stepMs = 0) =>
    vi.waitFor(
      () => {
        if (stepMs) clock.step(stepMs);
        if (!cond()) throw new Error('not yet');
      },
      { timeout: 5000, interval: 2 },
    );
  return {
    r,
    store,
    clock,
    records,
    until,
    stop: async () => {
      ac.abort();
      await done;
    },
  };
}

const endBookmarkless: Refusal = async function* () {
  yield { type: 'ADDED', object: cm('cm-0', 2) };
};

/** The ERROR event a kube-apiserver 1.32 on etcd 3.4 sends to every streaming list (its storage lacks progress notify). */
const STORAGE_REFUSAL = statusError(
  500,
  'InternalError',
  'a watch stream was requested by the client but the required storage feature RequestWatchProgress is disabled',
);

const errorEvent = (err: ReturnType<typeof statusError>): Refusal =>
  async function* () {
    yield { type: 'ERROR', object: err.status as unknown as KubeObject } as WatchEvent;
  };

// Answers that say the server does not serve streaming lists: a plain list + watch of the same resource would not
// get them. They are remembered for the server.
const refusals: Array<[string, () => Refusal]> = [
  [
    'an ERROR event 500 "RequestWatchProgress is disabled" (kube-apiserver 1.32 on etcd 3.4)',
    () => errorEvent(STORAGE_REFUSAL),
  ],
  ['the same 500 as an HTTP status', () => failWith(STORAGE_REFUSAL)],
  [
    '422 Invalid: sendInitialEvents forbidden (the WatchList feature gate off)',
    () =>
      failWith(
        statusError(
          422,
          'Invalid',
          'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled',
          { details: { causes: [{ reason: 'FieldValueForbidden', field: 'sendInitialEvents' }] } },
        ),
      ),
  ],
  [
    '422 Invalid: resourceVersionMatch forbidden for watch (a server older than 1.27)',
    () =>
      failWith(
        statusError(
          422,
          'Invalid',
          'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch',
        ),
      ),
  ],
  [
    '400 BadRequest naming sendInitialEvents',
    () => failWith(statusError(400, 'BadRequest', 'sendInitialEvents is not supported')),
  ],
];

// Answers that say this request failed and nothing about streaming lists: a plain list would get them as well (the
// resource is gone, the client is not allowed, the server is overloaded or failing), or any request could.
const failures: Array<[string, () => Refusal]> = [
  [
    '500 InternalError (any other message)',
    () => failWith(statusError(500, 'InternalError', 'etcdserver: request timed out')),
  ],
  ['502 BadGateway', () => failWith(statusError(502, 'BadGateway', 'x'))],
  ['503 ServiceUnavailable', () => failWith(statusError(503, 'ServiceUnavailable', 'x'))],
  ['504 Timeout', () => failWith(statusError(504, 'Timeout', 'x'))],
  [
    '400 BadRequest of something else',
    () => failWith(statusError(400, 'BadRequest', 'field label not supported: spec.x')),
  ],
  ['401 Unauthorized', () => failWith(statusError(401, 'Unauthorized', 'x'))],
  ['403 Forbidden', () => failWith(statusError(403, 'Forbidden', 'x'))],
  ['404 NotFound (the resource is not served)', () => failWith(statusError(404, 'NotFound', 'x'))],
  ['405 MethodNotAllowed', () => failWith(statusError(405, 'MethodNotAllowed', 'x'))],
  [
    '422 Invalid of something else',
    () => failWith(statusError(422, 'Invalid', 'labelSelector: Invalid value')),
  ],
  ['an ERROR event with any other 500', () => errorEvent(statusError(500, 'InternalError', 'x'))],
  ['a stream that ends before the end bookmark', () => endBookmarkless],
  [
    'a stream that breaks before the end bookmark',
    () =>
      async function* () {
        yield { type: 'ADDED', object: cm('cm-0', 2) };
        throw new WatchDecodeError('unexpected end of JSON');
      },
  ],
  ['a non-Status error', () => failWith(new TypeError('boom'))],
];

const streamingWarns = (records: Logged[]) =>
  records.filter((r) => r.level === 'warn' && /streaming list/.test(r.msg));

describe('Reflector: WatchList refused or failed falls back to list + watch in the same attempt (C43)', () => {
  it.each(refusals)(
    'a refusal, %s: lists at once, no backoff, syncs, logs once at warn, is remembered',
    async (_, refusal) => {
      const srv = new FakeServer(3);
      const lw = refusingServer(srv, refusal());
      const clock = new FakeClock();
      const support = new WatchListSupport({ clock });
      const t = start(lw, { clock, watchListSupport: support });
      // No clock step: the fallback happens within the attempt, without waiting a backoff.
      await t.until(() => t.store.replaced === 1 && srv.watchCalls.length === 1);
      expect(srv.listCalls).toHaveLength(1);
      expect(t.store.ops[0]).toBe('replace 3@4');
      expect(lw.streamCalls()).toBe(1);
      expect(streamingWarns(t.records)).toHaveLength(1);
      expect(support.shouldTry()).toBe(false);
      await t.stop();
    },
  );

  it.each(failures)(
    'a failed request, %s: lists at once, no backoff, syncs, is not remembered, and the next relist streams again',
    async (_, failure) => {
      const srv = new FakeServer(3);
      let fail = true;
      const lw: ListerWatcher & { streams: number } = {
        streams: 0,
        list: (o) => srv.list(o),
        watch(o) {
          if (!o.sendInitialEvents) return srv.watch(o);
          this.streams++;
          return fail ? failure()(o) : srv.watch(o);
        },
      };
      const clock = new FakeClock();
      const support = new WatchListSupport({ clock });
      const t = start(lw, { clock, watchListSupport: support });
      await t.until(() => t.store.replaced === 1 && srv.live.length === 1);
      expect(srv.listCalls).toHaveLength(1);
      expect(t.store.ops[0]).toBe('replace 3@4');
      expect(lw.streams).toBe(1);
      // Nothing said about the server: no warning about streaming lists, nothing remembered.
      expect(streamingWarns(t.records)).toEqual([]);
      expect(support.shouldTry()).toBe(true);
      // The next relist (the watch expires) streams, without a list and without waiting a re-probe interval.
      fail = false;
      srv.endWatches(statusError(410, 'Expired', 'too old resource version'));
      await t.until(() => lw.streams === 2 && t.store.replaced === 2, 1000);
      expect(srv.listCalls).toHaveLength(1);
      await t.stop();
    },
  );

  it('a resource that is not served (404 to the streaming list and to the list) backs off and retries; served again, the next attempt streams, and the record still lets other reflectors stream', async () => {
    const srv = new FakeServer(2);
    let gone = true;
    const notFound = () => statusError(404, 'NotFound', 'the server could not find the requested resource');
    const lw: ListerWatcher & { streams: number; lists: number } = {
      streams: 0,
      lists: 0,
      list(o) {
        this.lists++;
        return gone ? Promise.reject(notFound()) : srv.list(o);
      },
      watch(o) {
        if (!o.sendInitialEvents) return srv.watch(o);
        this.streams++;
        return gone ? failWith(notFound())(o) : srv.watch(o);
      },
    };
    const clock = new FakeClock();
    const support = new WatchListSupport({ clock });
    const t = start(lw, { clock, watchListSupport: support });
    // Each attempt: the streaming list 404s, the list 404s (reported), a backoff, then WatchList again.
    await t.until(() => lw.streams >= 3 && lw.lists >= 3, 1000);
    expect(t.store.replaced).toBe(0);
    expect(support.shouldTry()).toBe(true);
    expect(streamingWarns(t.records)).toEqual([]);
    // The resource comes back (its CRD re-created): the next attempt syncs by WatchList, no list.
    gone = false;
    const [streams, lists] = [lw.streams, lw.lists];
    await t.until(() => t.store.replaced === 1, 1000);
    expect(lw.streams).toBe(streams + 1);
    expect(lw.lists).toBe(lists);
    // Another reflector on the same record streams too.
    const other = start(srv, { clock, watchListSupport: support });
    await other.until(() => other.store.replaced === 1);
    expect(srv.listCalls).toHaveLength(0);
    await other.stop();
    await t.stop();
  });

  it('a streaming list that shows no end bookmark within watchListTimeoutMs (a server ignoring the parameter) falls back', async () => {
    const srv = new FakeServer(2);
    const lw = refusingServer(srv, (o) =>
      (async function* () {
        await new Promise<void>((r) => onAbort(o.signal, () => r()));
      })(),
    );
    const t = start(lw, { watchListTimeoutMs: 5000 });
    await t.until(() => lw.streamCalls() === 1);
    expect(t.store.replaced).toBe(0);
    t.clock.step(5000);
    await t.until(() => t.store.replaced === 1);
    expect(srv.listCalls).toHaveLength(1);
    await t.stop();
  });

  it('the refusal is remembered: relists use list + watch until the re-probe interval, then WatchList is tried again', async () => {
    const srv = new FakeServer(2);
    let refuse = true;
    const lw: ListerWatcher & { streams: number } = {
      streams: 0,
      list: (o) => srv.list(o),
      watch(o) {
        if (!o.sendInitialEvents) return srv.watch(o);
        this.streams++;
        return refuse ? failWith(STORAGE_REFUSAL)(o) : srv.watch(o);
      },
    };
    const clock = new FakeClock();
    const sharedClockSupport = new WatchListSupport({ reprobeIntervalMs: 600_000, clock });
    const t = start(lw, { clock, watchListSupport: sharedClockSupport });
    await t.until(() => t.store.replaced === 1 && srv.watchCalls.length === 1);
    // Three forced relists (the watch ends with 410) within the interval: no streaming list is tried.
    for (let i = 0; i < 3; i++) {
      const lists = srv.listCalls.length;
      srv.endWatches(statusError(410, 'Expired', 'too old resource version'));
      await t.until(() => srv.listCalls.length > lists && srv.live.length === 1, 1000);
    }
    expect(lw.streams).toBe(1);
    expect(sharedClockSupport.shouldTry()).toBe(false);
    // The server learns to serve it; after the re-probe interval the next relist streams again.
    refuse = false;
    clock.step(600_000);
    const lists = srv.listCalls.length;
    srv.endWatches(statusError(410, 'Expired', 'too old resource version'));
    await t.until(() => lw.streams === 2 && t.store.replaced === 5, 1000);
    expect(srv.listCalls.length).toBe(lists);
    // Logged at warn once for this reflector, however many fallbacks.
    expect(t.records.filter((r) => r.level === 'warn' && /streaming list/.test(r.msg))).toHaveLength(1);
    await t.stop();
  });

  it('one refusal is shared: a second reflector on the same record does not try WatchList', async () => {
    const srv = new FakeServer(2);
    const clock = new FakeClock();
    const support = new WatchListSupport({ clock });
    const lw = refusingServer(srv, failWith(STORAGE_REFUSAL));
    const a = start(lw, { clock, watchListSupport: support });
    await a.until(() => a.store.replaced === 1);
    const b = start(lw, { clock, watchListSupport: support });
    await b.until(() => b.store.replaced === 1);
    expect(lw.streamCalls()).toBe(1);
    await a.stop();
    await b.stop();
  });

  it.each([
    ['429', () => statusError(429, 'TooManyRequests', 'slow down')],
    [
      'a refused connection',
      () => Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
    ],
  ])(
    '%s is retriable (client-go isWatchErrorRetriable): backoff, then WatchList again, nothing remembered',
    async (_, err) => {
      const srv = new FakeServer(2);
      let failures = 1;
      const lw: ListerWatcher & { streams: number } = {
        streams: 0,
        list: (o) => srv.list(o),
        watch(o) {
          if (!o.sendInitialEvents) return srv.watch(o);
          this.streams++;
          return failures-- > 0 ? failWith(err())(o) : srv.watch(o);
        },
      };
      const t = start(lw);
      await t.until(() => t.store.replaced === 1, 1000);
      expect(lw.streams).toBe(2);
      expect(srv.listCalls).toHaveLength(0);
      await t.stop();
    },
  );
});

/** A streaming list that sends one initial event, then loses its connection (no end bookmark). */
const resetAfterOneEvent: Refusal = async function* () {
  yield { type: 'ADDED', object: cm('cm-0', 2) };
  throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
};

describe('Reflector: a streaming list cut by a connection reset is retried a bounded number of times, then falls back', () => {
  it('a server that resets every streaming list: watchListResetLimit attempts (each after a backoff), then list + watch, remembered', async () => {
    const srv = new FakeServer(3);
    const lw = refusingServer(srv, resetAfterOneEvent);
    const clock = new FakeClock();
    const support = new WatchListSupport({ clock });
    const t = start(lw, { clock, watchListSupport: support, watchListResetLimit: 3 });
    // Each reset is retried after a backoff step (client-go backs off before a retriable watchList error).
    await t.until(() => t.store.replaced === 1 && srv.watchCalls.length === 1, 1000);
    expect(lw.streamCalls()).toBe(3);
    expect(srv.listCalls).toHaveLength(1);
    expect(t.store.ops[0]).toBe('replace 3@4');
    // The third reset is a refusal: remembered for the server, told once at warn.
    expect(support.shouldTry()).toBe(false);
    const warns = t.records.filter((r) => r.level === 'warn' && /streaming list/.test(r.msg));
    expect(warns).toHaveLength(1);
    await t.stop();
  });

  it('watchListResetLimit 1: the first reset falls back in the same attempt, without a backoff', async () => {
    const srv = new FakeServer(2);
    const lw = refusingServer(srv, resetAfterOneEvent);
    const t = start(lw, { watchListResetLimit: 1 });
    await t.until(() => t.store.replaced === 1 && srv.watchCalls.length === 1);
    expect(lw.streamCalls()).toBe(1);
    await t.stop();
  });

  it('resets below the limit are retried: a stream served after two resets syncs by WatchList, no list', async () => {
    const srv = new FakeServer(2);
    let resets = 2;
    const lw: ListerWatcher & { streams: number } = {
      streams: 0,
      list: (o) => srv.list(o),
      watch(o) {
        if (!o.sendInitialEvents) return srv.watch(o);
        this.streams++;
        return resets-- > 0 ? resetAfterOneEvent(o) : srv.watch(o);
      },
    };
    const t = start(lw, { watchListResetLimit: 3 });
    await t.until(() => t.store.replaced === 1, 1000);
    expect(lw.streams).toBe(3);
    expect(srv.listCalls).toHaveLength(0);
    await t.stop();
  });

  it('a refused connection (no server listening) is not a reset: retried past the limit, WatchList kept', async () => {
    const srv = new FakeServer(2);
    let refused = 5;
    const lw: ListerWatcher & { streams: number } = {
      streams: 0,
      list: (o) => srv.list(o),
      watch(o) {
        if (!o.sendInitialEvents) return srv.watch(o);
        this.streams++;
        if (refused-- > 0) {
          // As the transport reports it: a ConnectionFailed whose cause is the refused connect.
          const cause = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
          return failWith(
            Object.assign(new Error('GET x: connect ECONNREFUSED', { cause }), { code: 'ConnectionFailed' }),
          )(o);
        }
        return srv.watch(o);
      },
    };
    const t = start(lw, { watchListResetLimit: 2 });
    await t.until(() => t.store.replaced === 1, 1000);
    expect(lw.streams).toBe(6);
    expect(srv.listCalls).toHaveLength(0);
    await t.stop();
  });

  it('a reset reported by the transport (ConnectionFailed caused by ECONNRESET) counts like a bare ECONNRESET', async () => {
    const srv = new FakeServer(2);
    const lw = refusingServer(srv, (o) => {
      const cause = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
      return failWith(
        Object.assign(new Error('GET x: other side closed', { cause }), { code: 'ConnectionFailed' }),
      )(o);
    });
    const t = start(lw, { watchListResetLimit: 2 });
    await t.until(() => t.store.replaced === 1 && srv.watchCalls.length === 1, 1000);
    expect(lw.streamCalls()).toBe(2);
    expect(srv.listCalls).toHaveLength(1);
    await t.stop();
  });

  it('rejects a watchListResetLimit that is not a positive integer', () => {
    const srv = new FakeServer(1);
    for (const bad of [0, -1, 1.5, Number.NaN])
      expect(() => new Reflector(srv, new RecordingStore(), { watchListResetLimit: bad })).toThrow(
        RangeError,
      );
  });
});

describe('WatchListSupport: one reflector at a time probes a server whose answer is unknown', () => {
  it('reflectors starting together on one record send one streaming request to a refusing server, and log one warning', async () => {
    const srv = new FakeServer(2);
    const clock = new FakeClock();
    const support = new WatchListSupport({ clock });
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    // The refusal comes only after every reflector has started, so all of them ask while it is undecided.
    const lw = refusingServer(srv, () => ({
      [Symbol.asyncIterator]: () => ({
        next: async () => {
          await held;
          throw STORAGE_REFUSAL;
        },
      }),
    }));
    const rs = Array.from({ length: 5 }, () => start(lw, { clock, watchListSupport: support }));
    await rs[0]!.until(() => lw.streamCalls() === 1);
    release();
    for (const r of rs) await r.until(() => r.store.replaced === 1);
    expect(lw.streamCalls()).toBe(1);
    expect(srv.listCalls).toHaveLength(5);
    const warns = rs
      .flatMap((r) => r.records)
      .filter((x) => x.level === 'warn' && /streaming list/.test(x.msg));
    expect(warns).toHaveLength(1);
    for (const r of rs) await r.stop();
  });

  it('once the server answers the first streaming list (its first event), the waiting reflectors stream too', async () => {
    const srv = new FakeServer(2);
    const clock = new FakeClock();
    const support = new WatchListSupport({ clock });
    const rs = Array.from({ length: 3 }, () => start(srv, { clock, watchListSupport: support }));
    for (const r of rs) await r.until(() => r.store.replaced === 1);
    expect(srv.listCalls).toHaveLength(0);
    expect(srv.watchCalls.filter((w) => w.sendInitialEvents)).toHaveLength(3);
    for (const r of rs) await r.stop();
  });

  it("reprobeIntervalMs Infinity: a refusal is kept for the rest of the record's life", () => {
    const clock = new FakeClock();
    const support = new WatchListSupport({ clock, reprobeIntervalMs: Number.POSITIVE_INFINITY });
    support.refused(statusError(500, 'InternalError', 'etcd'));
    clock.step(365 * 24 * 3600_000);
    expect(support.shouldTry()).toBe(false);
  });

  it('a retriable failure of the deciding attempt lets the next waiting reflector try (nothing is remembered)', async () => {
    const support = new WatchListSupport({ clock: new FakeClock() });
    const ac = new AbortController();
    expect(await support.turn(ac.signal)).toBe(true);
    const second = support.turn(ac.signal);
    support.undecided();
    expect(await second).toBe(true);
    const third = support.turn(ac.signal);
    ac.abort();
    expect(await third).toBe(false);
  });
});

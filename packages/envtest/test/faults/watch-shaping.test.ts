// Unit tests of the per-watch delivery pipeline: the fault injector is driven through its seam
// (onWatchStart/deliver) with a recording writer, so every write and the end are visible exactly.
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import {
  appendRequest,
  FaultError,
  FaultInjector,
  LogRecord,
  queryRequests,
  type RequestContext,
  type RequestRecord,
  splitPoints,
  validateFaultSpec,
  type WatchWriter,
} from '../../src/faults/index.js';

/** vi.waitFor bounds: 5 ms checks, 5 s before giving up (a loaded CI box, not the expected time). */
const WAIT = { timeout: 5000, interval: 5 };

class RecordingWriter implements WatchWriter {
  readonly writes: Buffer[] = [];
  ended = false;
  destroyed = false;
  write(chunk: string | Uint8Array): void {
    if (this.ended || this.destroyed) throw new Error('write after end');
    this.writes.push(Buffer.from(chunk));
  }
  end(): void {
    this.ended = true;
  }
  destroy(): void {
    this.destroyed = true;
  }
  text(): string {
    return Buffer.concat(this.writes).toString('utf8');
  }
}

function watchCtx(over: Partial<RequestContext> = {}): RequestContext {
  return {
    id: 1,
    method: 'GET',
    path: '/api/v1/namespaces/default/pods',
    query: new URLSearchParams('watch=true'),
    verb: 'watch',
    group: '',
    version: 'v1',
    resource: 'pods',
    namespace: 'default',
    ...over,
  };
}

function ev(type: string, name: string, rv: number, label = 'x') {
  const event = {
    type,
    object: {
      kind: 'Pod',
      apiVersion: 'v1',
      metadata: { name, namespace: 'default', resourceVersion: String(rv), labels: { l: label } },
    },
  };
  return { event, line: `${JSON.stringify(event)}\n` };
}

describe('watch shaping (unit, through the seam)', () => {
  it('passes frames unchanged when no rule matches', () => {
    const faults = new FaultInjector(undefined);
    faults.shapeWatch({ match: { resource: 'configmaps' }, steps: [{ op: 'merge', count: 2 }] });
    const w = new RecordingWriter();
    const session = faults.onWatchStart(watchCtx(), w);
    const a = ev('ADDED', 'a', 1);
    session.deliver(a.event, a.line);
    expect(w.writes.map(String)).toEqual([a.line]);
  });

  it('C10 script: split inside a UTF-8 character, merge three, last frame without newline then clean end', async () => {
    const faults = new FaultInjector(undefined);
    const rule = faults.shapeWatch({
      steps: [
        { op: 'split', parts: 3, delayMs: 20, insideUtf8: true },
        { op: 'merge', count: 3 },
        { op: 'noNewline' },
      ],
    });
    const w = new RecordingWriter();
    const s = faults.onWatchStart(watchCtx(), w);
    const events = [
      ev('ADDED', 'e1', 1, 'größe'),
      ev('ADDED', 'e2', 2),
      ev('ADDED', 'e3', 3),
      ev('ADDED', 'e4', 4),
    ];
    const e5 = ev('MODIFIED', 'e5', 5);
    for (const e of [...events, e5]) s.deliver(e.event, e.line);
    await vi.waitFor(() => expect(w.ended).toBe(true), WAIT);
    expect(rule.hits).toBe(1);
    expect(w.writes).toHaveLength(3 + 1 + 1);
    // E1 arrives in three pieces whose join is the frame, and one cut splits 'ö' (0xC3 0xB6).
    const e1 = Buffer.concat(w.writes.slice(0, 3));
    expect(e1.toString('utf8')).toBe(events[0]!.line);
    const cutInChar = w.writes.slice(0, 3).find((b) => b[b.length - 1] === 0xc3);
    expect(cutInChar).toBeDefined();
    expect(() => new TextDecoder('utf-8', { fatal: true }).decode(cutInChar)).toThrow();
    expect(String(w.writes[3])).toBe(events[1]!.line + events[2]!.line + events[3]!.line);
    expect(String(w.writes[4])).toBe(e5.line.slice(0, -1));
  });

  it('cuts an ASCII-only frame evenly when asked to cut inside a character (never throws into the server)', () => {
    const faults = new FaultInjector(undefined);
    faults.shapeWatch({ steps: [{ op: 'split', parts: 3, insideUtf8: true }] });
    const w = new RecordingWriter();
    const s = faults.onWatchStart(watchCtx(), w);
    const a = ev('ADDED', 'ascii', 1);
    expect(() => s.deliver(a.event, a.line)).not.toThrow();
    expect(w.writes).toHaveLength(3);
    expect(Buffer.concat(w.writes).toString()).toBe(a.line);
  });

  it('truncates a frame and ends the response', () => {
    const faults = new FaultInjector(undefined);
    faults.shapeWatch({ steps: [{ op: 'pass' }, { op: 'truncate', bytes: 10 }] });
    const w = new RecordingWriter();
    const s = faults.onWatchStart(watchCtx(), w);
    const a = ev('ADDED', 'a', 1);
    const b = ev('ADDED', 'b', 2);
    const c = ev('ADDED', 'c', 3);
    s.deliver(a.event, a.line);
    s.deliver(b.event, b.line);
    s.deliver(c.event, c.line);
    expect(w.writes.map(String)).toEqual([a.line, b.line.slice(0, 10)]);
    expect(w.ended).toBe(true);
  });

  it('writes raw lines and bare Status frames at the start, then passes events', async () => {
    const faults = new FaultInjector(undefined);
    faults.shapeWatch({
      steps: [
        { op: 'raw', data: '<html><body>502 Bad Gateway</body></html>\n' },
        { op: 'status', code: 500, message: 'boom' },
      ],
    });
    const w = new RecordingWriter();
    const s = faults.onWatchStart(watchCtx(), w);
    await vi.waitFor(() => expect(w.writes).toHaveLength(2), WAIT);
    const a = ev('ADDED', 'a', 1);
    s.deliver(a.event, a.line);
    expect(String(w.writes[0])).toBe('<html><body>502 Bad Gateway</body></html>\n');
    const status = JSON.parse(String(w.writes[1]));
    expect(status).toMatchObject({ kind: 'Status', code: 500, reason: 'InternalError', message: 'boom' });
    expect(String(w.writes[2])).toBe(a.line);
  });

  it('ends a watch after N events, counted per watch, for the next K watches only', () => {
    const faults = new FaultInjector(undefined);
    const rule = faults.endWatches({ afterEvents: 2, times: 2 });
    const outcomes: boolean[] = [];
    for (let i = 0; i < 3; i++) {
      const w = new RecordingWriter();
      const s = faults.onWatchStart(watchCtx(), w);
      for (let n = 1; n <= 3; n++) {
        const e = ev('ADDED', `p${n}`, n);
        s.deliver(e.event, e.line);
      }
      outcomes.push(w.ended);
      if (w.ended) expect(w.writes).toHaveLength(2);
      else expect(w.writes).toHaveLength(3);
    }
    expect(outcomes).toEqual([true, true, false]);
    expect(rule.hits).toBe(2);
    expect(rule.active).toBe(false);
  });

  it("delays one object's events; order 'stream' keeps resourceVersion order", async () => {
    const faults = new FaultInjector(undefined);
    const rule = faults.delayEvents({ namespace: 'default', name: 'child', delayMs: 60 });
    const w = new RecordingWriter();
    const s = faults.onWatchStart(watchCtx(), w);
    const child = ev('ADDED', 'child', 1);
    const other = ev('ADDED', 'other', 2);
    s.deliver(child.event, child.line);
    s.deliver(other.event, other.line);
    expect(w.writes).toHaveLength(0);
    await vi.waitFor(() => expect(w.writes).toHaveLength(2), WAIT);
    expect(w.writes.map(String)).toEqual([child.line, other.line]);
    expect(rule.hits).toBe(1);
  });

  it('namePrefix delays every object whose name starts with it (generated names)', async () => {
    const faults = new FaultInjector(undefined);
    const rule = faults.delayEvents({
      namespace: 'default',
      namePrefix: 'child-',
      delayMs: 60,
      order: 'object',
    });
    const w = new RecordingWriter();
    const s = faults.onWatchStart(watchCtx(), w);
    const a = ev('ADDED', 'child-x7k2p', 1);
    const other = ev('ADDED', 'children', 2);
    s.deliver(a.event, a.line);
    s.deliver(other.event, other.line);
    expect(w.writes.map(String)).toEqual([other.line]);
    await vi.waitFor(() => expect(w.writes).toHaveLength(2), WAIT);
    expect(w.writes.map(String)).toEqual([other.line, a.line]);
    expect(rule.hits).toBe(1);
    expect(() => faults.delayEvents({ name: 'a', namePrefix: 'b', delayMs: 1 })).toThrow(/exactly one/);
    expect(() => faults.delayEvents({ delayMs: 1 })).toThrow(/exactly one/);
  });

  it("order 'object' lets other objects overtake and drops bookmarks while an event is held", async () => {
    const faults = new FaultInjector(undefined);
    faults.delayEvents({ name: 'child', delayMs: 60, order: 'object' });
    const w = new RecordingWriter();
    const s = faults.onWatchStart(watchCtx(), w);
    const child = ev('ADDED', 'child', 1);
    const other = ev('ADDED', 'other', 2);
    const bookmark = {
      event: {
        type: 'BOOKMARK',
        object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: '2' } },
      },
      line: '{"type":"BOOKMARK"}\n',
    };
    const childMod = ev('MODIFIED', 'child', 3);
    s.deliver(child.event, child.line);
    s.deliver(other.event, other.line);
    s.deliver(bookmark.event, bookmark.line);
    s.deliver(childMod.event, childMod.line);
    expect(w.writes.map(String)).toEqual([other.line]);
    await vi.waitFor(() => expect(w.writes).toHaveLength(3), WAIT);
    expect(w.writes.map(String)).toEqual([other.line, child.line, childMod.line]);
  });

  it('suppresses only the initial-events-end bookmark on streaming-list watches', () => {
    const faults = new FaultInjector(undefined);
    const rule = faults.suppressInitialEventsEnd();
    const end = {
      type: 'BOOKMARK',
      object: { metadata: { resourceVersion: '5', annotations: { 'k8s.io/initial-events-end': 'true' } } },
    };
    const plain = { type: 'BOOKMARK', object: { metadata: { resourceVersion: '6' } } };
    const streaming = watchCtx({ query: new URLSearchParams('watch=true&sendInitialEvents=true') });
    const w = new RecordingWriter();
    const s = faults.onWatchStart(streaming, w);
    s.deliver(end, `${JSON.stringify(end)}\n`);
    s.deliver(plain, `${JSON.stringify(plain)}\n`);
    expect(w.writes.map(String)).toEqual([`${JSON.stringify(plain)}\n`]);
    // A plain watch is not affected (and does not use up the rule).
    const w2 = new RecordingWriter();
    faults.onWatchStart(watchCtx(), w2).deliver(end, `${JSON.stringify(end)}\n`);
    expect(w2.writes).toHaveLength(1);
    expect(rule.hits).toBe(1);
  });

  it('close() drops held output and stops timers', async () => {
    const faults = new FaultInjector(undefined);
    faults.shapeWatch({ steps: [{ op: 'split', parts: 2, delayMs: 30 }] });
    const w = new RecordingWriter();
    const s = faults.onWatchStart(watchCtx(), w);
    const a = ev('ADDED', 'a', 1);
    s.deliver(a.event, a.line);
    expect(w.writes).toHaveLength(1);
    s.close();
    await new Promise((r) => setTimeout(r, 60));
    expect(w.writes).toHaveLength(1);
  });
});

describe('watch shaping invariant', () => {
  it('split/merge/pass scripts never lose, duplicate or reorder a byte', () => {
    const step = fc.oneof(
      fc.record({ op: fc.constant('pass' as const), count: fc.integer({ min: 1, max: 3 }) }),
      fc.record({ op: fc.constant('split' as const), parts: fc.integer({ min: 2, max: 6 }) }),
      fc.record({ op: fc.constant('merge' as const), count: fc.integer({ min: 2, max: 4 }) }),
    );
    fc.assert(
      fc.property(
        fc.array(step, { minLength: 1, maxLength: 6 }),
        fc.array(fc.string({ unit: 'grapheme', maxLength: 30 }), { minLength: 0, maxLength: 5 }),
        (steps, extra) => {
          const faults = new FaultInjector(undefined);
          faults.shapeWatch({ steps });
          const w = new RecordingWriter();
          const s = faults.onWatchStart(watchCtx(), w);
          const consumed = steps.reduce((n, st) => n + (st.op === 'split' ? 1 : st.count), 0);
          const lines: string[] = [];
          for (let i = 0; i < consumed + extra.length; i++) {
            const e = ev('ADDED', `p${i}`, i + 1, 'x');
            (e.event.object.metadata as Record<string, unknown>).annotations = { t: extra[i] ?? 'ß' };
            const line = `${JSON.stringify(e.event)}\n`;
            lines.push(line);
            s.deliver(e.event, line);
          }
          expect(Buffer.concat(w.writes).equals(Buffer.from(lines.join(''), 'utf8'))).toBe(true);
          expect(w.ended).toBe(false);
        },
      ),
    );
  });
});

describe('rule validation', () => {
  it.each([
    [{ type: 'fail' }, 'fail.status'],
    [{ type: 'fail', status: 429, retryAfterSeconds: -1 }, 'retryAfterSeconds'],
    [{ type: 'fail', status: 500, probability: 0 }, 'probability'],
    [{ type: 'endWatch' }, 'afterMs'],
    [{ type: 'shapeWatch', steps: [{ op: 'split', parts: 1 }] }, 'steps[0].parts'],
    [{ type: 'delayEvents', name: 'x' }, 'delayMs'],
    [{ type: 'expire', match: { verbs: 'list' } }, 'unknown match field'],
    [{ type: 'expire', times: 0 }, 'times'],
    [{ type: 'nope' }, 'unknown fault type'],
    [{ type: 'endWatch', afterEvent: 2 }, 'unknown field "afterEvent" in endWatch'],
    [{ type: 'shapeWatch', steps: [{ op: 'splt' }] }, 'shapeWatch.steps[0].op "splt" is unknown'],
    [{ type: 'fail', status: 500, match: { verb: ['list', 'wach'] } }, 'match.verb[1] "wach" is not one of'],
    [{ type: 'fail', status: 500, match: { pathPattern: '(' } }, 'match.pathPattern is not a valid regular'],
    [{ type: 'requireSelector' }, 'requireSelector needs fieldSelector and/or labelSelector'],
  ])('rejects %j naming %s', (spec, field) => {
    let error: unknown;
    try {
      validateFaultSpec(spec);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(FaultError);
    expect((error as FaultError).code).toBe('EINVALID');
    expect((error as FaultError).message).toContain(field);
  });
});

describe('splitPoints', () => {
  it('cuts strictly inside the frame, in order, as many as asked; the UTF-8 cut splits a character', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 0, maxLength: 40 }),
        fc.constantFrom('ö', '€', '😀', 'ж'),
        fc.string({ minLength: 0, maxLength: 40 }),
        fc.integer({ min: 2, max: 8 }),
        (pre, ch, post, parts) => {
          const bytes = Buffer.from(`${pre}${ch}${post}\n`, 'utf8');
          const cuts = splitPoints(bytes, parts, true);
          expect(cuts.length).toBe(Math.min(parts - 1, bytes.length - 1));
          for (let i = 0; i < cuts.length; i++) {
            expect(cuts[i]).toBeGreaterThan(i === 0 ? 0 : cuts[i - 1]!);
            expect(cuts[i]).toBeLessThan(bytes.length);
          }
          // Some cut lands on a continuation byte, i.e. inside a multi-byte character.
          expect(cuts.some((c) => (bytes[c]! & 0xc0) === 0x80)).toBe(true);
        },
      ),
    );
  });

  it('refuses an ASCII-only frame when asked to cut inside a character', () => {
    expect(() => splitPoints(Buffer.from('{"a":1}\n'), 3, true)).toThrow(FaultError);
  });
});

describe("request log (the server's, queried by the injector)", () => {
  function record(id: number, verb: string, res?: ServerResponse): LogRecord {
    const r = new LogRecord(id, 'GET', '/api/v1/namespaces/default/pods', '');
    r.classify(watchCtx({ id, verb, query: new URLSearchParams() }));
    if (res) r.track(res);
    return r;
  }

  it('keeps at least the last `limit` requests, newest last, and the injector filters them', () => {
    const log: RequestRecord[] = [];
    for (let id = 1; id <= 100; id++) appendRequest(log, record(id, id % 2 === 0 ? 'list' : 'get'), 10);
    const faults = new FaultInjector({ requestLog: log });
    const all = faults.requests();
    expect(all.length).toBeGreaterThanOrEqual(10);
    expect(all.length).toBeLessThanOrEqual(11);
    expect(all.at(-1)?.id).toBe(100);
    expect(all.map((r) => r.id)).toEqual([...all.map((r) => r.id)].sort((a, b) => a - b));
    expect(faults.requests({ verb: 'list' }).every((r) => r.id % 2 === 0)).toBe(true);
    expect(queryRequests(log, { verb: 'get' }).length).toBeGreaterThan(0);
    faults.clearRequests();
    expect(faults.requests()).toEqual([]);
    expect(log).toEqual([]);
  });

  it('records the status whether the handler calls writeHead or lets end() send implicit headers', () => {
    const log: RequestRecord[] = [];
    const faults = new FaultInjector({ requestLog: log });
    const res1 = new ServerResponse(new IncomingMessage(new Socket()));
    appendRequest(log, record(1, 'get', res1));
    res1.statusCode = 204;
    res1.end();
    const res2 = new ServerResponse(new IncomingMessage(new Socket()));
    appendRequest(log, record(2, 'get', res2));
    res2.writeHead(418, { 'content-type': 'text/plain' });
    res2.end('x');
    expect(faults.requests().map((r) => [r.id, r.status])).toEqual([
      [1, 204],
      [2, 418],
    ]);
    expect(faults.requests({ status: 418 }).map((r) => r.id)).toEqual([2]);
  });

  it('has no log of its own: without a server log it answers empty', () => {
    const faults = new FaultInjector(undefined);
    faults.failRequests({ status: 500 });
    const res = new ServerResponse(new IncomingMessage(new Socket()));
    expect(faults.onRequest(watchCtx({ verb: 'get' }), new IncomingMessage(new Socket()), res)).toBe('f1');
    expect(faults.requests()).toEqual([]);
  });
});

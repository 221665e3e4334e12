import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_WATCH_EVENT_BYTES,
  decodeWatchStream,
  retryAfterSecondsOf,
} from '../src/entries/apiutil.js';
import {
  InvalidRequestError,
  isTooManyRequests,
  WatchDecodeError,
  WatchEventTooLargeError,
  WatchStatusError,
} from '../src/entries/errors.js';
import { type KubeObject, StatusError, type WatchEvent } from '../src/index.js';

const meta = (e: WatchEvent | undefined) => (e?.object as KubeObject | undefined)?.metadata;

async function* chunksOf(parts: Array<Uint8Array | string>): AsyncGenerator<Uint8Array | string> {
  for (const p of parts) yield p;
}

async function collect(
  parts: Array<Uint8Array | string>,
  options?: { maxEventBytes?: number },
): Promise<WatchEvent[]> {
  const out: WatchEvent[] = [];
  for await (const ev of decodeWatchStream(chunksOf(parts), options)) out.push(ev);
  return out;
}

function line(type: string, name: string, rv: string, labels: Record<string, string> = {}): string {
  return `${JSON.stringify({ type, object: { kind: 'Pod', apiVersion: 'v1', metadata: { name, resourceVersion: rv, labels } } })}\n`;
}

describe('decodeWatchStream', () => {
  it('decodes one event per line, several events in one chunk', async () => {
    const evs = await collect([
      line('ADDED', 'a', '1') + line('MODIFIED', 'a', '2') + line('DELETED', 'a', '3'),
    ]);
    expect(evs.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
    expect(evs.map((e) => e.object.metadata?.resourceVersion)).toEqual(['1', '2', '3']);
  });

  it('joins an event split over chunks inside a multi-byte UTF-8 character (C10 framing)', async () => {
    const text = line('ADDED', 'p', '7', { team: 'zürich-€-🚀' });
    const bytes = new TextEncoder().encode(text);
    // Split inside the 4-byte emoji and inside the 3-byte euro sign.
    const emojiAt = bytes.indexOf(0xf0);
    const euroAt = bytes.indexOf(0xe2);
    expect(emojiAt).toBeGreaterThan(0);
    const cuts = [euroAt + 1, emojiAt + 2].sort((a, b) => a - b);
    const parts = [bytes.slice(0, cuts[0]), bytes.slice(cuts[0], cuts[1]), bytes.slice(cuts[1])];
    const evs = await collect(parts);
    expect(evs).toHaveLength(1);
    expect(meta(evs[0])?.labels).toEqual({ team: 'zürich-€-🚀' });
  });

  it('splits at every byte boundary and still yields the same events', async () => {
    const text = line('ADDED', 'x', '1', { v: 'ä' }) + line('BOOKMARK', '', '9');
    const bytes = new TextEncoder().encode(text);
    for (let cut = 1; cut < bytes.length; cut += 7) {
      const evs = await collect([bytes.slice(0, cut), bytes.slice(cut)]);
      expect(evs.map((e) => e.object.metadata?.resourceVersion)).toEqual(['1', '9']);
    }
  });

  it('decodes a complete last event without a trailing newline, skips blank lines', async () => {
    const evs = await collect(['\n', line('ADDED', 'a', '1'), '\n', line('ADDED', 'b', '5').trimEnd()]);
    expect(evs.map((e) => meta(e)?.name)).toEqual(['a', 'b']);
  });

  it('surfaces ERROR events with their Status', async () => {
    const status = {
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      reason: 'Expired',
      code: 410,
      message: 'too old',
    };
    const evs = await collect([`${JSON.stringify({ type: 'ERROR', object: status })}\n`]);
    expect(evs[0]?.type).toBe('ERROR');
    if (evs[0]?.type === 'ERROR') expect(evs[0].object.code).toBe(410);
  });

  it('fails on a half event at the end of the stream (C09) and on a line of HTML', async () => {
    const half = line('ADDED', 'a', '1').slice(0, 30);
    await expect(collect([line('ADDED', 'z', '1'), half])).rejects.toBeInstanceOf(WatchDecodeError);
    await expect(collect(['<html>oops</html>\n'])).rejects.toBeInstanceOf(WatchDecodeError);
    await expect(collect(['{"type":"WHAT","object":{}}\n'])).rejects.toThrow(/unknown event type/);
  });

  it('fails on an event whose object is not an object (array, number, string, null), naming it', async () => {
    for (const [object, what] of [
      [[{ metadata: { name: 'a' } }], 'an array'],
      [1, 'a number'],
      ['x', 'a string'],
      [null, 'null'],
    ] as const) {
      const err = await collect([
        line('ADDED', 'z', '1'),
        `${JSON.stringify({ type: 'MODIFIED', object })}\n`,
      ]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WatchDecodeError);
      expect((err as Error).message).toContain(`MODIFIED event whose object is ${what}, not an object`);
    }
  });

  it('bounds one event: a line longer than maxEventBytes is refused before it is kept whole, with or without a newline', async () => {
    const ok = line('ADDED', 'a', '1');
    const limit = Buffer.byteLength(ok) - 1; // the line without its newline fits exactly
    expect(await collect([ok], { maxEventBytes: limit })).toHaveLength(1);
    const big = line('ADDED', 'b'.repeat(200), '2');
    // In one chunk with its newline, split over many chunks, and unfinished at the end of the stream.
    const pulled: number[] = [];
    async function* counted(parts: string[]): AsyncGenerator<string> {
      for (const [i, p] of parts.entries()) {
        pulled.push(i);
        yield p;
      }
    }
    for (const parts of [
      [ok, big],
      [ok, ...big.match(/.{1,10}/gs)!],
      [ok, big.slice(0, -1)],
    ]) {
      pulled.length = 0;
      const seen: WatchEvent[] = [];
      const err = await (async () => {
        for await (const ev of decodeWatchStream(counted(parts), { maxEventBytes: limit })) seen.push(ev);
      })().catch((e: unknown) => e);
      expect(seen).toHaveLength(1);
      expect(err).toBeInstanceOf(WatchEventTooLargeError);
      expect(err).toBeInstanceOf(WatchDecodeError);
      expect((err as WatchEventTooLargeError).limitBytes).toBe(limit);
      expect((err as Error).message).toMatch(/too large/);
      // Refused as soon as the kept bytes pass the bound: the chunks after that are never pulled.
      if (parts.length > 3) expect(pulled.length).toBeLessThan(parts.length);
    }
  });

  it('the default bound is 16 MiB (apimachinery streaming maxBytes); a bad bound is refused', async () => {
    expect(DEFAULT_MAX_WATCH_EVENT_BYTES).toBe(16 * 1024 * 1024);
    for (const maxEventBytes of [0, -1, 1.5, Number.NaN]) {
      await expect(collect([line('ADDED', 'a', '1')], { maxEventBytes })).rejects.toBeInstanceOf(
        InvalidRequestError,
      );
    }
  });

  it('C40: a bare Status line after a good event is a typed 429 carrying retryAfterSeconds, not a decode error', async () => {
    const status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      reason: 'TooManyRequests',
      code: 429,
      message: 'slow down',
      details: { retryAfterSeconds: 2 },
    };
    const seen: WatchEvent[] = [];
    let caught: unknown;
    try {
      for await (const ev of decodeWatchStream(
        chunksOf([line('MODIFIED', 'a', '5'), `${JSON.stringify(status)}\n`]),
      ))
        seen.push(ev);
    } catch (err) {
      caught = err;
    }
    expect(seen.map((e) => e.object.metadata?.resourceVersion)).toEqual(['5']);
    expect(caught).toBeInstanceOf(WatchStatusError);
    expect(caught).toBeInstanceOf(StatusError);
    expect(caught).not.toBeInstanceOf(WatchDecodeError);
    expect(isTooManyRequests(caught)).toBe(true);
    expect((caught as WatchStatusError).retryAfterSeconds).toBe(2);
    expect(retryAfterSecondsOf(caught)).toBe(2);
    expect((caught as WatchStatusError).httpStatus).toBe(429);
  });

  it('reads retryAfterSeconds only when it is a usable number', () => {
    const st = (details: unknown) => new StatusError({ code: 429, details } as never);
    expect(retryAfterSecondsOf(st({ retryAfterSeconds: 0 }))).toBe(0);
    expect(retryAfterSecondsOf(st({ retryAfterSeconds: -1 }))).toBeUndefined();
    expect(retryAfterSecondsOf(st({ retryAfterSeconds: '2' }))).toBeUndefined();
    expect(retryAfterSecondsOf(st(undefined))).toBeUndefined();
    expect(retryAfterSecondsOf(new Error('x'))).toBeUndefined();
    expect(new WatchStatusError({ code: 500 }).retryAfterSeconds).toBeUndefined();
  });

  it('skips CRLF and whitespace-only lines, keeps the message of a broken line short', async () => {
    const evs = await collect([`\r\n  \t\r\n${line('ADDED', 'a', '1').replace('\n', '\r\n')}`, '   ']);
    expect(evs.map((e) => meta(e)?.name)).toEqual(['a']);
    await expect(collect(['{"type":"ADDED","object":{}} trailing\n'])).rejects.toThrow(/starts with/);
  });

  it('property: any split of any event sequence, bytes or strings, yields the events in order', async () => {
    const label = fc.string({ unit: 'grapheme', maxLength: 12 });
    const event = fc.record({
      type: fc.constantFrom('ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK'),
      name: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 8 }),
      rv: fc.nat().map(String),
      label,
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(event, { minLength: 1, maxLength: 6 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        fc.boolean(),
        fc.boolean(),
        async (events, cutSeeds, asStrings, trailingNewline) => {
          let text = events.map((e) => line(e.type, e.name, e.rv, { l: e.label })).join('');
          if (!trailingNewline) text = text.slice(0, -1);
          const bytes = new TextEncoder().encode(text);
          const cuts = [...new Set(cutSeeds.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
          const bounds = [0, ...cuts, bytes.length];
          const parts: Array<Uint8Array | string> = [];
          for (let i = 0; i + 1 < bounds.length; i++) {
            const piece = bytes.slice(bounds[i], bounds[i + 1]);
            // strings only where the cut does not split a character (a string chunk holds whole characters)
            const s = new TextDecoder('utf-8', { fatal: false }).decode(piece);
            parts.push(
              asStrings && new TextEncoder().encode(s).length === piece.length && !s.includes('\ufffd')
                ? s
                : piece,
            );
          }
          const got = await collect(parts);
          expect(
            got.map((e) => [e.type, meta(e)?.name, e.object.metadata?.resourceVersion, meta(e)?.labels?.l]),
          ).toEqual(events.map((e) => [e.type, e.name, e.rv, e.label]));
        },
      ),
      { numRuns: 200 },
    );
  });
});

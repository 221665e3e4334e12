import { describe, expect, it } from 'vitest';
import { decodeWatchStream, type KubeObject, WatchDecodeError, type WatchEvent } from '../src/index.js';

const meta = (e: WatchEvent | undefined) => (e?.object as KubeObject | undefined)?.metadata;

async function* chunksOf(parts: Array<Uint8Array | string>): AsyncGenerator<Uint8Array | string> {
  for (const p of parts) yield p;
}

async function collect(parts: Array<Uint8Array | string>): Promise<WatchEvent[]> {
  const out: WatchEvent[] = [];
  for await (const ev of decodeWatchStream(chunksOf(parts))) out.push(ev);
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
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeWatchStream, RAW_JSON, rawJsonOf, withRawJson } from '../src/entries/apiutil.js';
import type { KubeObject, WatchEvent } from '../src/index.js';
import { ListStreamDecoder } from '../src/internal/list-stream.js';

async function* chunksOf(parts: string[]): AsyncGenerator<string> {
  for (const p of parts) yield p;
}

async function events(text: string, cut: number, keepObjectJson: boolean): Promise<WatchEvent[]> {
  const out: WatchEvent[] = [];
  for await (const ev of decodeWatchStream(chunksOf([text.slice(0, cut), text.slice(cut)]), {
    keepObjectJson,
  }))
    out.push(ev);
  return out;
}

const pod = (i: number, note: string) => ({
  kind: 'Pod',
  apiVersion: 'v1',
  metadata: { name: `p${i}`, namespace: 'ns', resourceVersion: String(i), annotations: { note } },
  spec: { containers: [{ name: 'c', image: 'x' }] },
});

describe('objects that carry the JSON they were decoded from', () => {
  it('a watch object carries its own JSON (a slice of the line), parsing to the object, however the stream is cut', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string(), fc.nat(), async (note, cutAt) => {
        const objs = [pod(1, note), pod(2, `${note}}`)];
        const text = `${objs.map((o, i) => JSON.stringify({ type: i ? 'MODIFIED' : 'ADDED', object: o })).join('\n')}\n`;
        const got = await events(text, cutAt % (text.length + 1), true);
        expect(got.map((e) => e.object)).toEqual(objs);
        for (const e of got) expect(JSON.parse(rawJsonOf(e.object as object) as string)).toEqual(e.object);
      }),
      { numRuns: 100 },
    );
  });

  it('no JSON unless asked, none for a line of another shape, and never enumerable', async () => {
    const line = JSON.stringify({ type: 'ADDED', object: pod(1, 'a') });
    const [plain] = await events(`${line}\n`, 3, false);
    expect(rawJsonOf(plain?.object as object)).toBeUndefined();
    const [kept] = await events(`${line}\n`, 3, true);
    expect(Object.keys(kept?.object as object)).toEqual(Object.keys(pod(1, 'a')));
    expect(JSON.stringify(kept?.object)).toBe(JSON.stringify(pod(1, 'a')));
    // an extra member after the object, or spaces: the object is not a slice of the line there
    const extra = `{"type":"ADDED","object":${JSON.stringify(pod(1, 'a'))},"x":{}}\n`;
    const spaced = `{ "type": "ADDED", "object": ${JSON.stringify(pod(1, 'a'))} }\n`;
    for (const text of [extra, spaced]) {
      const [ev] = await events(text, 0, true);
      expect(rawJsonOf(ev?.object as object)).toBeUndefined();
    }
  });

  it("a list decoder hands each item's own text to decodeItem", () => {
    const items = [pod(1, 'a'), pod(2, 'b"]}')];
    const text = JSON.stringify({ kind: 'PodList', metadata: { resourceVersion: '9' }, items });
    const seen: string[] = [];
    const d = new ListStreamDecoder((json) => {
      seen.push(json);
      return { stub: true };
    });
    for (let i = 0; i < text.length; i += 7) d.push(text.slice(i, i + 7));
    expect(seen.map((j) => JSON.parse(j))).toEqual(items);
    expect((d.end() as { items: unknown[] }).items).toEqual([{ stub: true }, { stub: true }]);
  });

  it('withRawJson leaves a frozen object alone; the symbol is shared by every copy of the package', () => {
    const o = Object.freeze({ a: 1 }) as object;
    expect(rawJsonOf(withRawJson(o, '{"a":1}'))).toBeUndefined();
    expect(RAW_JSON).toBe(Symbol.for('kubeloop.client.rawJson'));
    const k = withRawJson({ metadata: {} } as KubeObject, '{"metadata":{}}');
    expect(rawJsonOf(k)).toBe('{"metadata":{}}');
    expect(structuredClone(k)).toEqual({ metadata: {} });
  });
});

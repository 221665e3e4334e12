import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ListStreamDecoder } from '../src/internal/list-stream.js';

/** Feeds `text` to a decoder in the pieces cut at `cuts` (byte offsets) and returns what it decodes. */
function decodeInPieces(text: string, cuts: number[]): unknown {
  const bytes = Buffer.from(text, 'utf8');
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const d = new ListStreamDecoder();
  let from = 0;
  for (const c of [...at, bytes.length]) {
    if (c > from) d.push(new Uint8Array(bytes.subarray(from, c)));
    from = Math.max(from, c);
  }
  return d.end();
}

const pod = (i: number) => ({
  metadata: {
    name: `p-${i}`,
    namespace: 'ns',
    labels: { 'a/b': 'c' },
    managedFields: [{ fieldsV1: { 'f:spec': { 'k:{"name":"app"}': { '.': {} } } } }],
    annotations: { note: 'quote " back \\ slash } ] { [ "items": [', uni: 'héllo ✓ 🚀' },
  },
  spec: { containers: [{ name: 'app', args: ['--a=1', ']'] }], items: [1, 2, { items: [] }] },
});

describe('ListStreamDecoder (a list reply decoded as its bytes arrive)', () => {
  it('gives what JSON.parse gives, however the body is cut into chunks', () => {
    const list = {
      kind: 'PodList',
      apiVersion: 'v1',
      metadata: { resourceVersion: '123', continue: 'x"y' },
      items: [pod(0), pod(1), pod(2)],
    };
    const text = JSON.stringify(list);
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 12 }), (cuts) => {
        expect(decodeInPieces(text, cuts)).toEqual(list);
      }),
      { numRuns: 300 },
    );
    // and one byte at a time
    expect(decodeInPieces(text, [...Array(Buffer.byteLength(text)).keys()])).toEqual(list);
  });

  it('any JSON value: the same result as JSON.parse, or the same kind of failure', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.jsonValue(),
          fc.record({ metadata: fc.jsonValue(), items: fc.array(fc.jsonValue(), { maxLength: 4 }) }),
        ),
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.boolean(),
        (value, cuts, pretty) => {
          const text = JSON.stringify(value, null, pretty ? 2 : undefined);
          expect(decodeInPieces(text, cuts)).toEqual(JSON.parse(text));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('keeps the members after items, whitespace around the colon, and an empty body', () => {
    const text =
      '{ "kind" : "List", "items" :\n [ {"a":1} , {"b":[2]} ] , "metadata" : {"resourceVersion":"9"} }';
    expect(decodeInPieces(text, [5, 17, 30])).toEqual(JSON.parse(text));
    expect(decodeInPieces('{"items":null}', [3])).toEqual({ items: null });
    expect(decodeInPieces('', [])).toBeUndefined();
  });

  it('malformed JSON throws a SyntaxError, as JSON.parse does', () => {
    for (const bad of ['{"items":[{"a":1}', '{"items":[{"a":}]}', '{"items":[]', '{"items":[],"items":[]}'])
      expect(() => decodeInPieces(bad, [4])).toThrow(SyntaxError);
  });
});

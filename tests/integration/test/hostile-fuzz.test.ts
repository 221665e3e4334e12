// Fuzz: the watch decoder, the label selector parser and the server's selector parsers
// meet random input; each answers with events/requirements or a typed error, never anything else.
import { ConfigMap, StatusError } from '@kubeloop/client';
import {
  decodeWatchStream,
  formatLabelSelector,
  matchesLabelRequirements,
  parseLabelSelector,
} from '@kubeloop/client/apiutil';
import { SelectorParseError, WatchDecodeError, WatchStatusError } from '@kubeloop/client/errors';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { realCluster, useFaultServer } from './support/fault-server.js';

async function* chunksOf(bytes: Buffer, cuts: number[]): AsyncGenerator<Uint8Array> {
  let from = 0;
  for (const c of [...new Set(cuts.map((x) => x % (bytes.length + 1)))].sort((a, b) => a - b)) {
    yield bytes.subarray(from, c);
    from = c;
  }
  yield bytes.subarray(from);
}

async function decodeAll(bytes: Buffer, cuts: number[]): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const e of decodeWatchStream(chunksOf(bytes, cuts))) out.push(e);
  return out;
}

const event = fc.record({
  type: fc.constantFrom('ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK'),
  object: fc.record({
    apiVersion: fc.constant('v1'),
    kind: fc.constant('ConfigMap'),
    metadata: fc.record({
      name: fc.string({ minLength: 1, maxLength: 10 }),
      resourceVersion: fc.nat().map(String),
    }),
    data: fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ unit: 'grapheme', maxLength: 20 })),
  }),
});

describe('fuzz: watch decoder', () => {
  it('any valid event stream, cut into chunks anywhere (inside UTF-8 characters too), decodes to the same events', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(event, { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        async (events, cuts) => {
          const bytes = Buffer.from(events.map((e) => `${JSON.stringify(e)}\n`).join(''), 'utf8');
          expect(await decodeAll(bytes, cuts)).toEqual(events);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('any bytes give events or WatchDecodeError/WatchStatusError, nothing else', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
          fc
            .array(
              fc.oneof(
                event.map((e) => JSON.stringify(e)),
                fc.json(),
                fc.string(),
              ),
              { maxLength: 5 },
            )
            .map((l) => Buffer.from(l.join('\n'))),
        ),
        fc.array(fc.nat(), { maxLength: 6 }),
        async (bytes, cuts) => {
          try {
            await decodeAll(bytes, cuts);
          } catch (e) {
            if (!(e instanceof WatchDecodeError) && !(e instanceof WatchStatusError)) throw e;
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('fuzz: label selector parser', () => {
  it('any string gives requirements or a SelectorParseError', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), fc.stringMatching(/^[a-z!=<>(), in notexists0-9./-]{0,30}$/)),
        (s) => {
          try {
            parseLabelSelector(s);
          } catch (e) {
            if (!(e instanceof SelectorParseError)) throw e;
          }
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('a formatted selector object parses back to requirements that match exactly its labels', () => {
    const key = fc.stringMatching(/^[a-z]([a-z0-9-]{0,6}[a-z0-9])?$/);
    const value = fc.stringMatching(/^([a-z0-9]([a-z0-9._-]{0,6}[a-z0-9])?)?$/);
    fc.assert(
      fc.property(
        fc.dictionary(key, value, { minKeys: 1, maxKeys: 4 }),
        fc.dictionary(key, value, { maxKeys: 4 }),
        (want, other) => {
          const reqs = parseLabelSelector(formatLabelSelector({ matchLabels: want }));
          expect(matchesLabelRequirements(reqs, want)).toBe(true);
          const labels = { ...other, ...want };
          expect(matchesLabelRequirements(reqs, labels)).toBe(true);
          const [k] = Object.keys(want);
          expect(matchesLabelRequirements(reqs, { ...labels, [k!]: `${want[k!]}x` })).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe.skipIf(realCluster)('fuzz: the server parses any selector into 200 or 400, never 500', () => {
  const ctx = useFaultServer('kubeloop-fuzz');
  it('random label and field selectors on a list', { timeout: 120_000 }, async () => {
    const ns = await ctx.namespace('fuzz');
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.string({ maxLength: 40 }), fc.stringMatching(/^[a-z.!=,() in]{0,30}$/)),
        fc.oneof(
          fc.string({ maxLength: 40 }),
          fc.stringMatching(/^(metadata\.(name|namespace)|status\.x)[!=]{1,2}[a-z\\,=]{0,8}$/),
        ),
        async (labelSelector, fieldSelector) => {
          try {
            await ctx.api.list(ConfigMap, { namespace: ns, labelSelector, fieldSelector });
          } catch (e) {
            if (!(e instanceof StatusError) && !(e instanceof SelectorParseError)) throw e;
            if (e instanceof StatusError) expect(e.httpStatus, e.message).toBe(400);
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});

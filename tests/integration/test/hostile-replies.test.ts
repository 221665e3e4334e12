// Hostile input, server side: broken replies reach the client as typed errors naming what
// is wrong — never a crash, a hang or an unhandled rejection. The replies are put on the wire by envtest's
// fail rules (exact text or bytes) and watch shaping; each case also checks that a good reply after it works.
import { ConfigMap, StatusError } from '@kubeloop/client';
import { UnexpectedResponseError, WatchDecodeError } from '@kubeloop/client/errors';
import { TransportError } from '@kubeloop/client/transport';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { realCluster, useFaultServer } from './support/fault-server.js';

const TYPED = [StatusError, UnexpectedResponseError, WatchDecodeError, TransportError];

async function outcome(
  p: Promise<unknown>,
): Promise<{ ok: true; value: unknown } | { ok: false; error: Error }> {
  try {
    return { ok: true, value: await p };
  } catch (e) {
    return { ok: false, error: e as Error };
  }
}

function expectTypedError(r: Awaited<ReturnType<typeof outcome>>, what: RegExp): void {
  expect(r.ok, 'the broken reply was accepted').toBe(false);
  if (r.ok) return;
  expect(
    TYPED.some((T) => r.error instanceof T),
    `${r.error.name}: ${r.error.message}`,
  ).toBe(true);
  expect(r.error.message).toMatch(what);
}

describe.skipIf(realCluster)('hostile server replies', () => {
  const ctx = useFaultServer('kubeloop-hostile');
  let unhandled = 0;
  const onUnhandled = () => {
    unhandled++;
  };
  beforeEach(() => {
    unhandled = 0;
    process.on('unhandledRejection', onUnhandled);
  });
  afterEach(() => {
    process.off('unhandledRejection', onUnhandled);
    expect(unhandled).toBe(0);
  });

  async function listWith(body: { raw: string } | { rawBase64: string }, headers?: Record<string, string>) {
    const ns = await ctx.namespace('hostile');
    ctx.server.faults.failRequests({
      match: { verb: 'list', namespace: ns },
      status: 200,
      body,
      times: 1,
      ...(headers ? { headers } : {}),
    });
    const r = await outcome(ctx.api.list(ConfigMap, { namespace: ns }));
    // The next (good) reply is read normally: nothing was left broken.
    expect((await ctx.api.list(ConfigMap, { namespace: ns })).items).toEqual([]);
    return r;
  }

  it('truncated JSON', async () => {
    expectTypedError(
      await listWith({ raw: '{"kind":"ConfigMapList","apiVersion":"v1","items":[{"metad' }),
      /JSON|parse|unexpected|truncat/i,
    );
  });

  it('a proxy HTML page with a text/html content type', async () => {
    expectTypedError(
      await listWith({ raw: '<html><body>502 Bad Gateway</body></html>' }, { 'Content-Type': 'text/html' }),
      /html|content.?type|JSON|unexpected/i,
    );
  });

  // client-go fails to decode such a list (an item must unmarshal into the kind's struct); so does ApiClient.list,
  // with an UnexpectedResponseError naming the first item that is not an object.
  it('a list whose items are not objects', async () => {
    expectTypedError(
      await listWith({
        raw: '{"kind":"ConfigMapList","apiVersion":"v1","metadata":{},"items":[1,"x",null]}',
      }),
      /item|object/i,
    );
  });

  it('a Status object instead of a list', async () => {
    expectTypedError(
      await listWith({
        raw: '{"kind":"Status","apiVersion":"v1","status":"Failure","message":"nope","code":500}',
      }),
      /items|Status|nope|list/i,
    );
  });

  it('invalid UTF-8 inside a string: decoded with replacement characters (as Go does) or refused, never a crash', async () => {
    const bytes = Buffer.concat([
      Buffer.from(
        '{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[{"metadata":{"name":"a","namespace":"x","resourceVersion":"1"},"data":{"k":"',
      ),
      Buffer.from([0xc3, 0x28, 0xff, 0xfe]),
      Buffer.from('"}}]}'),
    ]);
    const r = await listWith({ rawBase64: bytes.toString('base64') });
    if (r.ok) {
      const value = (r.value as { items: Array<{ data: { k: string } }> }).items[0]?.data.k ?? '';
      expect(value).toContain('\ufffd');
    } else expectTypedError(r, /UTF|JSON|decode/i);
  });

  it('a get whose object has no metadata', async () => {
    const ns = await ctx.namespace('hostile');
    ctx.server.faults.failRequests({
      match: { verb: 'get', namespace: ns },
      status: 200,
      body: { raw: '{"kind":"ConfigMap","apiVersion":"v1"}' },
      times: 1,
    });
    const r = await outcome(ctx.api.get(ConfigMap, { namespace: ns, name: 'x' }));
    // Accepting it is what client-go does (metadata is optional on the wire); a typed error is fine too.
    if (!r.ok) expectTypedError(r, /metadata|object/i);
  });

  it('a watch line that is not JSON ends the watch with a WatchDecodeError', async () => {
    const ns = await ctx.namespace('hostile');
    await ctx.api.create(ConfigMap, { metadata: { namespace: ns, name: 'a' } });
    ctx.server.faults.shapeWatch({
      match: { verb: 'watch', namespace: ns },
      times: 1,
      steps: [{ op: 'pass' }, { op: 'raw', data: '{"type":"ADDED","object":\u0000}\n', after: 'end' }],
    });
    const seen: string[] = [];
    const r = await outcome(
      (async () => {
        for await (const e of ctx.api.watch(ConfigMap, { namespace: ns })) seen.push(e.type);
      })(),
    );
    expect(seen).toEqual(['ADDED']);
    expectTypedError(r, /JSON|decode|watch/i);
  });

  // client-go's streaming decoder refuses one object larger than its limit (apimachinery streaming
  // ErrObjectTooLarge, 16 MiB); so does ours (maxWatchEventBytes, default 16 MiB).
  it('a 17 MB watch line is refused with a typed error instead of being buffered whole', async () => {
    const ns = await ctx.namespace('hostile');
    const line = `{"type":"ADDED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big","namespace":"${ns}","resourceVersion":"1"},"data":{"k":"${'x'.repeat(17 * 1024 * 1024)}"}}}\n`;
    ctx.server.faults.shapeWatch({
      match: { verb: 'watch', namespace: ns },
      times: 1,
      steps: [{ op: 'raw', data: line, after: 'end' }],
    });
    const r = await outcome(
      (async () => {
        for await (const _ of ctx.api.watch(ConfigMap, { namespace: ns })) {
          // drain
        }
      })(),
    );
    expectTypedError(r, /too large|size|limit/i);
  });
});
